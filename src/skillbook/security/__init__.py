"""skillbook's security scanner: what a skill contains, checked before anything runs.

    from skillbook.security.scanner import scan_path
    report = scan_path(Path("skills/weather"))
    if report.blocking(): ...

A part above the pipeline: it may read skills, the pipeline never imports it. Modules:
``findings`` (result types), ``catalog`` (rule ids and fixes), ``document`` (a text
file's layout), ``rules_*`` (rule families), ``context`` (demotion), ``walk``
(bounded file listing), ``keywords`` (the one-pass keyword prefilter), ``rules_version``
(the rule set's name, below the cache and the scanner), ``patterns`` (the rules' compiled
patterns, kept between processes), ``lookalike_table`` (letters that pass for Latin
ones), ``cache`` (results by content hash), ``scanner`` (one
folder), ``batch`` (many folders, loaded skills), ``sarif`` and ``report`` (output). This
``__init__`` holds the package's exception, and imports nothing else.
"""

from __future__ import annotations

from skillbook.errors import SkillbookError


class ScanTargetError(SkillbookError, FileNotFoundError):
    """The path to scan does not exist (a caller mistake, not a finding)."""
