"""Which file makes a folder a skill, and which folder of an unpacked archive is the
skill (clawhub-api.md §6.2).

Input: the folder an archive was unpacked into. Output: the skill's root folder, or a
``registry.archive-layout`` :class:`~skillbook.distribution.registry.RegistryError` with
OpenClaw's message. The rules, as OpenClaw's ``resolvePackedRootDir``: a top-level
``package/`` folder; else the folder itself when it holds a root marker; else its
only top-level folder (``unexpected archive layout (dirs: a, b)`` when there are
none or several). The root must hold ``SKILL.md`` (or ``skill.md``, ``skills.md``,
``SKILL.MD``, the markers of OpenClaw 2026.9; 2026.4 accepts ``SKILL.md`` at the top
only, so a flat archive with ``skill.md`` installs here and fails there). The registry
server and the publisher name a version's skill file by the same markers
(:func:`skill_file_of`, over a list of paths).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from skillbook.distribution.registry import RegistryError

__all__ = ["ROOT_MARKERS", "find_marker", "find_skill_root", "skill_file_of"]

#: Root files that make a folder a skill, in order of preference (the clawhub CLI
#: requires one of these at publish).
ROOT_MARKERS: Final = ("SKILL.md", "skill.md", "skills.md", "SKILL.MD")


def _is_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def find_marker(folder: Path) -> str | None:
    """The first root marker that is a regular file in ``folder`` (never a link)."""
    try:
        names = set(os.listdir(folder))
    except OSError:
        return None
    for marker in ROOT_MARKERS:
        if marker in names and stat.S_ISREG(os.lstat(folder / marker).st_mode):
            return marker
    return None


def find_skill_root(
    extracted: Path, *, missing: str = "downloaded archive is missing SKILL.md"
) -> Path:
    """The skill folder inside ``extracted`` (see the module docstring)."""
    package = extracted / "package"
    if _is_dir(package):
        root = package
    elif find_marker(extracted) is not None:
        root = extracted
    else:
        dirs = sorted(n for n in os.listdir(extracted) if _is_dir(extracted / n))
        if len(dirs) != 1:
            raise RegistryError(
                "registry.archive-layout", f"unexpected archive layout (dirs: {', '.join(dirs)})"
            )
        root = extracted / dirs[0]
    if find_marker(root) is None:
        raise RegistryError("registry.archive-layout", missing)
    return root


def skill_file_of(paths: Iterable[str]) -> str | None:
    """The root skill file among a version's ``paths`` (``SKILL.md`` first; then any
    spelling of ``skill.md`` or ``skills.md``), or None."""
    present = {p for p in paths if "/" not in p}
    for name in ROOT_MARKERS:
        if name in present:
            return name
    lowered = {p.lower(): p for p in present}
    return lowered.get("skill.md") or lowered.get("skills.md")
