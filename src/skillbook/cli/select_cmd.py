"""``skillbook select "request"``: which skills fit a request, with each backend's share."""

from __future__ import annotations

import os
from typing import Any

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
@click.option(
    "--include-ineligible",
    is_flag=True,
    help="Rank every loaded skill, ready or not (those not ready are marked, with why).",
)
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
    and which skills pass the threshold (what the model would be shown).

    Skills are ranked over those eligible on this host. A skill that is loaded but
    not eligible (a binary not on PATH, an environment variable or config path not
    set, another OS, disabled, filtered) and that would have been selected is listed
    under "Matching but not eligible" with the gate's reasons. --include-ineligible
    ranks every loaded skill and marks those that are not eligible.
    """
    from skillbook.selection.eligibility import matching_ineligible, not_eligible

    book = obj.book()
    why = not_eligible(book)
    blocked: list[tuple[float, Any]] = []
    try:
        from skillbook.selection.options import selector_for

        selector, problems = selector_for(
            book,
            env=os.environ,
            skills=book.skills if include_ineligible else None,
            backend=backend,
        )
        selection = selector.select(request, top_k=top)
        limit = top or selector.settings.top_k
        if include_ineligible:
            blocked = matching_ineligible(selection, book.eligible, why, top_k=limit)
        elif why:
            # The same request over every loaded skill (the models are shared, not
            # loaded again): what would have been chosen had this host run it all.
            everyone, _ = selector_for(
                book,
                env=os.environ,
                skills=book.skills,
                backend=backend,
                embedders=selector.embedders,
            )
            wide = everyone.select(request, top_k=top)
            blocked = matching_ineligible(wide, book.eligible, why, top_k=limit)
    except (SkillbookError, ImportError) as exc:
        fail(str(exc))
    shown = max(top or selector.settings.top_k, 10)
    diagnostics = [*problems, *selector.diagnostics]
    if as_json:
        out = selection.to_json(top=shown)
        if include_ineligible:
            # Only eligible skills reach the model: "selected" says what it would see.
            out["selected"] = [n for n in out["selected"] if n not in why]
            for entry in out["ranked"]:
                entry["eligible"] = entry["name"] not in why
        out["ineligible"] = [{**w.to_json(), "score": round(score, 4)} for score, w in blocked]
        out["channels"] = list(selector.channels)
        out["diagnostics"] = [d.to_dict() for d in diagnostics]
        emit_json(out)
        return
    lines = [
        f"Request: {request}",
        f"Backend: {selection.backend} ({', '.join(selector.channels)}); threshold {selection.threshold:.2f}",
    ]
    chosen = [n for n in selection.names() if not (include_ineligible and n in why)]
    if chosen:
        lines.append("Selected: " + ", ".join(chosen))
    elif blocked:
        lines.append("Selected: none eligible (see below)")
    else:
        lines.append("Selected: none (no skill reaches the threshold)")
    lines.append("")
    for c in selection.ranked[:shown]:
        mark = "*" if c.name in chosen else " "
        parts = "  ".join(f"{k}={v:.3f}" for k, v in c.parts.items() if not k.endswith("Squashed"))
        extra = f"  triggers: {', '.join(c.triggers)}" if c.triggers else ""
        if include_ineligible and c.name in why:
            extra += f"  [not eligible: {why[c.name].status}]"
        lines.append(f"{mark}{c.rank:>3}. {c.name}  score={c.score:.3f}  {parts}{extra}")
    if selection.vetoed:
        lines.append("Vetoed by a trigger hint: " + ", ".join(selection.vetoed))
    if blocked:
        lines.append("")
        lines.append("Matching but not eligible on this host (the model is not shown them):")
        for score, w in blocked:
            lines.append(f"  {w.name}  score={score:.3f}  {w.status}: {'; '.join(w.reasons)}")
    lines.extend(d.format() for d in diagnostics)
    emit_lines(lines)
