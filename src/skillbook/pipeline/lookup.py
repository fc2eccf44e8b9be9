"""Finding a skill by what a person types: its name, skill key or folder name.

Input: status entries (:class:`~skillbook.pipeline.gating.status.StatusEntry`) and a typed name.
Output: the entry, or the closest skill names to suggest. Exact matches win in this
order: name, skill key (``metadata.openclaw.skillKey``), folder name (the folder that
holds ``SKILL.md``, for skills whose ``name`` differs from it).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Final

from skillbook.pipeline.gating.status import StatusEntry

__all__ = ["MAX_SUGGESTIONS", "find_entry", "suggest_names"]

#: At most this many "did you mean" names.
MAX_SUGGESTIONS: Final = 3
_CUTOFF: Final = 0.6


def find_entry(entries: Sequence[StatusEntry], typed: str) -> StatusEntry | None:
    """The entry whose name, else skill key, else folder name is ``typed``."""
    for entry in entries:
        if entry.name == typed:
            return entry
    for entry in entries:
        if entry.skill_key == typed:
            return entry
    for entry in entries:
        if entry.base_dir.name == typed:
            return entry
    return None


def suggest_names(entries: Sequence[StatusEntry], typed: str) -> list[str]:
    """Skill names close to ``typed`` (by name, key or folder name, case-insensitive)."""
    wanted = typed.strip().lower()
    if not wanted:
        return []
    by_word: dict[str, str] = {}
    for entry in entries:
        for word in (entry.name, entry.skill_key, entry.base_dir.name):
            by_word.setdefault(word.lower(), entry.name)
    found: list[str] = []
    # Same letters in another case, then prefixes, then near spellings.
    ranked = [w for w in by_word if w == wanted]
    ranked += sorted(w for w in by_word if w.startswith(wanted) and w != wanted)
    ranked += difflib.get_close_matches(wanted, list(by_word), n=MAX_SUGGESTIONS, cutoff=_CUTOFF)
    for word in ranked:
        name = by_word[word]
        if name not in found:
            found.append(name)
    return found[:MAX_SUGGESTIONS]
