"""``skillbook validate PATH...``: lint skills the way the loader finds them.

Input: paths (skill folders, ``SKILL.md`` files, skills roots, repositories), the mode
(``--mode``, else the global ``--mode``/``skills.load.mode``, else ``openclaw``) and
``skills.load.grouped`` from the config. Output: one line per skill, its findings
(repeats in one file collapsed, with their line numbers), the SKILL.md files the
loader would not read and why, and a summary naming the modes that would accept the
failing skills. Exit 0 when every skill passes, 1 when one has an error, 2 when a
path does not exist.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import click

from skillbook.cli.context import (
    ERR_PATH,
    EXIT_FINDINGS,
    EXIT_OK,
    MODES,
    Context,
    emit_json,
    emit_lines,
    fail,
)
from skillbook.cli.render import clean, collapse, where
from skillbook.config.mode import Mode
from skillbook.diagnostics import Diagnostic
from skillbook.pipeline.validation.validate import ValidationReport, ValidationResult, validate_tree


@click.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path(), metavar="PATH...")
@click.option(
    "--mode",
    "mode_opt",
    type=click.Choice(MODES),
    default=None,
    help="Rules to apply (default: the global mode: skills.load.mode, else openclaw).",
)
@click.option("--json", "as_json", is_flag=True, help="Print results as JSON.")
@click.pass_obj
def validate_cmd(obj: Context, paths: tuple[str, ...], mode_opt: str | None, as_json: bool) -> None:
    """Check skills as the loader finds them under each PATH; exit 1 if any has errors.

    PATH may be a skill folder, a SKILL.md, a folder of skill folders or a repository
    with a skills/ folder. Every SKILL.md below it is validated or listed with the
    reason the loader does not read it.
    """
    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        fail(f"no such file or folder: {missing[0]}", error=ERR_PATH)
    settings = obj.settings()
    mode = Mode.of(mode_opt or settings.mode)
    grouped = bool(settings.config.skills.load.grouped)
    report = validate_tree([Path(p) for p in paths], mode, grouped=grouped)
    if as_json:
        emit_json(report.to_json())
    else:
        emit_lines(report_lines(report))
    sys.exit(EXIT_OK if report.ok else EXIT_FINDINGS)


def finding_lines(diags: Sequence[Diagnostic]) -> list[str]:
    """``path:3,7: severity [code] message``, one line per distinct finding."""
    out = []
    for d, lines in collapse(diags):
        path = str(d.path) if d.path is not None else None
        out.append(clean(f"{where(path, lines)}{d.severity} [{d.code}] {d.message}"))
    return out


def report_lines(report: ValidationReport) -> list[str]:
    lines: list[str] = []
    for r in report.results:
        mark = "✓" if r.ok else "✗"
        lines.append(clean(f"{mark} {r.path}" + (f" ({r.name})" if r.name else "")))
        lines.extend(f"    {line}" for line in finding_lines(r.diagnostics))
    if report.not_discovered:
        count = len(report.not_discovered)
        lines += ["", f"Not read by the loader ({count} SKILL.md file{'s' if count != 1 else ''}):"]
        lines += [
            clean(f"  {d.path}: {d.message.removeprefix('not a skill for the loader: ')}")
            for d in report.not_discovered
        ]
    bad = [r for r in report.results if not r.ok]
    lines += [
        "",
        f"{len(report.results) - len(bad)} valid, {len(bad)} invalid ({report.mode} mode)",
    ]
    lines += _mode_hints(bad)
    return lines


def _mode_hints(bad: Sequence[ValidationResult]) -> list[str]:
    """Which other modes accept the failing skills, grouped by the modes that do."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for r in bad:
        groups.setdefault(r.passes_in, []).append(r.name or str(r.path))
    out = []
    for modes, names in groups.items():
        if not modes:
            out.append(f"  fails in every mode: {', '.join(names)}")
            continue
        also = f" (also {', '.join(modes[1:])})" if len(modes) > 1 else ""
        out.append(f"  would pass with --mode {modes[0]}{also}: {', '.join(names)}")
    return [clean(line) for line in out]
