"""Whose is a skill: may promoting a refine draft edit its files?

Input: a skill's ``SKILL.md`` path and its discovery source label. Output:
:class:`Ownership`: where it lives (``workspace``, ``learned``, ``project``,
``personal``, ``managed``, ``extra``, ``bundled``, ``remote``), whether an installer put
it there, and so whether the user owns it.

The user owns a skill of the workspace, the project's or personal ``.agents/skills``
or the managed folder, when no installer recorded it and its ``SKILL.md`` is
writable and not a symbolic link. An installed skill is one with an ``origin.json`` (``.clawhub/``, the legacy
``.clawdhub/``, or skillbook's ``.skillbook/`` for git, folder and archive installs) or
one listed in a ``skills-lock.json`` (the ``skills`` CLI's lock) of a folder above it,
or above the real folder a linked one points to.
Bundled skills, plugin and ``extraDirs`` skills (``openclaw-extra``) and remote ones are
never the user's to edit: an update or a reinstall would undo the edit, or another
program owns them.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from skillbook.distribution.agents.lock import LOCK_FILE as AGENTS_LOCK_FILE
from skillbook.distribution.registry.lockfile import CLAWHUB_DIR, LEGACY_DIR, SKILLBOOK_DIR
from skillbook.model import Source
from skillbook.pipeline.discovery.learned import LEARNED_DIRNAME

__all__ = ["Ownership", "ownership"]

_WHERE: Final = {
    Source.WORKSPACE.value: "workspace",
    Source.PROJECT.value: "project",
    Source.PERSONAL.value: "personal",
    Source.MANAGED.value: "managed",
    Source.EXTRA.value: "extra",
    Source.BUNDLED.value: "bundled",
    Source.REMOTE.value: "remote",
}
_EDITABLE: Final = frozenset({"workspace", "learned", "project", "personal", "managed"})
#: How many folders above a skill a ``skills-lock.json`` may list it from
#: (``<project>/.agents/skills/<name>``: three).
_LOCK_LEVELS: Final = 3


@dataclass(frozen=True, slots=True)
class Ownership:
    where: str
    #: What installed it (``clawhub registry (origin.json)`` …), or None.
    installed: str | None
    owned: bool
    #: Why it is not owned, for messages ("" when owned).
    why: str = ""

    def describe(self) -> str:
        """``workspace``, ``bundled``, ``managed, installed by the clawhub registry`` …"""
        return self.where + (f", installed ({self.installed})" if self.installed else "")


def ownership(skill_file: Path, source: str, name: str = "") -> Ownership:
    """Whose the skill at ``skill_file`` is (module docstring)."""
    folder = skill_file.parent
    where = _WHERE.get(source, source or "unknown")
    if where == "workspace" and folder.parent.name == LEARNED_DIRNAME:
        where = "learned"
    installed = _installer(folder, name or folder.name)
    real = Path(os.path.realpath(folder))
    if installed is None and real != folder:
        # The skills CLI links agents' folders to one real copy: its lock is beside that.
        installed = _installer(real, name or real.name)
    if installed is not None:
        return Ownership(where, installed, False, f"it was installed ({installed})")
    if where not in _EDITABLE:
        return Ownership(where, None, False, f"it is a {where} skill")
    if skill_file.is_symlink():
        # Replacing it by a rename would cut the link; writing through it would change
        # a file elsewhere, which may be someone else's.
        return Ownership(where, None, False, "its SKILL.md is a symbolic link")
    if not os.access(skill_file, os.W_OK) or not os.access(folder, os.W_OK):
        return Ownership(where, None, False, "its files are not writable")
    return Ownership(where, None, True)


def _installer(folder: Path, name: str) -> str | None:
    for tracking, what in (
        (CLAWHUB_DIR, "clawhub registry"),
        (LEGACY_DIR, "clawhub registry"),
        (SKILLBOOK_DIR, "skillbook install"),
    ):
        if (folder / tracking / "origin.json").is_file():
            return f"{what}, {tracking}/origin.json"
    above = folder
    for _ in range(_LOCK_LEVELS):
        above = above.parent
        lock = above / AGENTS_LOCK_FILE
        if lock.is_file() and _listed(lock, {name, folder.name}):
            return f"skills CLI, {lock}"
    return None


def _listed(lock: Path, names: set[str]) -> bool:
    try:
        data = json.loads(lock.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    skills = data.get("skills") if isinstance(data, dict) else None
    return isinstance(skills, dict) and bool(names & set(skills))
