"""``skillbook run``: answer one request with the workspace's skills.

It drives :class:`skillbook.runtime.agent.Agent` over the book the global options
select. A slash command whose skill dispatches to a tool runs without any model;
everything else needs one (:mod:`skillbook.cli.model_options`). Without one, a
model-bound request prints a one-line hint and exits 2. Exit codes
(:data:`RUN_EXIT_CODES`): 0 answered, 1 the dispatched tool failed, 2 could not run (no
model, bad options), 3 the model request failed, 4 the step limit stopped the model,
5 the model asked for commands and none ran (every one refused or declined). A script
must be able to tell "done" from "the model gave up or was stopped".

Commands the model asks ``exec`` to run are asked about on a terminal (with the
command shown, invisible characters escaped) and refused without one, unless the
config's ``skills.exec`` allows them or ``--yes`` is given (:mod:`skillbook.cli.confirm`);
slash commands the user typed are not asked about.

Each request is recorded as a session, and a successful one is drafted as a skill for
review (:mod:`skillbook.cli.learning`; ``--no-learn``, ``--refine/--no-refine``).
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Final

import click

from skillbook.cli.confirm import TerminalConfirm, exec_policy
from skillbook.cli.context import EXIT_FINDINGS, Context, emit_json, fail
from skillbook.cli.learning import Learning, learn_options, lines_of
from skillbook.cli.model_options import build_model, model_options
from skillbook.cli.printing import Printer
from skillbook.cli.render import clean
from skillbook.runtime.agent import Agent

if TYPE_CHECKING:
    from skillbook.runtime.turn import InvokeResult

EXIT_MODEL_ERROR: Final = 3
EXIT_STEP_LIMIT: Final = 4
EXIT_REFUSED: Final = 5

#: ``outcome`` (the ``--json`` key) -> exit code; 2 (could not run) has no outcome.
RUN_EXIT_CODES: Final = {
    "answered": 0,
    "tool-failed": EXIT_FINDINGS,
    "model-error": EXIT_MODEL_ERROR,
    "max-steps": EXIT_STEP_LIMIT,
    "refused": EXIT_REFUSED,
}


def outcome(result: InvokeResult) -> str:
    """How the request ended: ``answered``, ``tool-failed``, ``max-steps`` or ``refused``.

    ``refused``: the model asked for at least one command and none ran, so whatever
    it answered, the task was not done. Some refused and some run is an answer."""
    if result.is_error:
        return "tool-failed"
    turn = result.turn
    if turn is None:
        return "answered"
    if turn.stop == "max-steps":
        return "max-steps"
    if any(r.declined for r in turn.tool_calls) and all(r.declined for r in turn.tool_calls):
        return "refused"
    return "answered"


@click.command("run")
@click.argument("text")
@model_options
@learn_options
@click.option("--json", "as_json", is_flag=True, help="Print the answer and tool calls as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="Do not show tool calls on stderr.")
@click.pass_obj
def run_cmd(
    obj: Context,
    text: str,
    model: str | None,
    base_url: str | None,
    api_key_env: str | None,
    provider: str | None,
    max_steps: int,
    yes: bool,
    confirm: bool | None,
    learn: bool | None,
    refine: bool | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Answer one request with the workspace's skills and print the answer.

    TEXT is a question, or a slash command like "/weather Shanghai". Commands of skills
    with `command-dispatch: tool` run their tool, and skills with
    `metadata.skillbook.commandExec` run their command, directly, with no model.
    The run is recorded (`skillbook sessions`); a successful one becomes a draft skill
    waiting for review (`skillbook drafts`) unless --no-learn.

    Exit codes: 0 answered; 1 a dispatched tool failed; 2 could not run (no model or
    API key, bad options); 3 the model request failed; 4 stopped at --max-steps;
    5 the model's commands were all refused or declined, so none ran.
    """
    from skillbook.runtime import ModelError, ModelNotConfigured

    book = obj.book()
    chat_model, problem = build_model(provider, model, base_url, api_key_env)
    stream = not as_json and sys.stdout.isatty()
    tools_out = None if quiet or as_json else sys.stderr
    printer = Printer(sys.stdout, tools_out, stream_text=stream, color=sys.stderr.isatty())
    policy = exec_policy(book.config, confirm=confirm, yes=yes)
    approve = TerminalConfirm(printer) if sys.stdin.isatty() else None
    learning = Learning(book, learn=learn, refine=refine, model=chat_model)
    agent = Agent(
        book,
        chat_model,
        max_steps=max_steps,
        on_event=printer,
        approve=approve,
        exec_policy=policy,
        recorder=learning.recorder,
    )
    try:
        result = asyncio.run(agent.invoke(text))
    except ModelNotConfigured as exc:
        fail(str(problem or exc), error=(problem or exc).code)
    except ModelError as exc:
        fail(f"model request failed: {exc}", EXIT_MODEL_ERROR, error="model-error")
    turn = result.turn
    ended = outcome(result)
    learned = asyncio.run(learning.learn())
    if as_json:
        inv = result.invocation
        emit_json(
            {
                "text": result.text,
                "dispatched": result.dispatched,
                "isError": result.is_error,
                "command": inv.command.name if inv else None,
                "skill": inv.command.skill_name if inv else None,
                "model": None if result.dispatched or chat_model is None else chat_model.name,
                "steps": turn.steps if turn else 0,
                "stop": turn.stop if turn else None,
                "outcome": ended,
                "toolCalls": [r.to_json() for r in turn.tool_calls]
                if turn
                else ([result.tool_run.to_json()] if result.tool_run else []),
                "session": session.id if (session := learning.finished()) else None,
                "learned": learned.to_json() if learned is not None else None,
            }
        )
    elif stream and turn is not None:
        printer.end_line()
        if turn.note:
            printer.write(f"\n{turn.note}\n")
    else:
        click.echo(clean(result.text))
    if not as_json and not quiet:
        for line in lines_of(learned):
            click.echo(clean(line), err=True)
    if ended == "refused" and not as_json:
        refused = sum(r.declined for r in turn.tool_calls) if turn else 0
        what = (
            "the command the model asked to run did not run"
            if refused == 1
            else f"none of the {refused} commands the model asked to run ran"
        )
        click.echo(f"skillbook: not done: {what} (refused or declined)", err=True)
    code = RUN_EXIT_CODES[ended]
    if code:
        sys.exit(code)
