"""What a scan produces: :class:`Finding` values gathered in a :class:`ScanReport`.

Input: nothing (value types only). Output: frozen, slotted records and their JSON
form. Nothing here reads files or decides what is dangerous; the rule modules do.
"""

from __future__ import annotations

import contextlib
import enum
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any


class Severity(enum.StrEnum):
    """How bad a finding is; only ``critical`` blocks an install by default."""

    CRITICAL = "critical"
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"
    INFO = "info"

    @property
    def rank(self) -> int:
        """4 for critical down to 0 for info, for comparisons."""
        return _RANK[self]

    def at_least(self, other: Severity) -> bool:
        return self.rank >= other.rank

    def lowered(self, steps: int, *, floor: Severity | None = None) -> Severity:
        """This severity ``steps`` levels down, never below ``floor`` (or info)."""
        rank = max(self.rank - steps, 0 if floor is None else floor.rank)
        return _BY_RANK[min(rank, self.rank)]


_RANK = {
    Severity.CRITICAL: 4,
    Severity.HIGH: 3,
    Severity.MEDIUM: 2,
    Severity.LOW: 1,
    Severity.INFO: 0,
}
_BY_RANK = {rank: sev for sev, rank in _RANK.items()}

#: The two rule sets a finding can come from.
RULESET_SKILLBOOK = "skillbook"
RULESET_OPENCLAW = "openclaw"


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing a rule found in one file, with what to do about it."""

    #: Stable rule id, e.g. ``remote-fetch-exec`` or OpenClaw's ``dangerous-exec``.
    rule: str
    #: After context demotion (see ``demoted_from``).
    severity: Severity
    #: Absolute path of the file (or of the skill folder for folder-level findings).
    file: Path
    line: int | None
    message: str
    #: The offending text, secrets masked and invisible characters made visible.
    excerpt: str
    fix: str
    column: int | None = None
    ruleset: str = RULESET_SKILLBOOK
    #: The severity before context lowered it, and why it was lowered.
    demoted_from: Severity | None = None
    demotion: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rule": self.rule,
            "severity": str(self.severity),
            "file": str(self.file),
            "line": self.line,
            "column": self.column,
            "message": self.message,
            "excerpt": self.excerpt,
            "fix": self.fix,
            "ruleset": self.ruleset,
        }
        if self.demoted_from is not None:
            out["demoted_from"] = str(self.demoted_from)
            out["demotion"] = self.demotion
        return out

    def location(self, root: Path | None = None) -> str:
        """``file:line`` relative to ``root`` when the file lies inside it."""
        path = str(self.file)
        if root is not None:
            with contextlib.suppress(ValueError):
                path = str(self.file.relative_to(root)) or "."
        return f"{path}:{self.line}" if self.line else path


@dataclass(frozen=True, slots=True)
class ScanReport:
    """Everything one scan of one folder (usually one skill) found."""

    root: Path
    findings: tuple[Finding, ...]
    files_scanned: int
    #: Files seen but not read as text (binaries, over the size limit, unreadable).
    files_skipped: int = 0
    #: The ``name`` of the skill's SKILL.md, when the root holds one.
    skill_name: str | None = None
    #: Files whose findings came from the cache instead of a fresh scan.
    cache_hits: int = 0
    #: How many files OpenClaw's own scanner would have read (its extensions and limits).
    openclaw_files: int = 0

    def blocking(self) -> tuple[Finding, ...]:
        """The critical findings: what stops an install unless forced."""
        return tuple(f for f in self.findings if f.severity is Severity.CRITICAL)

    def openclaw_findings(self) -> tuple[Finding, ...]:
        """Only OpenClaw's own rules (spec §8.3 step 4), with OpenClaw's severities.

        skillbook re-rates some of them in :attr:`findings`; here they carry the
        severity OpenClaw gives (``critical``, or ``medium`` for its ``warn``).
        """
        out = []
        for f in self.findings:
            if f.ruleset != RULESET_OPENCLAW:
                continue
            if f.demoted_from is not None:
                f = replace(f, severity=f.demoted_from, demoted_from=None, demotion=None)
            out.append(f)
        return tuple(out)

    def worst(self) -> Severity | None:
        """The highest severity found, or ``None`` for a clean scan."""
        if not self.findings:
            return None
        return max((f.severity for f in self.findings), key=lambda s: s.rank)

    def at_least(self, severity: Severity) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity.at_least(severity))

    def counts(self) -> dict[str, int]:
        """Findings per severity, every level present (zeros included)."""
        out = {str(s): 0 for s in Severity}
        for f in self.findings:
            out[str(f.severity)] += 1
        return out
