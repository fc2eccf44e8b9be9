"""A request's words and the trigger phrases found in them.

The one home of trigger matching: the selector (:mod:`skillbook.selection.triggers`
wraps the result in a ``TriggerMatch``) and the numpy-free fast path
(:mod:`skillbook.selection.plain`) both call it, so the two cannot drift. It imports
only ``re``: a fresh ``select`` process reads it without the selection modules.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Final

__all__ = ["contains", "match_phrases", "words"]

_WORD_RE: Final = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> tuple[str, ...]:
    """Lower-case word tokens (Unicode letters and digits)."""
    return tuple(m.group(0) for m in _WORD_RE.finditer(text.casefold()))


def contains(request: Sequence[str], phrase: Sequence[str]) -> bool:
    """Whether ``phrase``'s words occur in ``request`` one after another."""
    n = len(phrase)
    if n == 1:
        return phrase[0] in request
    first = phrase[0]
    return any(
        request[i] == first and tuple(request[i : i + n]) == tuple(phrase)
        for i in range(len(request) - n + 1)
    )


def match_phrases(
    any_: Sequence[Sequence[str]],
    all_: Sequence[Sequence[str]],
    none: Sequence[Sequence[str]],
    request: Sequence[str],
) -> tuple[bool, bool, tuple[str, ...]]:
    """``(boosted, vetoed, reasons)``: boost when an ``any`` phrase or every ``all``
    phrase occurs, veto on a ``none`` phrase; ``reasons`` name what matched."""
    reasons: list[str] = []
    vetoed = False
    for phrase in none:
        if contains(request, phrase):
            vetoed = True
            reasons.append("none:" + " ".join(phrase))
    hit = next((p for p in any_ if contains(request, p)), None)
    if hit is not None:
        reasons.append("any:" + " ".join(hit))
    every = bool(all_) and all(contains(request, p) for p in all_)
    if every:
        reasons.append("all")
    return (hit is not None or every) and not vetoed, vetoed, tuple(reasons)
