"""Which skills the loader finds under a folder, and why it does not read the other SKILL.md files.

Input: a folder given to ``skillbook validate`` (a skill, a skills root, a repository
as ``skills.load.extraDirs`` accepts it), the ``grouped`` setting and whether
standalone ``.md`` files count (``mixed``/``legacy`` modes). Output: a
:class:`Layout`: the skill folders (and files) in the loader's order, and for every
other ``SKILL.md`` below the folder the reason the loader does not read it. The
shape is the loader's (spec §3.3 and :mod:`skillbook.pipeline.discovery.root_scanner`): the nested
``<dir>/skills`` root, a root that is itself a skill, ``<root>/<skill>/SKILL.md``,
grouped ``<root>/<group>/<skill>/SKILL.md``, hidden folders and ``node_modules``
skipped. Limits are not applied: validation looks at everything.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from skillbook.base import fs as _fs
from skillbook.base import listing as _listing
from skillbook.base.js import js_sorted
from skillbook.pipeline.discovery.root_layouts import NESTED_ROOT_NAME
from skillbook.pipeline.discovery.skill_reader import is_standalone_candidate

SKILL_FILE_LOWER = "skill.md"
#: Never walked looking for stray SKILL.md files: version-control internals.
_NOT_WALKED = frozenset({".git", ".hg", ".svn"})


@dataclass(frozen=True, slots=True)
class Layout:
    """What the loader would read under one folder."""

    root: Path
    #: The folder the loader lists: ``root``, or ``root/skills`` (a nested root).
    base: Path
    #: Skill folders and standalone files, in the loader's order.
    skills: tuple[Path, ...]
    #: Every other SKILL.md below ``root``, with the reason the loader skips it.
    skipped: tuple[tuple[Path, str], ...]


def _skill_files(folder: Path) -> list[str]:
    """The names in ``folder`` spelled like ``SKILL.md`` (any case)."""
    try:
        return [n for n in os.listdir(folder) if n.lower() == SKILL_FILE_LOWER]
    except OSError:
        return []


def _child_dirs(folder: Path) -> list[str]:
    return js_sorted(_listing.list_child_dirs(os.fspath(folder)).dirs)


def _nested_base(root: Path) -> Path:
    nested = root / NESTED_ROOT_NAME
    if nested.is_dir() and any(
        _fs.has_file(os.path.join(nested, name, "SKILL.md"))
        for name in _listing.list_child_dirs(os.fspath(nested)).dirs
    ):
        return nested
    return root


def layout(root: Path, *, grouped: bool, standalone: bool) -> Layout:
    """The :class:`Layout` of ``root`` (a folder)."""
    base = _nested_base(root)
    skills: list[Path] = []
    groups: list[Path] = []
    if _skill_files(base):
        skills.append(base)
    else:
        for name in _child_dirs(base):
            child = base / name
            if _skill_files(child):
                skills.append(child)
                continue
            leaves = [child / leaf for leaf in _child_dirs(child) if _skill_files(child / leaf)]
            if leaves:
                groups.append(child)
                if grouped:
                    skills.extend(leaves)
        if standalone:
            md_files = _listing.list_child_dirs(os.fspath(base)).md_files
            skills += [base / n for n in js_sorted(md_files) if is_standalone_candidate(n)]
    covered = {folder / n for folder in skills if folder.is_dir() for n in _skill_files(folder)}
    skipped = [
        (found, _why_skipped(found, root, base, skills, groups, grouped=grouped))
        for found in _walk(root)
        if found not in covered
    ]
    return Layout(root, base, tuple(skills), tuple(skipped))


def _walk(root: Path) -> list[Path]:
    """Every file spelled like SKILL.md below ``root`` (symlinked folders not followed)."""
    found: list[Path] = []
    for folder, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in _NOT_WALKED)
        found += [Path(folder) / n for n in sorted(filenames) if n.lower() == SKILL_FILE_LOWER]
    return found


def _why_skipped(
    found: Path,
    root: Path,
    base: Path,
    skills: list[Path],
    groups: list[Path],
    *,
    grouped: bool,
) -> str:
    folders = found.parent.relative_to(root).parts
    for index, part in enumerate(folders):
        where = root.joinpath(*folders[: index + 1])
        if part.startswith("."):
            return (
                f"it is under the hidden folder {where}, which the loader never searches; "
                "move it out, or add that folder to `skills.load.extraDirs`"
            )
        if part == "node_modules":
            return f"it is under {where}, which the loader never searches"
    if base != root and not found.is_relative_to(base):
        return (
            f"the loader reads the nested root {base} instead of {root} (it holds skill "
            f"folders), so skills directly in {root} are not loaded; move it into {base}"
        )
    owner = next((s for s in skills if s.is_dir() and found.is_relative_to(s)), None)
    if owner is not None:
        return (
            f"it is inside the skill folder {owner}; a skill's sub-folders are its files, not "
            f"skills (OpenClaw reads a direct sub-folder only when {owner}/SKILL.md does not load)"
        )
    if found.parent.parent in groups and not grouped:
        group = found.parent.parent
        return (
            f"it is in the grouped layout {group.name}/{found.parent.name}: loaded only with "
            "`skills.load.grouped: true`, or move it up one level"
        )
    shapes = "<root>/<skill>/SKILL.md"
    if grouped:
        shapes += ", <root>/<group>/<skill>/SKILL.md"
    return f"it is too deep below {base}; the loader reads only {shapes}"
