"""skillbook's security scanner: what a skill contains, checked before anything runs.

    from skillbook.security import scan_path
    report = scan_path(Path("skills/weather"))
    if report.blocking(): ...

A part above the pipeline: it may read skills, the pipeline never imports it. Modules:
``findings`` (result types), ``catalog`` (rule ids and fixes), ``document`` (a text
file's layout), ``keywords`` (the one-pass keyword prefilter), ``rules_*`` (rule
families), ``context`` (demotion), ``walk`` (bounded file listing), ``rules_version``
(the name of the rule set, below both the cache and the scanner), ``cache`` (results
by content hash), ``scanner`` (one folder), ``batch`` (many folders, loaded skills),
``sarif`` and ``report`` (output).
"""

from skillbook.security.batch import SkillScanSummary, find_skill_dirs, scan_paths, scan_skills
from skillbook.security.cache import ScanCache
from skillbook.security.catalog import RULES, RuleInfo
from skillbook.security.findings import Finding, ScanReport, Severity
from skillbook.security.rules_version import rules_version
from skillbook.security.scanner import (
    ScanOptions,
    ScanTargetError,
    analyze,
    scan_path,
)

__all__ = [
    "RULES",
    "Finding",
    "RuleInfo",
    "ScanCache",
    "ScanOptions",
    "ScanReport",
    "ScanTargetError",
    "Severity",
    "SkillScanSummary",
    "analyze",
    "find_skill_dirs",
    "rules_version",
    "scan_path",
    "scan_paths",
    "scan_skills",
]
