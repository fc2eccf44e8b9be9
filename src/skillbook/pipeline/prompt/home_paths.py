"""Catalog locations: which home prefixes become ``~/`` and which paths stay absolute.

Input: skills (or catalog entries) and the home folders. Output: :class:`PromptSkill`
values whose ``location`` is shortened as OpenClaw shortens it (spec §5.4; 2026.9's
``compactPromptSkills`` through :class:`KeptPaths`). Pure except
:func:`home_prefixes`, which resolves symbolic links once at the edge.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from skillbook.model import Skill
from skillbook.pipeline.cache.footprint import real as footprint_real

__all__ = ["KeptPaths", "PromptSkill", "compact_skill_paths", "home_prefixes"]


@dataclass(frozen=True, slots=True)
class PromptSkill:
    """What one catalog entry shows; ``location`` may be a ``~/`` path."""

    name: str
    description: str
    location: str

    @classmethod
    def of(cls, skill: PromptSkill | Skill) -> PromptSkill:
        if isinstance(skill, PromptSkill):
            return skill
        return cls(skill.name, skill.description, str(skill.file_path))


def home_prefixes(home: Path | str | None, os_home: Path | str | None = None) -> tuple[str, ...]:
    """The home prefixes to shorten (§5.4): both homes absolute, plus their realpaths.

    Deduplicated, longest first. This resolves symbolic links, so it reads the disk;
    call it once where the environment is known and pass the result on.
    """
    resolved = [os.path.abspath(os.fspath(h)) for h in (home, os_home) if h]
    real: list[str] = []
    for h in resolved:
        # A home that does not exist has no realpath; OpenClaw skips it too.
        answer = footprint_real(h, strict=True)
        if answer is not None:
            real.append(answer)
    return _order_homes([*resolved, *real])


def _order_homes(homes: Sequence[Path | str]) -> tuple[str, ...]:
    unique = list(dict.fromkeys(os.fspath(h) for h in homes if os.fspath(h)))
    # Longest first so a nested home wins; sorted() is stable like JS sort.
    return tuple(sorted(unique, key=len, reverse=True))


def compact_skill_paths(
    skills: Sequence[PromptSkill | Skill],
    homes: Sequence[Path | str],
    *,
    keep: KeptPaths | None = None,
) -> list[PromptSkill]:
    """Replace a home prefix of each location by ``~/`` (§5.4); same order, same length.

    ``keep`` (2026.9's ``compactPromptSkills``) leaves locations under its roots
    absolute unless they also lie under one of its home roots.
    """
    ordered = _order_homes(homes)
    out: list[PromptSkill] = []
    for item in skills:
        s = PromptSkill.of(item)
        if keep is not None and keep.keeps(s.location):
            out.append(s)
            continue
        for home in ordered:
            prefix = home if home.endswith(os.sep) else home + os.sep
            if s.location.startswith(prefix):
                s = PromptSkill(s.name, s.description, "~/" + s.location[len(prefix) :])
                break
        out.append(s)
    return out


@dataclass(frozen=True, slots=True)
class KeptPaths:
    """Folders whose catalog paths stay absolute (the state dir's ``skills`` and
    ``plugin-skills``, with their real paths) unless under a ``homes`` root (the OS
    home and its real path): OpenClaw 2026.9 keeps them so that a ``~`` that a
    container maps elsewhere cannot hide them."""

    roots: tuple[str, ...]
    homes: tuple[str, ...] = ()

    def keeps(self, location: str) -> bool:
        if not any(_inside(r, location) for r in self.roots):
            return False
        return not any(_inside(h, location) for h in self.homes)


def _inside(root: str, path: str) -> bool:
    rel = os.path.relpath(path, root) if os.path.isabs(path) else ".."
    return rel == "." or not (rel == ".." or rel.startswith(".." + os.sep))
