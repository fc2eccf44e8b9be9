"""``skillbook scan``: the security scanner on skill folders, and its part in ``check``.

Exit codes: 0 nothing at or above ``--fail-on``; 1 findings at or above it;
2 could not run (a path does not exist, the SARIF file cannot be written).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from skillbook.cli.context import (
    ERR_PATH,
    EXIT_ERROR,
    EXIT_FINDINGS,
    EXIT_OK,
    Context,
    emit_json,
    emit_lines,
    fail,
)

if TYPE_CHECKING:
    from skillbook.pipeline.book import SkillBook
    from skillbook.security.findings import ScanReport

LEVELS = ("critical", "high", "medium", "low", "info")


EPILOG = """\b
Examples:
  skillbook scan ~/Downloads/some-skill
      one skill folder, before you install it
  skillbook scan skills/ --fail-on high --sarif scan.sarif
      CI: every skill under skills/, fail on high, SARIF for the dashboard
  skillbook scan --json | jq '.summary'
      the skills loaded for this workspace, as JSON"""


@click.command("scan", epilog=EPILOG)
@click.argument("paths", nargs=-1, type=click.Path(), metavar="[PATH]...")
@click.option("--json", "as_json", is_flag=True, help="Print findings and totals as JSON.")
@click.option(
    "--sarif",
    "sarif_file",
    type=click.Path(dir_okay=False, writable=True),
    help="Also write a SARIF 2.1.0 log to this file ('-' for stdout).",
)
@click.option(
    "--fail-on",
    type=click.Choice(LEVELS),
    default="critical",
    show_default=True,
    help="Exit 1 when a finding has this severity or a higher one.",
)
@click.option(
    "--min-severity",
    type=click.Choice(LEVELS),
    default="low",
    show_default=True,
    help="Text output: hide findings below this severity.",
)
@click.option("--no-cache", is_flag=True, help="Rescan every file (ignore cached results).")
@click.pass_obj
def scan_cmd(
    obj: Context,
    paths: tuple[str, ...],
    as_json: bool,
    sarif_file: str | None,
    fail_on: str,
    min_severity: str,
    no_cache: bool,
) -> None:
    """Scan skills for malicious or risky content before you install or run them.

    PATH may be a skill folder, a folder of skills, a workspace or one file.
    Without PATH, the skills loaded for the current workspace are scanned.
    Critical findings are what `skillbook setup` refuses to run installers for.
    """
    from skillbook.errors import SkillbookError
    from skillbook.security.batch import scan_paths
    from skillbook.security.cache import ScanCache
    from skillbook.security.findings import Severity
    from skillbook.security.report import failed, text_lines, to_json
    from skillbook.security.rules_version import rules_version
    from skillbook.security.scanner import scan_path

    cache = None if no_cache else ScanCache.for_state_dir(obj.settings().paths.state_dir)
    if paths:
        targets = [Path(p) for p in paths]
        notes: list[str] = []
    else:
        book = obj.book()
        local = [s for s in book.skills if s.base_dir.is_dir()]
        targets = [s.base_dir for s in local]
        notes = [f"{s.name}: no local folder ({s.origin or s.source}); not scanned"
                 for s in book.skills if not s.base_dir.is_dir()]  # fmt: skip
    try:
        if paths:
            reports = scan_paths(targets, cache=cache)
        else:
            reports = tuple(scan_path(t, cache=cache) for t in targets)
    except SkillbookError as exc:
        fail(str(exc), error=ERR_PATH)
    level = Severity(fail_on)
    version = rules_version()
    if sarif_file is not None:
        _write_sarif(reports, sarif_file, version)
    if as_json:
        doc = to_json(reports, fail_on=level, version=version)
        if notes:
            doc["notes"] = notes
        if sarif_file != "-":
            emit_json(doc)
    elif sarif_file != "-":
        emit_lines([*text_lines(reports, min_severity=Severity(min_severity)), *notes])
    sys.exit(EXIT_FINDINGS if failed(reports, level) else EXIT_OK)


def _write_sarif(reports: tuple[ScanReport, ...], target: str, version: str) -> None:
    # Here, not at the top: the atomic writer's imports (secrets, ctypes) cost every
    # `scan` process ~10 ms of CPU, and only a SARIF file needs them.
    from skillbook.base.atomic import write_atomic
    from skillbook.security.sarif import to_sarif

    text = json.dumps(to_sarif(reports, version=version), indent=2, ensure_ascii=False) + "\n"
    if target == "-":
        click.echo(text, nl=False)
        return
    try:
        write_atomic(target, text, prefix=f"{Path(target).name}.tmp-", suffix="")
    except OSError as exc:
        fail(f"cannot write SARIF file {target}: {exc.strerror or exc}", EXIT_ERROR, error=ERR_PATH)


# --------------------------------------------------------------------------- skillbook check


def check_section(book: SkillBook) -> tuple[list[str], dict[str, Any]]:
    """The security part of ``skillbook check``: text lines and the JSON value.

    Every loaded skill is scanned (results cached by content in the state dir);
    the text lists skills with medium findings or worse, critical ones first.
    """
    from skillbook.security.batch import scan_skills
    from skillbook.security.cache import ScanCache
    from skillbook.security.findings import Severity

    summaries = scan_skills(book.skills, cache=ScanCache.for_state_dir(book.paths.state_dir))
    flagged = [s for s in summaries if s.worst is not None and s.worst.at_least(Severity.MEDIUM)]
    flagged.sort(key=lambda s: (-(s.worst.rank if s.worst else 0), s.name))
    scanned = [s for s in summaries if s.error is None]
    lines = [
        "",
        f"Security scan ({len(scanned)} skills, {sum(s.files_scanned for s in scanned)} files):",
    ]
    if not flagged:
        lines.append("  ✓ nothing at medium or above")
    for s in flagged:
        counts = ", ".join(f"{s.counts[str(v)]} {v}" for v in Severity
                           if s.counts[str(v)] and v.at_least(Severity.MEDIUM))  # fmt: skip
        top = s.findings[0]
        mark = "⛔" if s.blocking else "⚠"
        lines.append(f"  {mark} {s.name}: {counts} — {top.rule}: {top.message}")
    if any(s.blocking for s in flagged):
        lines.append(
            "  Critical findings block `skillbook setup`; run `skillbook scan` for details."
        )
    data = {
        "skills": [s.to_json() for s in summaries],
        "flagged": [s.name for s in flagged],
        "blocking": [s.name for s in flagged if s.blocking],
    }
    return lines, data
