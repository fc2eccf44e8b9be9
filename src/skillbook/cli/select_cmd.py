"""``skillbook select "request"``: which skills fit a request, with each backend's share."""

from __future__ import annotations

import os
from typing import Any

import click

from skillbook.cli.context import Context, fail
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
    from skillbook.cli.select_output import render, write
    from skillbook.selection.eligibility import matching_ineligible, not_eligible

    book = obj.book()
    why = not_eligible(book)
    blocked: list[tuple[float, Any]] = []
    everyone = None
    try:
        from skillbook.selection.options import selector_for

        selector, problems = selector_for(
            book,
            env=os.environ,
            skills=book.skills if include_ineligible else None,
            backend=backend,
            model_cache=_model_cache(),
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
    diagnostics = [*problems, *selector.diagnostics]
    _offer(selector, everyone, book, why, problems)
    write(
        render(
            request,
            selection,
            channels=selector.channels,
            default_top=selector.settings.top_k,
            top=top,
            why=why,
            blocked=blocked,
            diagnostics=diagnostics,
            include_ineligible=include_ineligible,
            as_json=as_json,
        ),
        obj.color,
    )


def _model_cache() -> Any:
    """Where the multilingual weights are kept uncompressed (beside the saved selectors)."""
    from skillbook.pipeline.cache import result_store
    from skillbook.selection.saved import model_cache

    return model_cache(result_store.results_folder(os.environ))


def _offer(selector: Any, everyone: Any, book: Any, why: dict[str, Any], problems: Any) -> None:
    """Hand the built selectors to the fast path's recorder (skillbook.cli.select_fast),
    when this run is recorded, so the next ``select`` on an unchanged catalog loads them."""
    from skillbook.pipeline.cache import footprint

    fp = footprint.current()
    if fp is None:
        return
    from skillbook.cli.select_output import offer

    offer(selector, everyone, book.eligible, why, problems)
