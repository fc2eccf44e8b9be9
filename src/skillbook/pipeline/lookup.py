"""Finding a skill by what a person types: its name, skill key or folder name.

Input: status entries (:class:`~skillbook.pipeline.gating.status.StatusEntry`) and a typed name.
Output: the entry, or the closest skill names to suggest. Exact matches win in this
order: name, skill key (``metadata.openclaw.skillKey``), folder name (the folder that
holds ``SKILL.md``, for skills whose ``name`` differs from it). For a name that matches
no entry: the diagnostics about a skill of that name or folder (why it was not loaded),
and ``SKILL.md`` files of that folder name outside the skill roots (where an author
put it by mistake): "not found" alone sends them to a list that lacks it.
"""

from __future__ import annotations

import glob
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

from skillbook.base.closest import closest
from skillbook.diagnostics import Diagnostic, Severity
from skillbook.pipeline.gating.status import StatusEntry

__all__ = ["MAX_SUGGESTIONS", "find_entry", "misplaced_skill_files", "not_loaded", "suggest_names"]

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
    by_word: dict[str, str] = {}
    for entry in entries:
        for word in (entry.name, entry.skill_key, entry.base_dir.name):
            by_word.setdefault(word.lower(), entry.name)
    return closest(typed, by_word, most=MAX_SUGGESTIONS, cutoff=_CUTOFF)


def not_loaded(diagnostics: Iterable[Diagnostic], typed: str) -> list[Diagnostic]:
    """The warnings and errors about a skill named ``typed`` or in a folder so named."""
    found = []
    for d in diagnostics:
        if d.severity is Severity.INFO:
            continue
        if d.skill == typed or (d.path is not None and _names_folder(d, typed)):
            found.append(d)
    return found


def _names_folder(d: Diagnostic, typed: str) -> bool:
    path = d.path
    assert path is not None
    if path.name == typed or (path.parent.name == typed and path.name.lower() == "skill.md"):
        return True
    # A group folder's diagnostic names the skill folders it holds (``group/typed``).
    return d.code == "discover.grouped-layout" and f"{path.name}/{typed}" in d.message


def misplaced_skill_files(
    workspace: Path | None, typed: str, roots: Iterable[Path], *, home: Path | None = None
) -> list[Path]:
    """``typed/SKILL.md`` up to two folders below the workspace (``./typed``,
    ``./skill/typed``, ``./.claude/skills/typed``) or in another agent's folder of the
    home (``~/.claude/skills/typed``) but in no skill root: a bounded look, a few
    directory listings, done only after a lookup failed."""
    if not typed or "/" in typed or typed.startswith("."):
        return []
    name = glob.escape(typed)  # `info '*'` must not match every skill
    looks = [(workspace, p) for p in (f"{name}/SKILL.md", f"*/{name}/SKILL.md")]
    looks += [(workspace, f"*/*/{name}/SKILL.md"), (home, f".*/skills/{name}/SKILL.md")]
    inside = [root.resolve() for root in roots]
    found: list[Path] = []
    for base, pattern in looks:
        if base is None:
            continue
        for path in sorted(base.glob(pattern)):
            real = path.resolve()
            if path not in found and not any(real.is_relative_to(root) for root in inside):
                found.append(path)
    return found[:MAX_SUGGESTIONS]
