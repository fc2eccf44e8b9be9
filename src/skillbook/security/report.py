"""Scan reports as JSON and as text lines, for one or many scanned folders.

Input: :class:`ScanReport` values. Output: the ``skillbook scan --json`` document
and the human-readable lines. Rendering only: nothing here scans or decides.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skillbook.security.findings import Finding, ScanReport, Severity

#: Marks per severity in text output.
MARKS = {
    Severity.CRITICAL: "⛔",
    Severity.HIGH: "✗",
    Severity.MEDIUM: "⚠",
    Severity.LOW: "·",
    Severity.INFO: "·",
}


def summary(reports: Sequence[ScanReport], fail_on: Severity | None = None) -> dict[str, Any]:
    """Totals over ``reports``: findings per severity, files, skills, blocking, OpenClaw's."""
    counts = {str(s): 0 for s in Severity}
    openclaw = {str(s): 0 for s in Severity}
    demoted = 0
    for report in reports:
        for f in report.findings:
            counts[str(f.severity)] += 1
            demoted += f.demoted_from is not None and f.ruleset == "skillbook"
        for f in report.openclaw_findings():
            openclaw[str(f.severity)] += 1
    out: dict[str, Any] = {
        **counts,
        "skills": len(reports),
        "files_scanned": sum(r.files_scanned for r in reports),
        "files_skipped": sum(r.files_skipped for r in reports),
        "cache_hits": sum(r.cache_hits for r in reports),
        "demoted": demoted,
        "blocking": sum(len(r.blocking()) for r in reports),
        "blocked_skills": sum(bool(r.blocking()) for r in reports),
        "openclaw": {
            "files_scanned": sum(r.openclaw_files for r in reports),
            "critical": openclaw["critical"],
            "warn": openclaw["medium"],
            "blocked_skills": sum(
                any(f.severity is Severity.CRITICAL for f in r.openclaw_findings()) for r in reports
            ),
        },
    }
    if fail_on is not None:
        out["fail_on"] = str(fail_on)
        out["failed"] = failed(reports, fail_on)
    return out


def failed(reports: Sequence[ScanReport], fail_on: Severity) -> bool:
    return any(f.severity.at_least(fail_on) for r in reports for f in r.findings)


def to_json(
    reports: Sequence[ScanReport], *, fail_on: Severity | None = None, version: str = ""
) -> dict[str, Any]:
    """The ``--json`` document: every finding (with its skill folder) and the totals."""
    findings = []
    for report in reports:
        for f in report.findings:
            findings.append({**f.to_json(), "skill": str(report.root)})
    return {
        "scanner": {"name": "skillbook", "rules": version},
        "findings": findings,
        "summary": summary(reports, fail_on),
        "skills": [
            {
                "root": str(r.root),
                "name": r.skill_name,
                "files_scanned": r.files_scanned,
                "files_skipped": r.files_skipped,
                "counts": r.counts(),
                "worst": None if r.worst() is None else str(r.worst()),
                "blocking": len(r.blocking()),
            }
            for r in reports
        ],
    }


def _display(path: Path) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("..") else rel


def _order(f: Finding) -> tuple[int, str, int]:
    return (-f.severity.rank, str(f.file), f.line or 0)


def text_lines(
    reports: Sequence[ScanReport], *, min_severity: Severity = Severity.LOW, fixes: bool = True
) -> list[str]:
    """One block per skill with findings at ``min_severity`` or above, then a total line."""
    lines: list[str] = []
    clean = 0
    for report in reports:
        shown = sorted(report.at_least(min_severity), key=_order)
        if not shown:
            clean += 1
            continue
        name = f" ({report.skill_name})" if report.skill_name else ""
        counts = report.counts()
        tally = ", ".join(
            f"{counts[str(s)]} {s}" for s in Severity if counts[str(s)] and s.at_least(min_severity)
        )
        lines.append(f"{_display(report.root)}{name}: {tally}")
        for f in shown:
            where = f.location(report.root if report.root.is_dir() else report.root.parent)
            demoted = f" (demoted from {f.demoted_from}: {f.demotion})" if f.demoted_from else ""
            lines.append(
                f"  {MARKS[f.severity]} {f.severity} [{f.rule}] {where}: {f.message}{demoted}"
            )
            if f.excerpt:
                lines.append(f"      {f.excerpt}")
            if fixes and f.severity.at_least(Severity.HIGH):
                lines.append(f"      fix: {f.fix}")
        lines.append("")
    total = summary(reports)
    parts = ", ".join(f"{total[str(s)]} {s}" for s in Severity)
    lines.append(
        f"Scanned {total['skills']} folder(s), {total['files_scanned']} file(s): {parts}"
        + (f" ({total['demoted']} demoted by context)" if total["demoted"] else "")
        + (
            f"; {clean} with nothing at {min_severity} or above"
            if clean and len(reports) > 1
            else ""
        )
        + "."
    )
    if total["blocking"]:
        lines.append(
            f"⛔ {total['blocked_skills']} folder(s) have critical findings: "
            "`skillbook setup` refuses to run their installers."
        )
    return lines
