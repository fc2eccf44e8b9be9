"""``skillbook eval select|trigger``: how often the right skill reaches the model."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from skillbook.cli.context import Context, emit_json, emit_lines, fail
from skillbook.errors import SkillbookError

QUERIES_HELP = (
    'JSON Lines, one request a line: {"id", "query", "expected": [skill names] ([] = no '
    'skill), "kind"?, "split"?, "recent"?}; "id" (unique in the file), "query" and '
    '"expected" are required. Blank lines and lines starting with // are skipped.'
)


#: ``--queries FILE``, shared by both commands.
QUERIES_OPTION = click.option(
    "--queries",
    "queries_path",
    required=True,
    type=click.Path(dir_okay=False, exists=True),
    help=QUERIES_HELP,
)


@click.group("eval")
def eval_cmd() -> None:
    """Evaluate skill selection against labelled requests."""


def _queries(path: str, split: str | None) -> list[Any]:
    from skillbook.selection.evaluate import load_queries

    try:
        queries = load_queries(path)
    except (SkillbookError, OSError) as exc:
        fail(str(exc))
    if split is not None:
        queries = [q for q in queries if q.split == split]
    if not queries:
        fail(f"{path}: no queries" + (f" with split {split!r}" if split else ""))
    return queries


@eval_cmd.command("select")
@QUERIES_OPTION
@click.option(
    "--top",
    "-k",
    type=click.IntRange(1, 100),
    default=None,
    help="How many skills are selected per request (default: skills.selection.topK, else 5).",
)
@click.option("--split", default=None, help="Only the queries whose 'split' is this (e.g. test).")
@click.option(
    "--include-ineligible",
    is_flag=True,
    help="Rank every loaded skill, not only those ready on this host (without it, an "
    "expected skill that is loaded but not eligible is reported with why).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="One result per query plus the metrics, as JSON."
)
@click.pass_obj
def eval_select_cmd(
    obj: Context,
    queries_path: str,
    top: int | None,
    split: str | None,
    include_ineligible: bool,
    as_json: bool,
) -> None:
    """Run labelled requests through the selector over the current workspace.

    Prints recall@1/@3/@5, MRR and the rate of correct abstention, overall, per kind
    and per split, for the configured backend and for BM25 alone (same run), then
    the threshold curve of the configured backend: for each threshold on the fused
    score, the precision and recall of the selected skills and the abstention on
    requests that expect none, to choose skills.selection.minScore from.
    """
    from skillbook.selection.eligibility import not_eligible
    from skillbook.selection.evaluate import evaluate
    from skillbook.selection.options import selector_for

    queries = _queries(queries_path, split)
    book = obj.book()
    why = {} if include_ineligible else not_eligible(book)
    skills = book.skills if include_ineligible else book.eligible
    reports = []
    problems: list[Any] = []
    try:
        configured = book.config.skills.selection.backend or "hybrid"
        for backend in dict.fromkeys([configured, "bm25"]):
            selector, found = selector_for(book, env=os.environ, skills=skills, backend=backend)
            problems.extend(found)
            reports.append(evaluate(selector, queries, top_k=top))
    except (SkillbookError, ImportError) as exc:
        fail(str(exc))
    # An expected skill that is loaded but not eligible is no "not found": say why.
    unknown = [n for n in reports[0].unknown if n not in why]
    blocked = [why[n] for n in reports[0].unknown if n in why]
    needing = {w.name: sum(1 for q in queries if w.name in q.expected) for w in blocked}
    if as_json:
        main, *others = reports
        out = main.to_json()
        out["unknownExpected"] = unknown
        out["ineligibleExpected"] = [{**w.to_json(), "queries": needing[w.name]} for w in blocked]
        out["skills"] = len(skills)
        out["baseline"] = {r.backend: r.to_json(with_results=False) for r in others}
        out["diagnostics"] = [d.to_dict() for d in problems]
        emit_json(out)
        return
    lines = [f"{len(queries)} queries over {len(skills)} skills ({Path(queries_path).name})", ""]
    header = f"{'backend':<10} {'group':<22} {'n':>4} {'r@1':>6} {'r@3':>6} {'r@5':>6} {'MRR':>6} {'abstain':>8}"
    lines.append(header)
    for r in reports:
        groups = [
            ("all", r.overall),
            *((f"kind={k}", m) for k, m in r.by_kind.items()),
            *((f"split={k}", m) for k, m in r.by_split.items()),
        ]
        for name, m in groups:
            lines.append(
                f"{r.backend:<10} {name:<22} {m.queries:>4} {_f(m.recall[1])} {_f(m.recall[3])} "
                f"{_f(m.recall[5])} {_f(m.mrr)} {_f(m.abstention, 8)}"
            )
    main = reports[0]
    lines.append("")
    lines.append(
        f"Threshold curve ({main.backend}, top {main.top_k}; * = applied, skills.selection.minScore):"
    )
    lines.append(f"  {'threshold':>9} {'precision':>9} {'recall':>6} {'abstain':>8}")
    for p in main.curve():
        mark = (
            "*" if main.threshold is not None and abs(p.threshold - main.threshold) < 1e-9 else " "
        )
        lines.append(
            f"{mark} {p.threshold:>9.3f} {_f(p.precision, 9)} {_f(p.recall)} {_f(p.abstention, 8)}"
        )
    if blocked:
        lines.append("")
        lines.append(
            "Expected skills loaded but not eligible on this host (not ranked; "
            "--include-ineligible ranks them):"
        )
        for w in blocked:
            lines.append(
                f"  {w.name} ({needing[w.name]} queries)  {w.status}: {'; '.join(w.reasons)}"
            )
    if unknown:
        from skillbook.pipeline.lookup import suggest_names

        lines.append("")
        lines.append("Expected skills not found (not loaded at all):")
        for name in unknown:
            # A queries file is typed by hand: a misspelt name scores every query that
            # expects it as a miss, and the figures above read as the selector's.
            near = suggest_names(book.status.skills, name)
            hint = f" (did you mean {' or '.join(near)}?)" if near else ""
            lines.append(f"  {name}{hint}")
    lines.extend(d.format() for d in problems)
    emit_lines(lines)


def _f(value: float | None, width: int = 6) -> str:
    return f"{'-':>{width}}" if value is None else f"{value:>{width}.3f}"


@eval_cmd.command("trigger")
@QUERIES_OPTION
@click.option("--split", default=None, help="Only the queries whose 'split' is this.")
@click.option(
    "--mode",
    "modes",
    type=click.Choice(["off", "on"]),
    multiple=True,
    help="Selection modes to compare (default: both).",
)
@click.option(
    "--concurrency",
    "-j",
    type=click.IntRange(1, 64),
    default=4,
    show_default=True,
    help="Requests in flight at once.",
)
@click.option("--yes", "-y", is_flag=True, help="Start without asking after the cost estimate.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Rates per mode and one result per query and mode, as JSON.",
)
@click.option("--model", "-m", help="Model name (default: $SKILLBOOK_MODEL).")
@click.option(
    "--base-url",
    help="Endpoint (default: $SKILLBOOK_BASE_URL, $OPENAI_BASE_URL or $ANTHROPIC_BASE_URL).",
)
@click.option(
    "--provider",
    type=click.Choice(["openai", "anthropic"]),
    help="Wire protocol (default: guessed from the variables set).",
)
@click.option(
    "--api-key-env", metavar="NAME", help="Read the API key from this environment variable."
)
@click.pass_obj
def eval_trigger_cmd(
    obj: Context,
    queries_path: str,
    split: str | None,
    modes: tuple[str, ...],
    concurrency: int,
    yes: bool,
    as_json: bool,
    model: str | None,
    base_url: str | None,
    provider: str | None,
    api_key_env: str | None,
) -> None:
    """One agent turn per request against the configured model: does it read the
    expected skill's SKILL.md? Trigger rate on positives and false-trigger rate on
    no-skill requests, with selection off and on. The agent can read files and
    search skills, never run commands.
    """
    import asyncio

    from skillbook.runtime import ModelNotConfigured
    from skillbook.runtime.providers import model_from_env
    from skillbook.runtime.trigger_eval import MODES, estimate_cost, run_trigger_eval

    queries = _queries(queries_path, split)
    book = obj.book()
    key = None
    if api_key_env:
        key = os.environ.get(api_key_env, "").strip() or fail(
            f"--api-key-env {api_key_env}: not set"
        )
    try:
        chat = model_from_env(
            os.environ, provider=provider, model=model, base_url=base_url, api_key=key
        )
    except ModelNotConfigured as exc:
        fail(str(exc))
    chosen = modes or MODES
    cost = estimate_cost(book, queries, chosen)
    click.echo(
        f"eval trigger: {len(queries)} queries x {len(chosen)} modes = {cost['requests']} agent turns "
        f"(at least {cost['requests']} model requests, about {cost['inputTokens']:,} input tokens "
        "for the first request of each).",
        err=True,
    )
    if not yes:
        if not sys.stdin.isatty():
            fail("pass --yes to start without a terminal to confirm the cost estimate")
        if not click.confirm("Start?", err=True):
            sys.exit(1)
    from rich.progress import Progress

    with Progress(transient=True, console=_stderr_console()) as progress:
        task = progress.add_task("turns", total=cost["requests"])
        try:
            report = asyncio.run(
                run_trigger_eval(
                    book,
                    chat,
                    queries,
                    modes=chosen,
                    concurrency=concurrency,
                    env=os.environ,
                    on_done=lambda _run: progress.advance(task),
                )
            )
        except (SkillbookError, ImportError) as exc:
            fail(str(exc))
    if as_json:
        emit_json(report.to_json())
        return
    lines = [
        f"{'mode':<5} {'queries':>7} {'trigger rate':>13} {'false triggers':>15} {'errors':>7}"
    ]
    for mode in chosen:
        r = report.rates(mode)
        lines.append(
            f"{mode:<5} {r['queries']:>7} {_f(r['triggerRate'], 13)} {_f(r['falseTriggerRate'], 15)} {r['errors']:>7}"
        )
    emit_lines(lines)


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True)
