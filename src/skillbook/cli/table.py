"""The ``skillbook list`` table, drawn with rich (imported only by the CLI)."""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.table import Table

from skillbook.cli import render
from skillbook.status import StatusEntry


#: Short source names for the table; ``--json`` keeps OpenClaw's labels.
SOURCE_SHORT = {
    "openclaw-extra": "extra",
    "openclaw-bundled": "bundled",
    "openclaw-managed": "managed",
    "agents-skills-personal": "personal",
    "agents-skills-project": "project",
    "openclaw-workspace": "workspace",
    "mcp-remote": "remote",
}


def skills_table(entries: Sequence[StatusEntry], *, verbose: bool) -> None:
    console = Console(soft_wrap=False, highlight=False, markup=False, emoji=False)
    # Fixed columns first; the description gets what is left, cut to one line.
    fixed = 16 + 26 + 12 + (24 if verbose else 0)
    desc_width = max(10, console.width - fixed)
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("Status", min_width=13, no_wrap=True)
    table.add_column("Skill", min_width=20, no_wrap=True)
    table.add_column("Description", width=desc_width, no_wrap=True, overflow="ellipsis")
    table.add_column("Source", min_width=9, no_wrap=True)
    if verbose:
        table.add_column("Missing", min_width=20, overflow="fold")
    for e in entries:
        row = [
            render.STATUS_TEXT[e.eligibility.status],
            f"{render.emoji(e)} {render.clean(e.name)}",
            render.clean(e.description),
            SOURCE_SHORT.get(e.source, e.source),
        ]
        if verbose:
            row.append(render.missing_summary(e.eligibility.missing))
        table.add_row(*row)
    console.print(table)
