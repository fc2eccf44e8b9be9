"""Containment of a root's skill folders, and the symlink targets they may point into.

Input: a candidate path, the root it was found in (as configured and as a real path)
and the configured ``skills.load.allowSymlinkTargets``. Output: the candidate's real
path when it lies inside the root or an allowed target (OpenClaw's
``resolveContainedSkillPath`` and ``filterLoadedSkillsInsideRoot``), else None and a
``discover.symlink-escape`` / ``discover.path-escape`` diagnostic. Never reads a file.
The root scanner and its layouts each hold the one :class:`Containment` of a scan.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from skillbook.base import fs as _fs
from skillbook.diagnostics import Diagnostic, warning
from skillbook.model import Skill, Source
from skillbook.pipeline.cache import footprint
from skillbook.pipeline.cache.realpath_memo import RealpathMemo
from skillbook.pipeline.cache.scan_reads import touch


def resolve_symlink_targets(targets: Iterable[Path]) -> tuple[tuple[str, ...], list[Diagnostic]]:
    """``skills.load.allowSymlinkTargets`` as real paths; a missing one is diagnosed."""
    allowed: list[str] = []
    diags: list[Diagnostic] = []
    for target in targets:
        # Recorded for the result cache: which links are followed depends on it.
        real = footprint.real(_fs.abspath(target), strict=True)
        if real is None:
            diags.append(
                warning(
                    "discover.root-missing",
                    f"`skills.load.allowSymlinkTargets` entry {target} does not exist",
                    path=Path(_fs.abspath(target)),
                )
            )
        else:
            allowed.append(real)
    return tuple(allowed), diags


class Containment:
    """The containment checks of one scan: a candidate's real path against its root and
    the allowed symlink targets; an escape is reported through ``diag``."""

    __slots__ = ("allowed", "diag", "memo")

    def __init__(
        self, memo: RealpathMemo, allowed: tuple[str, ...], diag: Callable[..., None]
    ) -> None:
        #: The scan's real-path memo (shared with its reader).
        self.memo = memo
        #: Real paths that symlinked skills may point into, beside their root.
        self.allowed = allowed
        self.diag = diag

    def _escape(self, source: str, root_dir: str, root_real: str, cand: str, real: str) -> None:
        touch(cand)
        link = _fs.is_symlink(cand)
        bundled = source == Source.BUNDLED.value
        stray = " hint=likely-stray-local-symlink-or-checkout-mutation"
        if link:
            hint = "reason=bundled-symlink-escape" + stray if bundled else "reason=symlink-escape"
        else:
            hint = "reason=bundled-root-escape" + stray if bundled else "reason=path-escape"
        resolved = "" if _fs.abspath(root_dir) == root_real else f" rootResolved={root_real}"
        advice = (
            "; to allow it, add its target folder (or a parent) to "
            "`skills.load.allowSymlinkTargets`"
            if link
            else ""
        )
        self.diag(
            warning,
            "discover.symlink-escape" if link else "discover.path-escape",
            "Skipping escaped skill path outside its configured root: "
            f"source={source} root={root_dir}{resolved} {hint} requested={cand} "
            f"resolved={real}{advice}",
            cand,
        )

    def inside(self, root_real: str, real: str) -> bool:
        """``real`` lies in the root or in an allowed symlink target."""
        return _fs.is_path_inside(root_real, real) or any(
            _fs.is_path_inside(a, real) for a in self.allowed
        )

    def contained(
        self, cand: str, *, source: str, root_dir: str, root_real: str, real: str | None = None
    ) -> str | None:
        """``resolveContainedSkillPath``: the real path if inside the root, else None."""
        if real is None:
            real = self.memo.realpath(cand)
        if real is None:
            return None
        if self.inside(root_real, real):
            return real
        self._escape(source, root_dir, root_real, cand, real)
        return None

    def filter_inside(
        self, skills: list[Skill], *, source: str, root_dir: str, root_real: str
    ) -> list[Skill]:
        """``filterLoadedSkillsInsideRoot``: each folder (and so its SKILL.md) inside the root.

        ``real_dir`` is the folder's real path, and its SKILL.md passed the reader's
        no-symlink check, so the file's real path is inside whenever the folder's is.
        """
        kept = []
        for skill in skills:
            real = os.fspath(skill.real_dir) if skill.real_dir is not None else None
            # `contained` needs the folder's own path only to resolve or report it.
            if real is not None and self.inside(root_real, real):
                kept.append(skill)
                continue
            base = os.fspath(skill.base_dir)
            if self.contained(
                base, source=source, root_dir=root_dir, root_real=root_real, real=real
            ):
                kept.append(skill)
        return kept
