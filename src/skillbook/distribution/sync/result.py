"""What a sync did: the skills it copied, where, and what it reports.

Plain frozen values, built by :mod:`skillbook.distribution.sync.workspace`; ``to_json()`` gives the
shape of ``skillbook sync --json``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillbook.diagnostics import Diagnostic
from skillbook.distribution.sync.sandbox import CATALOG_FILE, EnvVar
from skillbook.model import Skill
from skillbook.pipeline.prompt.skills_section import PromptCatalog


@dataclass(frozen=True, slots=True)
class SyncedSkill:
    """One skill that was copied: from ``source_dir`` to ``<target>/skills/<folder>``."""

    name: str
    source: str
    source_dir: Path
    folder: str
    files: int
    bytes: int
    #: Why ``folder`` is not the source folder's name ("" when it is).
    renamed: str = ""
    skill: Skill | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "source": self.source,
            "from": str(self.source_dir),
            "folder": self.folder,
            "files": self.files,
            "bytes": self.bytes,
        }
        if self.renamed:
            out["renamed"] = self.renamed
        return out


@dataclass(frozen=True, slots=True)
class SyncProgress:
    """Reported to ``progress`` after each skill (``stage="skill"``) and after the swap."""

    stage: str
    done: int
    total: int
    name: str | None = None


@dataclass(frozen=True, slots=True)
class SyncResult:
    """What a sync did. ``skipped`` says why nothing was done ("" when it ran)."""

    source: Path
    target: Path
    skills_dir: Path
    synced: tuple[SyncedSkill, ...] = ()
    failed: tuple[str, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    skipped: str = ""
    swap: str = ""
    mount: str | None = None
    catalog: PromptCatalog | None = None
    env: tuple[EnvVar, ...] = ()

    @property
    def ok(self) -> bool:
        """No skill failed."""
        return not self.failed

    @property
    def catalog_path(self) -> Path | None:
        return self.skills_dir / CATALOG_FILE if self.catalog is not None else None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "source": str(self.source),
            "target": str(self.target),
            "skillsDir": str(self.skills_dir),
            "skipped": self.skipped or None,
            "swap": self.swap or None,
            "synced": [s.to_json() for s in self.synced],
            "failed": list(self.failed),
            "env": [v.to_json() for v in self.env],
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }
        if self.catalog is not None:
            out["catalog"] = {
                "mount": self.mount,
                "path": str(self.catalog_path),
                "prompt": self.catalog.text,
                "included": [s.name for s in self.catalog.kept],
                "omitted": [s.name for s in self.catalog.omitted],
            }
        return out
