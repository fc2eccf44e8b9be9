"""The security scan that runs before any installer (spec §8.3 step 4).

Input: the skill's name and folder, and the reason given with ``--dangerously-force``
(or None). Output: a :class:`ScanVerdict`: the findings, OpenClaw's warnings, and
whether the install is blocked, with OpenClaw's block message
``Skill "<name>" installation blocked: dangerous code patterns detected: <message>
(<file>:<line>); …``. Critical findings block unless forced with a reason; a scan
that fails blocks even when forced. The scanner is :func:`skillbook.security.scanner.scan_path`
(skillbook's rules plus OpenClaw's own, with the same rule ids).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from skillbook.security.findings import Finding, ScanReport

__all__ = ["SCAN_COMMAND", "ScanVerdict", "scan_for_install"]

#: What the warnings tell the reader to run for details.
SCAN_COMMAND: Final = "skillbook scan"
# Severity values (skillbook.security.findings.Severity is a StrEnum; compared as strings so the
# scanner is imported only when a scan runs).
_CRITICAL: Final = "critical"
_SUSPICIOUS: Final = frozenset({"high", "medium"})

Scanner = Callable[[Path], "ScanReport"]


@dataclass(frozen=True, slots=True)
class ScanVerdict:
    files_scanned: int
    findings: tuple[Finding, ...]
    #: The block message, or None when the install may go ahead.
    blocked: str | None = None
    #: ``install.scan-blocked`` or ``install.scan-failed`` when blocked.
    code: str | None = None
    warnings: tuple[str, ...] = ()
    #: Critical findings were overridden with ``--dangerously-force``.
    forced: bool = False

    @property
    def critical(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == _CRITICAL)

    def to_json(self) -> dict[str, Any]:
        return {
            "filesScanned": self.files_scanned,
            "blocked": self.blocked,
            "forced": self.forced,
            "findings": [
                {
                    "rule": f.rule,
                    "severity": str(f.severity),
                    "file": str(f.file),
                    "line": f.line,
                    "message": f.message,
                }
                for f in self.findings
            ],
        }


def _details(findings: tuple[Finding, ...]) -> str:
    return "; ".join(
        f"{f.message} ({f.file}:{f.line})" if f.line is not None else f"{f.message} ({f.file})"
        for f in findings
    )


def scan_for_install(
    skill_name: str,
    base_dir: Path,
    *,
    force_reason: str | None = None,
    scanner: Scanner | None = None,
    state_dir: Path | None = None,
) -> ScanVerdict:
    """Scan ``base_dir``; see the module docstring for the verdict.

    With ``state_dir`` the scanner's per-file cache under it is used (``skillbook scan``
    shares it), so a second ``setup`` of an unchanged skill does not rescan its files.
    """
    label = f'Skill "{skill_name}" installation'
    try:
        scan = scanner
        if scan is None:
            from skillbook.security.cache import ScanCache
            from skillbook.security.scanner import scan_path

            cache = ScanCache.for_state_dir(state_dir) if state_dir is not None else None
            report = scan_path(base_dir, cache=cache)
        else:
            report = scan(base_dir)
    except Exception as exc:  # any failure blocks: an unscanned skill never installs
        reason = str(exc) or type(exc).__name__
        return ScanVerdict(
            files_scanned=0,
            findings=(),
            blocked=f"{label} blocked: code safety scan failed ({reason}). "
            f'Run "{SCAN_COMMAND} {base_dir}" for details.',
            code="install.scan-failed",
        )
    findings = tuple(report.findings)
    critical = tuple(report.blocking())
    warnings: list[str] = []
    if critical:
        warnings.append(
            f'WARNING: Skill "{skill_name}" contains dangerous code patterns: {_details(critical)}'
        )
    else:
        count = sum(f.severity in _SUSPICIOUS for f in findings)
        if count:
            warnings.append(
                f'Skill "{skill_name}" has {count} suspicious code pattern(s). '
                f'Run "{SCAN_COMMAND} {base_dir}" for details.'
            )
    if critical and force_reason:
        warnings.append(
            f"WARNING: {label} forced despite dangerous code patterns via "
            f"--dangerously-force: {_details(critical)}"
        )
        return ScanVerdict(report.files_scanned, findings, warnings=tuple(warnings), forced=True)
    if critical:
        return ScanVerdict(
            report.files_scanned,
            findings,
            blocked=f"{label} blocked: dangerous code patterns detected: {_details(critical)}",
            code="install.scan-blocked",
            warnings=tuple(warnings),
        )
    return ScanVerdict(report.files_scanned, findings, warnings=tuple(warnings))
