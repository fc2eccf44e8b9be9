"""``skillbook watch``: print skill changes as they happen (hot reload, spec §7.3-7.4).

Input: the global ``--workspace/--config/--agent/--mode`` options (``ctx.obj``).
Output: the initial count, then for every reload one line per change (``+ name
(source)`` added, ``- name`` removed, ``~ name`` changed) and ``prompt: N skills, M
chars``. Ctrl-C, ``--once`` after the first change, or ``--timeout`` end it with 0.

Registered in :mod:`skillbook.cli.app` with ``cli.add_command(watch_cmd, "watch")``.
"""

from __future__ import annotations

import threading
import time

import click

from skillbook._js import utf16_len
from skillbook.book import Loader, SkillBook
from skillbook.runtime.session import ReloadReport, SkillSession
from skillbook.runtime.snapshot import SkillsChangeEvent, SnapshotVersions


def _loader(obj: object) -> Loader:
    from skillbook.cli.app import Context

    assert isinstance(obj, Context)
    return obj.loader()


def prompt_line(book: SkillBook) -> str:
    return f"prompt: {len(book.catalog.kept)} skills, {utf16_len(book.prompt)} chars"


def change_lines(report: ReloadReport) -> list[str]:
    """``+``/``-``/``~`` lines: added, removed, then changed (content or status)."""
    book = report.book
    lines: list[str] = []
    for name in report.added:
        skill = book.discovery.get(name)
        lines.append(f"+ {name} ({skill.source})" if skill is not None else f"+ {name}")
    lines.extend(f"- {name}" for name in report.removed)
    status = {c.name: f"{c.before} → {c.after}" for c in report.status_changed}
    for name in [*report.changed, *(n for n in status if n not in report.changed)]:
        lines.append(f"~ {name} ({status[name]})" if name in status else f"~ {name}")
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
                lines = change_lines(report)
                for line in lines:
                    click.echo(line)
                click.echo(prompt_line(report.book))
                if once and lines:
                    break
        except KeyboardInterrupt:
            pass
