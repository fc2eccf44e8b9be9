"""``skillbook watch``: print skill changes as they happen (hot reload, spec §7.3-7.4).

Input: the global ``--workspace/--config/--agent/--mode`` options (``ctx.obj``).
Output: the initial count, then for every reload one line per change (``+ name
(source)`` added, ``- name`` removed, ``~ name`` changed), each followed by the new
diagnostics that explain it (a skill gone because its YAML broke shows the parse
error; one that now needs setup shows what is missing), then any other new error or
warning (``! …``) and ``prompt: N skills, M chars``. Ctrl-C, ``--once`` after the
first change, or ``--timeout`` end it with 0.

Registered in :mod:`skillbook.cli.app` with ``cli.add_command(watch_cmd, "watch")``.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import click

from skillbook.base.js import utf16_len
from skillbook.cli.context import emit_lines
from skillbook.cli.render import diag_lines, missing_summary
from skillbook.diagnostics import Diagnostic, Severity
from skillbook.pipeline.book import Loader, SkillBook
from skillbook.pipeline.snapshot import SkillsChangeEvent, SnapshotVersions
from skillbook.runtime.reload_report import ReloadReport
from skillbook.runtime.session import SkillSession

INDENT = "    "


def _loader(obj: object) -> Loader:
    from skillbook.cli.context import Context

    assert isinstance(obj, Context)
    return obj.loader()


def prompt_line(book: SkillBook) -> str:
    return f"prompt: {len(book.catalog.kept)} skills, {utf16_len(book.prompt)} chars"


def _key(d: Diagnostic) -> tuple[object, ...]:
    return (d.code, d.path, d.line, d.message)


def change_lines(report: ReloadReport, previous: SkillBook | None = None) -> list[str]:
    """``+``/``-``/``~`` lines (added, removed, changed), each with what explains it.

    The explanations are the diagnostics that are new since ``previous`` and concern
    the skill's file or folder; other new errors and warnings follow as ``!`` lines.
    """
    book = report.book
    seen = {_key(d) for d in previous.diagnostics} if previous is not None else set()
    fresh = [d for d in book.diagnostics if _key(d) not in seen]
    used: set[tuple[object, ...]] = set()

    def explain(name: str, skill_paths: set[Path]) -> list[str]:
        found = [d for d in fresh if d.path in skill_paths or (d.path is None and d.skill == name)]
        used.update(_key(d) for d in found)
        return [INDENT + line for line in diag_lines(book, found)]

    def where(source: SkillBook | None, name: str) -> set[Path]:
        skill = source.discovery.get(name) if source is not None else None
        return {skill.file_path, skill.base_dir} if skill is not None else set()

    lines: list[str] = []
    for name in report.added:
        skill = book.discovery.get(name)
        lines.append(f"+ {name} ({skill.source})" if skill is not None else f"+ {name}")
        lines += explain(name, where(book, name))
    for name in report.removed:
        lines.append(f"- {name}")
        lines += explain(name, where(previous, name))
    status = {c.name: c for c in report.status_changed}
    for name in [*report.changed, *(n for n in status if n not in report.changed)]:
        change = status.get(name)
        lines.append(f"~ {name} ({change.before} → {change.after})" if change else f"~ {name}")
        lines += explain(name, where(book, name) | where(previous, name))
        entry = next((e for e in book.status.skills if e.name == name), None)
        if change is not None and entry is not None and not entry.eligible:
            missing = missing_summary(entry.eligibility.missing)
            if missing:
                lines.append(f"{INDENT}missing: {missing}")
    rest = [d for d in fresh if _key(d) not in used and d.severity is not Severity.INFO]
    lines += [f"! {line}" for line in diag_lines(book, rest)]
    return lines


@click.command("watch")
@click.option("--once", is_flag=True, help="Exit after the first reload that changed something.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=None,
    metavar="SECONDS",
    help="Exit (with 0) after this many seconds.",
)
@click.pass_obj
def watch_cmd(obj: object, once: bool, timeout: float | None) -> None:
    """Watch the skill folders and print what changes, until Ctrl-C.

    Honours skills.load.watchDebounceMs; runs even when skills.load.watch is false.
    """
    loader = _loader(obj)
    versions = SnapshotVersions()
    bumped = threading.Event()

    def on_bump(_event: SkillsChangeEvent) -> None:
        bumped.set()

    versions.subscribe(on_bump)
    deadline = time.monotonic() + timeout if timeout is not None else None
    # The command is asked to watch: it does so even when the config turns watching off.
    if loader.config.skills.load.watch is False:
        import dataclasses

        cfg = loader.config
        load = dataclasses.replace(cfg.skills.load, watch=True)
        loader.config = dataclasses.replace(cfg, skills=dataclasses.replace(cfg.skills, load=load))
    with SkillSession(loader, versions=versions, watch=True) as session:
        try:
            book = session.current()
            watcher = session.watcher
            if watcher is not None:
                watcher.wait_ready(timeout)
            folders = len(watcher.roots) if watcher is not None else 0
            ready = sum(e.eligible for e in book.status.skills)
            # Printed once the watches are armed: from here on no change is missed.
            count = len(book.skills)
            click.echo(
                f"Watching {count} skill{'' if count == 1 else 's'} ({ready} ready) "
                f"in {folders} folders (Ctrl-C to stop)"
            )
            click.echo(prompt_line(book))
            previous = book
            while True:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    break
                if not bumped.wait(remaining):
                    continue
                bumped.clear()
                report = session.refresh()
                if report is None:
                    continue
                lines = change_lines(report, previous)
                previous = report.book
                if lines:
                    emit_lines(lines)
                click.echo(prompt_line(report.book))
                if once and lines:
                    break
        except KeyboardInterrupt:
            pass
