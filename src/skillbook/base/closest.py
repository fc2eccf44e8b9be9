"""The names a person probably meant by a name that matched none.

One ranking for every "did you mean" over names (skills, agent ids): the same letters
in another case, then the names that start with what was typed, then (for longer
input) the names that hold it, then near spellings. Commands have their own
(:mod:`skillbook.cli.suggest`: a command is never offered its opposite).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

__all__ = ["closest"]


def closest(
    typed: str,
    spellings: Mapping[str, str],
    *,
    most: int,
    cutoff: float,
    within_from: int | None = None,
) -> list[str]:
    """Up to ``most`` names, best first. ``spellings`` maps each lower-case way of
    writing a name (its name, key, folder, display name) to the name; ``within_from``:
    from this many letters on, a spelling that holds ``typed`` counts too (``copilot``
    for ``github-copilot``); ``cutoff`` is difflib's, for near spellings."""
    wanted = typed.strip().lower()
    if not wanted:
        return []
    ranked = [w for w in spellings if w == wanted]
    ranked += sorted(w for w in spellings if w.startswith(wanted) and w != wanted)
    if within_from is not None and len(wanted) >= within_from:
        ranked += [w for w in spellings if wanted in w]
    ranked += difflib.get_close_matches(wanted, list(spellings), n=most, cutoff=cutoff)
    return list(dict.fromkeys(spellings[w] for w in ranked))[:most]
