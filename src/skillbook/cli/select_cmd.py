"""``skillbook select "request"``: which skills fit a request, with each backend's share."""

from __future__ import annotations

import os

import click

from skillbook.cli.context import Context, emit_json, emit_lines, fail
from skillbook.errors import SkillbookError

BACKENDS = ("hybrid", "bm25", "embedding")


@click.command("select")
@click.argument("request")
@click.option(
    "--top",
    "-k",
    type=click.IntRange(1, 100),
    default=None,
    help="How many to select (default: skills.selection.topK, else 5).",
)
@click.option(
    "--backend",
    type=click.Choice(BACKENDS),
    default=None,
    help="Ranking backend (default: skills.selection.backend, else hybrid).",
)
@click.option("--include-ineligible", is_flag=True, help="Rank every loaded skill, ready or not.")
@click.option("--json", "as_json", is_flag=True, help="Print the ranking as JSON.")
@click.pass_obj
def select_cmd(
    obj: Context,
    request: str,
    top: int | None,
    backend: str | None,
    include_ineligible: bool,
    as_json: bool,
) -> None:
    """Rank the skills for REQUEST: scores, what BM25 and each embedding model gave,
    and which skills pass the threshold (what the model would be shown)."""
    book = obj.book()
    try:
        from skillbook.selection.settings import selector_for

        selector, problems = selector_for(
            book,
            env=os.environ,
            skills=book.skills if include_ineligible else None,
            backend=backend,
        )
        selection = selector.select(request, top_k=top)
    except (SkillbookError, ImportError) as exc:
        fail(str(exc))
    shown = max(top or selector.settings.top_k, 10)
    diagnostics = [*problems, *selector.diagnostics]
    if as_json:
        out = selection.to_json(top=shown)
        out["channels"] = list(selector.channels)
        out["diagnostics"] = [d.to_dict() for d in diagnostics]
        emit_json(out)
        return
    lines = [
        f"Request: {request}",
        f"Backend: {selection.backend} ({', '.join(selector.channels)}); threshold {selection.threshold:.2f}",
    ]
    if not selection.selected:
        lines.append("Selected: none (no skill reaches the threshold)")
    else:
        lines.append("Selected: " + ", ".join(selection.names()))
    lines.append("")
    chosen = set(selection.names())
    for c in selection.ranked[:shown]:
        mark = "*" if c.name in chosen else " "
        parts = "  ".join(f"{k}={v:.3f}" for k, v in c.parts.items() if not k.endswith("Squashed"))
        extra = f"  triggers: {', '.join(c.triggers)}" if c.triggers else ""
        lines.append(f"{mark}{c.rank:>3}. {c.name}  score={c.score:.3f}  {parts}{extra}")
    if selection.vetoed:
        lines.append("Vetoed by a trigger hint: " + ", ".join(selection.vetoed))
    lines.extend(d.format() for d in diagnostics)
    emit_lines(lines)
