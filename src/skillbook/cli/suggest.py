"""What to suggest for a mistyped command, never its opposite.

``difflib`` alone finds ``install`` for ``uninstal`` (one letter apart, closer than
``uninstall`` by some measures): a user who meant to delete a skill would be told to
install it. So among commands that undo each other (:data:`OPPOSITES`) only the side the
typed word is nearer to is offered: a word starting with ``un``, ``de`` or ``dis``
never gets the doing side, and when the scores tie neither side is offered. Nothing mistyped ever runs:
the suggestion is only text (click does no prefix matching here).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Final

__all__ = ["OPPOSITES", "suggest"]

#: Pairs of (doing, undoing) spellings, across commands and aliases.
OPPOSITES: Final[tuple[tuple[frozenset[str], frozenset[str]], ...]] = (
    (frozenset({"install"}), frozenset({"uninstall", "remove", "rm"})),
    (frozenset({"pin"}), frozenset({"unpin"})),
    (frozenset({"release"}), frozenset({"hold"})),
    (frozenset({"promote"}), frozenset({"reject"})),
)

CUTOFF: Final = 0.6
#: How much worse than the best a second suggestion may score.
NEAR: Final = 0.1
#: Beginnings that mean "undo": a word with one never gets the doing side.
UNDO_PREFIXES: Final = ("un", "de", "dis")


def _score(typed: str, name: str) -> float:
    return difflib.SequenceMatcher(None, typed, name).ratio()


def suggest(typed: str, names: Iterable[str], *, n: int = 2) -> list[str]:
    """Up to ``n`` of ``names`` close to ``typed``, best first, without opposites."""
    scores = {name: _score(typed, name) for name in set(names) if name != typed}
    close = sorted(
        (name for name, score in scores.items() if score >= CUTOFF),
        key=lambda name: (-scores[name], name),
    )
    dropped: set[str] = set()
    for doing, undoing in OPPOSITES:
        best_doing = max((scores[c] for c in close if c in doing), default=None)
        best_undoing = max((scores[c] for c in close if c in undoing), default=None)
        if typed.startswith(UNDO_PREFIXES):
            # "un…", "de…" ("deinstall") is never a typo of the command it undoes.
            dropped |= doing
        if best_doing is None or best_undoing is None:
            continue
        if best_doing > best_undoing:
            dropped |= undoing
        elif best_undoing > best_doing:
            dropped |= doing
        else:
            dropped |= doing | undoing
    kept = [name for name in close if name not in dropped]
    # A second guess only when nearly as good: "uninstal" is "uninstall", not "unpin".
    return [name for name in kept if scores[name] >= scores[kept[0]] - NEAR][:n]
