"""What a JSON5 text's author is told when it does not parse: the line and column, and
the likely slip behind the json5 package's one complaint ("Unexpected ..."): a comma
missing at a line's end, an unquoted text value, a bracket or quote left open.

Used for config files (:mod:`skillbook.config.file`) and a skill's ``metadata``
(:mod:`skillbook.pipeline.parse.manifest`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

__all__ = ["Json5Problem", "json5_problem"]

_JSON5_AT: Final = re.compile(r"^<string>:(\d+) Unexpected (.+?) at column (\d+)$")
#: A bare word where a value starts: ``enabled: flase``, ``mode: strict``, ``bins: [gh``
#: (after a `,` too: a bare word there that failed is no key).
_BARE_VALUE: Final = re.compile(r"[:\[,]\s*[\w$]*$")
_COMMENT: Final = re.compile(r"(?:^|\s)//.*$|^\s*/?\*.*$")


@dataclass(frozen=True, slots=True)
class Json5Problem:
    """Where the json5 package stopped (1-based), what it did not expect (``"l"``,
    ``end of input``) and the likely slip (``""`` when none stands out)."""

    line: int
    column: int
    unexpected: str
    hint: str

    def brief(self) -> str:
        """``unexpected "l" (a text value needs quotes; …)``."""
        return f"unexpected {self.unexpected}" + (f" ({self.hint})" if self.hint else "")


def json5_problem(message: str, text: str) -> Json5Problem | None:
    """The json5 package's complaint (``<string>:4 Unexpected "e" at column 5``) about
    ``text``, read (None for a message of another shape).

    The package names the text ``<string>`` and says only which character it did not
    expect; the slips behind that are few (a comma missing at a line's end, an
    unquoted text value, an unclosed bracket), and each is named. The offending text is
    never echoed: it may be a secret pasted without quotes."""
    found = _JSON5_AT.match(message)
    if found is None:
        return None
    line, what, column = int(found.group(1)), found.group(2), int(found.group(3))
    lines = text.splitlines()
    here = lines[line - 1] if 0 < line <= len(lines) else ""
    return Json5Problem(line, column, what, _hint(what, here, column, lines[: line - 1]))


def _hint(what: str, here: str, column: int, before: Sequence[str]) -> str:
    if what == "end of input":
        return "a {, [ or quote is left open"
    ahead = here[: column - 1]
    previous = next((t for t in map(_code_of, reversed(before)) if t), "")
    if not ahead.strip() and previous and previous[-1] not in ",{[":
        return f"is a comma missing at the end of line {len(before) - _blank_tail(before)}?"
    # `what` is the character in quotes: `"l"`.
    if what[1:2].isalpha() and _BARE_VALUE.search(ahead):
        return "a text value needs quotes; true, false and null are lowercase"
    return ""


def _code_of(line: str) -> str:
    """The line without a ``//`` comment (one after a blank: ``https://`` stays) or
    a ``/* */`` line, right-stripped."""
    return _COMMENT.sub("", line).rstrip()


def _blank_tail(lines: Sequence[str]) -> int:
    """How many lines without code end ``lines``."""
    count = 0
    for text in reversed(lines):
        if _code_of(text):
            break
        count += 1
    return count
