"""Run text (commands, paths, outputs) inside Markdown code, unable to end it early.

CommonMark ends a code span at a run of backticks as long as the one that opened it,
and a fenced block at a fence line at least as long as its opening fence; a command
holding ```` ``` ```` would otherwise close the draft's code and turn the rest into
Markdown. Nothing here does I/O.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["code_span", "fence_for", "longest_backticks"]

_TICKS: Final = re.compile(r"`+")


def longest_backticks(text: str) -> int:
    return max((len(run) for run in _TICKS.findall(text)), default=0)


def code_span(text: str) -> str:
    """``text`` on one line as an inline code span: one backtick more than its longest run,
    padded with a space when it starts or ends with a backtick."""
    flat = " ".join(text.split())
    ticks = "`" * (longest_backticks(flat) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def fence_for(text: str) -> str:
    """A backtick fence longer than any run of backticks in ``text`` (at least three)."""
    return "`" * max(3, longest_backticks(text) + 1)
