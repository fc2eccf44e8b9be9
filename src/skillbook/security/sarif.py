"""SARIF 2.1.0 output, for code-scanning dashboards (GitHub, GitLab, IDEs).

Input: :class:`ScanReport` values. Output: one SARIF log (a dict ready for
``json.dumps``) with one run: the rule catalog as ``tool.driver.rules`` and one
result per finding, located by file URI, line and column. Severity maps to SARIF
``level`` (critical/high → error, medium → warning, low/info → note) and to
GitHub's numeric ``security-severity``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skillbook.security.catalog import RULES
from skillbook.security.findings import Finding, ScanReport, Severity

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
BASE_ID = "SCANROOT"

LEVELS = {
    Severity.CRITICAL: "error",
    Severity.HIGH: "error",
    Severity.MEDIUM: "warning",
    Severity.LOW: "note",
    Severity.INFO: "note",
}
#: GitHub's bands: critical ≥ 9.0, high 7.0-8.9, medium 4.0-6.9, low 0.1-3.9.
SECURITY_SEVERITY = {
    Severity.CRITICAL: "9.5",
    Severity.HIGH: "8.0",
    Severity.MEDIUM: "5.5",
    Severity.LOW: "3.0",
    Severity.INFO: "0.5",
}


def _rules() -> list[dict[str, Any]]:
    return [
        {
            "id": rule.id,
            "name": "".join(part.title() for part in rule.id.split("-")),
            "shortDescription": {"text": rule.title},
            "fullDescription": {"text": f"{rule.title} ({rule.family}, {rule.ruleset} rules)."},
            "help": {"text": rule.fix},
            "defaultConfiguration": {"level": LEVELS[rule.severity]},
            "properties": {
                "tags": list(dict.fromkeys(["security", rule.family, rule.ruleset])),
                "security-severity": SECURITY_SEVERITY[rule.severity],
            },
        }
        for rule in RULES.values()
    ]


def _uri(path: Path, base: Path) -> tuple[str, str | None]:
    """A relative URI under ``base`` (with the base id), else an absolute file URI."""
    try:
        rel = path.relative_to(base)
    except ValueError:
        return path.as_uri(), None
    return "/".join(rel.parts) or ".", BASE_ID


def _result(f: Finding, index: dict[str, int], base: Path) -> dict[str, Any]:
    uri, base_id = _uri(f.file, base)
    artifact: dict[str, Any] = {"uri": uri}
    if base_id is not None:
        artifact["uriBaseId"] = base_id
    location: dict[str, Any] = {"artifactLocation": artifact}
    if f.line is not None:
        region: dict[str, Any] = {"startLine": f.line}
        if f.column is not None:
            region["startColumn"] = f.column
        if f.excerpt:
            region["snippet"] = {"text": f.excerpt}
        location["region"] = region
    fingerprint = hashlib.sha256(f"{f.rule}\x00{uri}\x00{f.excerpt}".encode()).hexdigest()
    properties: dict[str, Any] = {"severity": str(f.severity), "ruleset": f.ruleset, "fix": f.fix}
    if f.demoted_from is not None:
        properties["demotedFrom"] = str(f.demoted_from)
        properties["demotion"] = f.demotion
    return {
        "ruleId": f.rule,
        "ruleIndex": index[f.rule],
        "level": LEVELS[f.severity],
        "message": {"text": f.message},
        "locations": [{"physicalLocation": location}],
        "partialFingerprints": {"skillbookFinding/v1": fingerprint},
        "properties": properties,
    }


def to_sarif(
    reports: Sequence[ScanReport], *, version: str = "", base: Path | None = None
) -> dict[str, Any]:
    """One SARIF log for ``reports``; paths under ``base`` (default: cwd) are relative."""
    root = Path(os.path.abspath(base if base is not None else Path.cwd()))
    rules = _rules()
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    results = [_result(f, index, root) for r in reports for f in r.findings]
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "skillbook",
                        "semanticVersion": _package_version(),
                        "version": version or _package_version(),
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {BASE_ID: {"uri": root.as_uri().rstrip("/") + "/"}},
                "invocations": [{"executionSuccessful": True}],
                "results": results,
            }
        ],
    }


def _package_version() -> str:
    from skillbook.version import __version__

    return __version__
