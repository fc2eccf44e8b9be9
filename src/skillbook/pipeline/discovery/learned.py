"""Where learned skills live in a workspace: ``skills/auto`` and ``scripts/auto``.

Skills written from successful runs (:mod:`skillbook.experience`) are promoted into
``<workspace>/skills/auto/<timestamp>-<slug>/SKILL.md`` (or ``<timestamp>-<slug>.md`` in
the mixed and legacy modes), with their replay helper in
``<workspace>/scripts/auto/<timestamp>-<slug>.sh``, the layout OpenPocket uses.

Discovery loads ``skills/auto`` as a source of its own, ranked just below the
workspace's hand-written skills (a skill you wrote wins a name over a learned one),
and the workspace root leaves ``auto/`` to it: not a group of skills under 2026.4's
one-level scan, not a folder to search under 2026.9's recursive one (so a learned
skill is loaded once). Nothing here reads or writes files.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from skillbook.model import Source
from skillbook.pipeline.discovery.sources import Precedence, local_precedence

__all__ = [
    "LEARNED_DIRNAME",
    "is_learned_root",
    "is_learned_subdir",
    "learned_precedence",
    "learned_scripts_dir",
    "learned_skills_dir",
]

#: The folder, inside ``<workspace>/skills`` and ``<workspace>/scripts``, of learned skills.
LEARNED_DIRNAME: Final = "auto"


def learned_skills_dir(workspace: Path) -> Path:
    """``<workspace>/skills/auto``: promoted learned skills."""
    return workspace / "skills" / LEARNED_DIRNAME


def learned_scripts_dir(workspace: Path) -> Path:
    """``<workspace>/scripts/auto``: the replay helpers of promoted learned skills."""
    return workspace / "scripts" / LEARNED_DIRNAME


def is_learned_root(path: Path) -> bool:
    """Whether ``path`` is a workspace's ``skills/auto`` (as :func:`learned_skills_dir` makes it)."""
    return path.name == LEARNED_DIRNAME and path.parent.name == "skills"


def is_learned_subdir(source: Source | str, root_dir: str, folder: str) -> bool:
    """Whether ``folder`` is the learned-skills folder inside the workspace root
    ``root_dir`` (``<ws>/skills/auto`` while scanning ``<ws>/skills``): a source of its
    own, which the workspace root skips."""
    return (
        source == Source.WORKSPACE
        and os.path.basename(folder) == LEARNED_DIRNAME
        and not is_learned_root(Path(root_dir))
        and os.path.dirname(folder) == root_dir
    )


def learned_precedence() -> Precedence:
    """Just below the workspace's own skills, above every other local source."""
    workspace = local_precedence(Source.WORKSPACE)
    return Precedence(workspace.tier, workspace.rank - 1)
