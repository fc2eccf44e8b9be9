"""What every published version goes through: the validator and the security scanner.

Input: the version's files as ``(path, bytes)`` and the registry's validate mode.
Output: :class:`CheckResult` — the validation diagnostics (errors refuse the
publish), the scan findings with paths relative to the skill, and whether a
finding at the registry's hold severity (``high`` by default, else ``critical``)
or worse holds the version until an admin releases it. The files are
written to a private temporary folder for the two checks and removed afterwards.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillbook.diagnostics import Diagnostic, Severity
from skillbook.pipeline.validation.validate import validate_path
from skillbook.security.findings import ScanReport
from skillbook.security.findings import Severity as ScanSeverity
from skillbook.security.rules_version import rules_version
from skillbook.security.scanner import scan_path

__all__ = ["CHECK_TEMP_PREFIX", "CheckResult", "check_files", "scan_summary"]

#: The prefix of the temporary folders below; the sweep removes those a crash left.
CHECK_TEMP_PREFIX = "skillbook-hub-"


@dataclass(frozen=True, slots=True)
class CheckResult:
    validation: tuple[Diagnostic, ...]
    scan: dict[str, Any]
    worst: str | None
    held: bool

    @property
    def valid(self) -> bool:
        return not any(d.severity is Severity.ERROR for d in self.validation)

    def validation_json(self) -> list[dict[str, Any]]:
        return [d.to_dict() for d in self.validation]


def _relative(d: Diagnostic, root: Path) -> Diagnostic:
    """``d`` with its path inside the skill (temporary folder names mean nothing)."""
    if d.path is None:
        return d
    try:
        rel = Path(d.path).relative_to(root)
    except ValueError:
        rel = Path(Path(d.path).name)
    return dataclasses.replace(d, path=rel)


def scan_summary(report: ScanReport, root: Path, hold: str = "critical") -> dict[str, Any]:
    """The scan as the registry stores and serves it: relative paths, counts, verdict.

    ``blocking`` counts the critical findings (what blocks an install); ``holding``
    the findings at ``hold`` or worse (what held the version for review).
    """
    findings = []
    for f in report.findings:
        item = f.to_json()
        try:
            item["file"] = f.file.relative_to(root).as_posix() or "."
        except ValueError:
            item["file"] = f.file.name
        findings.append(item)
    return {
        "scanner": "skillbook",
        "rules": rules_version(),
        "filesScanned": report.files_scanned,
        "counts": report.counts(),
        "worst": str(report.worst()) if report.worst() else None,
        "blocking": len(report.blocking()),
        "holdSeverity": hold,
        "holding": len(report.at_least(ScanSeverity(hold))),
        "findings": findings,
    }


def check_files(
    files: Sequence[tuple[str, bytes]], *, slug: str, mode: str, hold: str = "high"
) -> CheckResult:
    """Validate and scan the files of one version (written to a temporary folder).

    The folder is named after the slug: strict mode wants the name to match it.
    """
    with tempfile.TemporaryDirectory(prefix=CHECK_TEMP_PREFIX) as tmp:
        root = Path(tmp) / slug
        root.mkdir(mode=0o700)
        for path, data in files:
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
        validation = [_relative(d, root) for d in validate_path(root, mode=mode).diagnostics]
        report = scan_path(root)
        scan = scan_summary(report, root, hold)
    worst = report.worst()
    return CheckResult(
        validation=tuple(validation),
        scan=json.loads(json.dumps(scan)),
        worst=str(worst) if worst else None,
        held=bool(report.at_least(ScanSeverity(hold))),
    )
