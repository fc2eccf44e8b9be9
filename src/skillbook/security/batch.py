"""Scanning many skills: the skill folders under a path, or the skills a book loaded.

Input: paths (a skill folder, a root of skills, a workspace) or loaded
:class:`~skillbook.model.Skill` values. Output: one :class:`ScanReport` per skill
folder, or one :class:`SkillScanSummary` per skill for ``skillbook check``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillbook.security import ScanTargetError
from skillbook.security.cache import ScanCache
from skillbook.security.findings import Finding, ScanReport, Severity
from skillbook.security.scanner import ScanOptions, scan_path
from skillbook.security.walk import SKIPPED_DIRS

if TYPE_CHECKING:  # a type only: `skillbook scan PATH` loads no catalog model
    from skillbook.model import Skill

#: How deep below a path skill folders are looked for (workspace/skills/<group>/<skill>/…).
MAX_SKILL_DEPTH = 8
#: Folders looked at while searching for skill folders.
MAX_DIRS_SEARCHED = 20_000


def find_skill_dirs(root: Path) -> list[Path]:
    """Every folder under ``root`` holding a ``SKILL.md`` (not looking inside those),
    in path order; ``[root]`` when ``root`` is a skill or holds none."""
    if _has_skill_file(root):
        return [root]
    found: list[Path] = []
    seen: set[str] = set()
    stack: list[tuple[Path, int]] = [(root, 0)]
    visited = 0
    while stack and visited < MAX_DIRS_SEARCHED:
        folder, depth = stack.pop()
        visited += 1
        real = os.path.realpath(folder)
        if real in seen:
            continue
        seen.add(real)
        try:
            with os.scandir(folder) as it:
                children = sorted(
                    (c for c in it if c.name not in SKIPPED_DIRS and _is_dir(c)),
                    key=lambda c: os.fsencode(c.name),
                    reverse=True,
                )
        except OSError:
            continue
        for child in children:
            path = Path(child.path)
            if _has_skill_file(path):
                found.append(path)
            elif depth + 1 < MAX_SKILL_DEPTH:
                stack.append((path, depth + 1))
    found.sort(key=lambda p: os.fsencode(str(p)))
    return found or [root]


def _has_skill_file(folder: Path) -> bool:
    # Path.is_file() raises for a folder it may not search (EACCES): a skills folder
    # holding a link to / or /proc/self stopped the whole scan at /proc/1/fdinfo.
    try:
        return (folder / "SKILL.md").is_file()
    except OSError:
        return False


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def scan_paths(
    paths: Iterable[Path],
    *,
    options: ScanOptions | None = None,
    cache: ScanCache | None = None,
) -> tuple[ScanReport, ...]:
    """One report per skill folder found under each path (a file is scanned alone).

    Raises:
        ScanTargetError: a path does not exist.
    """
    reports: list[ScanReport] = []
    for path in paths:
        if not os.path.lexists(path):
            raise ScanTargetError(f"no such file or folder: {path}")
        targets = find_skill_dirs(Path(path)) if os.path.isdir(path) else [Path(path)]
        reports.extend(scan_path(t, options=options, cache=cache) for t in targets)
    return tuple(reports)


@dataclass(frozen=True, slots=True)
class SkillScanSummary:
    """The scan verdict on one loaded skill, as ``skillbook check`` shows it."""

    name: str
    base_dir: Path
    source: str
    counts: dict[str, int]
    #: The findings at medium or above, worst first.
    findings: tuple[Finding, ...]
    files_scanned: int = 0
    #: Why the skill was not scanned (e.g. a remote skill with no local folder).
    error: str | None = None

    @property
    def blocking(self) -> int:
        return self.counts.get(str(Severity.CRITICAL), 0)

    @property
    def worst(self) -> Severity | None:
        for severity in Severity:
            if self.counts.get(str(severity)):
                return severity
        return None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "baseDir": str(self.base_dir),
            "source": self.source,
            "counts": self.counts,
            "worst": None if self.worst is None else str(self.worst),
            "blocking": self.blocking,
            "filesScanned": self.files_scanned,
            "findings": [f.to_json() for f in self.findings],
        }
        if self.error is not None:
            out["error"] = self.error
        return out


def scan_skills(
    skills: Sequence[Skill],
    *,
    options: ScanOptions | None = None,
    cache: ScanCache | None = None,
) -> tuple[SkillScanSummary, ...]:
    """Scan each skill's folder (cached by content) and summarise it."""
    out: list[SkillScanSummary] = []
    for skill in skills:
        if not skill.base_dir.is_dir():
            out.append(
                SkillScanSummary(
                    name=skill.name,
                    base_dir=skill.base_dir,
                    source=skill.source,
                    counts={str(s): 0 for s in Severity},
                    findings=(),
                    error="no local folder to scan",
                )
            )
            continue
        report = scan_path(skill.base_dir, options=options, cache=cache)
        shown = sorted(report.at_least(Severity.MEDIUM), key=lambda f: -f.severity.rank)
        out.append(
            SkillScanSummary(
                name=skill.name,
                base_dir=skill.base_dir,
                source=skill.source,
                counts=report.counts(),
                findings=tuple(shown),
                files_scanned=report.files_scanned,
            )
        )
    return tuple(out)
