"""The ``skillbook list`` table: status entries in, plain text lines out.

Columns are sized from their content; the description takes what is left of the
terminal width and is cut with ``…``. Nothing is dropped: a narrow terminal gets
lines longer than its width rather than missing columns, and a long ``Missing``
cell wraps onto continuation lines. Widths are terminal cells (an emoji is two),
measured with rich's cell table, which is all this module needs from rich.
"""

from __future__ import annotations

import re
import shutil
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

from rich.cells import cell_len

from skillbook.cli import render
from skillbook.cli.style import to_ascii
from skillbook.pipeline.gating.status import StatusEntry

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
HEADERS = ("Status", "Skill", "Description", "Source", "Missing")
DEFAULT_WIDTH = 80
#: The description is never cut below this many cells, whatever the terminal width.
MIN_DESCRIPTION_WIDTH = 20
#: Wider ``Missing`` cells wrap so that the description keeps some room.
MAX_MISSING_WIDTH = 40
GAP = "   "
ELLIPSIS = "…"

_SPACES = re.compile(r"\s+")


def terminal_width() -> int:
    """``$COLUMNS``, else the terminal's width, else 80 (pipes)."""
    return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns


def truncate(text: str, width: int, *, ellipsis: str = ELLIPSIS) -> str:
    """``text`` cut to ``width`` cells, ending with ``ellipsis`` when something was cut."""
    if cell_len(text) <= width:
        return text
    out, used = [], cell_len(ellipsis)
    for ch in text:
        w = cell_len(ch)
        if used + w > width:
            break
        out.append(ch)
        used += w
    return "".join(out).rstrip() + ellipsis


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - cell_len(text))


def _one_line(text: str) -> str:
    # A `description: |` block holds newlines; a table row must not.
    return _SPACES.sub(" ", render.clean(text)).strip()


def _source_cell(entry: StatusEntry, installed: Mapping[Path, str] | None) -> str:
    """The source, and for an installed skill where it came from (``workspace (clawhub)``)."""
    short = SOURCE_SHORT.get(entry.source, entry.source)
    kind = installed.get(entry.base_dir) if installed else None
    return f"{short} ({kind})" if kind else short


def skills_table(
    entries: Sequence[StatusEntry],
    *,
    verbose: bool,
    width: int | None = None,
    ascii: bool = False,
    installed: Mapping[Path, str] | None = None,
) -> list[str]:
    """The table's lines (header, rule, one or more lines per skill), no trailing spaces.

    ``ascii`` lays the table out in plain ASCII (no emoji, ``...``), so that columns
    still line up where the locale cannot show more.
    """
    total_width = terminal_width() if width is None else width
    plain = to_ascii if ascii else str
    ellipsis, rule = ("...", "-") if ascii else (ELLIPSIS, "─")
    rows = []
    for e in entries:
        rows.append(
            tuple(
                plain(cell)
                for cell in (
                    render.STATUS_TEXT[e.eligibility.status],
                    f"{render.emoji(e)} {_one_line(e.name)}",
                    _one_line(e.description),
                    _source_cell(e, installed),
                    render.missing_summary(e.eligibility.missing),
                )
            )
        )
    shown = [0, 1, 2, 3, 4] if verbose else [0, 1, 2, 3]
    widths = {i: max([cell_len(HEADERS[i]), *(cell_len(r[i]) for r in rows)]) for i in shown}
    if verbose:
        widths[4] = min(widths[4], MAX_MISSING_WIDTH)
    fixed = sum(w for i, w in widths.items() if i != 2) + len(GAP) * (len(shown) - 1)
    widths[2] = min(widths[2], max(MIN_DESCRIPTION_WIDTH, total_width - fixed))

    def line(cells: Sequence[str]) -> str:
        return GAP.join(_pad(c, widths[i]) for i, c in zip(shown, cells, strict=True)).rstrip()

    out = [line([HEADERS[i] for i in shown])]
    out.append(rule * (sum(widths.values()) + len(GAP) * (len(shown) - 1)))
    for row in rows:
        cells = [row[i] for i in shown]
        cells[2] = truncate(cells[2], widths[2], ellipsis=ellipsis)
        if not verbose:
            out.append(line(cells))
            continue
        missing = textwrap.wrap(row[4], widths[4], break_on_hyphens=False) or [""]
        out.append(line([*cells[:4], missing[0]]))
        out.extend(line(["", "", "", "", more]) for more in missing[1:])
    return out
