"""``skillbook commands``: the slash commands of the eligible skills, and how each is answered.

Input: the book the global options select. Output: one line per command (name, skill,
dispatch kind, description), or with ``--channel`` the commands that fit that chat
platform's native menu (:func:`skillbook.pipeline.commands.channels.channel_view`) and a footer saying
what was left out and why; ``--json`` prints ``{channel, commands, omitted, renamed,
diagnostics}``. The dispatch kind is ``tool`` (``command-dispatch: tool``), ``exec``
(the skill's own ``metadata.skillbook.commandExec``) or ``model`` (rewritten for the
model, §6.5).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import click

from skillbook.cli.context import Context, emit_json, emit_lines
from skillbook.cli.render import clean

if TYPE_CHECKING:
    from skillbook.diagnostics import Diagnostic
    from skillbook.model import Skill
    from skillbook.pipeline.commands.channels import Omitted
    from skillbook.pipeline.commands.specs import CommandSet, CommandSpec

CHANNELS: Final = ("telegram", "discord")
HEADERS: Final = ("Command", "Skill", "Runs", "Description")
GAP: Final = "   "


@click.command("commands")
@click.option(
    "--channel",
    type=click.Choice(CHANNELS),
    help="Show the menu that chat platform gets: its limits applied, what was left out and why.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the commands as JSON.")
@click.pass_obj
def commands_cmd(obj: Context, channel: str | None, as_json: bool) -> None:
    """List the slash commands of the ready skills and what each one runs.

    RUNS is `tool` (command-dispatch: tool calls a tool), `exec` (the skill's own
    command, metadata.skillbook.commandExec) or `model` (the request goes to the model).
    """
    from skillbook.pipeline.commands.channels import DISCORD, TELEGRAM, channel_view
    from skillbook.pipeline.commands.dispatch import exec_dispatch_diagnostics

    book = obj.book()
    skills = book.eligible
    command_set = book.commands()
    shown: Sequence[CommandSpec] = command_set.commands
    omitted: Sequence[Omitted] = ()
    diags: list[Diagnostic] = list(command_set.diagnostics)
    limits = None
    if channel is not None:
        limits = TELEGRAM if channel == "telegram" else DISCORD
        view = channel_view(command_set, limits)
        shown, omitted = view.commands, view.omitted
        diags += view.diagnostics
    named = {c.skill_name for c in command_set.commands}
    for skill in skills:
        if skill.name in named:
            diags += exec_dispatch_diagnostics(skill)
    if as_json:
        emit_json(_json(channel, shown, omitted, command_set, skills, diags))
        return
    if not shown and not omitted:
        emit_lines(["No slash commands: no ready skill is user-invocable."])
        return
    title = f"Slash commands ({len(shown)})"
    if limits is not None:
        title = f"{limits.label} menu ({len(shown)} of {len(command_set.commands)} commands)"
    lines = [title, *_table(shown, skills)]
    lines += _footer(omitted, command_set, diags, limits.label if limits else None)
    emit_lines(lines)


def _dispatch_json(spec: CommandSpec, skills: Sequence[Skill]) -> dict[str, Any]:
    from skillbook.pipeline.commands.dispatch import KIND_MODEL, command_dispatch

    how = command_dispatch(spec, skills)
    return how.to_json() if how is not None else {"kind": KIND_MODEL}


def _json(
    channel: str | None,
    shown: Sequence[CommandSpec],
    omitted: Sequence[Omitted],
    command_set: CommandSet,
    skills: Sequence[Skill],
    diags: Sequence[Diagnostic],
) -> dict[str, Any]:
    return {
        "channel": channel,
        "commands": [
            {**c.to_json(), "dispatch": _dispatch_json(c, skills), "source": c.source}
            for c in shown
        ],
        "omitted": [
            {"name": o.command.name, "skillName": o.command.skill_name, "reason": o.reason}
            for o in omitted
        ],
        "renamed": [
            {
                "skillName": r.skill_name,
                "base": r.base,
                "name": r.unique,
                "deduplicated": r.deduplicated,
            }
            for r in command_set.renamed
        ],
        "diagnostics": [d.to_dict() for d in diags],
    }


def _table(shown: Sequence[CommandSpec], skills: Sequence[Skill]) -> list[str]:
    from rich.cells import cell_len

    from skillbook.cli.table import terminal_width, truncate
    from skillbook.pipeline.commands.dispatch import dispatch_kind

    rows = [
        (f"/{c.name}", _one_line(c.skill_name), dispatch_kind(c, skills), _one_line(c.description))
        for c in shown
    ]
    widths = [max([cell_len(HEADERS[i]), *(cell_len(r[i]) for r in rows)]) for i in range(4)]
    fixed = sum(widths[:3]) + len(GAP) * 3
    widths[3] = min(widths[3], max(20, terminal_width() - fixed))

    def line(cells: Sequence[str]) -> str:
        padded = (c + " " * max(0, widths[i] - cell_len(c)) for i, c in enumerate(cells))
        return GAP.join(padded).rstrip()

    out = [line(HEADERS), "─" * (sum(widths) + len(GAP) * 3)]
    out += [line([*r[:3], truncate(r[3], widths[3])]) for r in rows]
    return out


def _one_line(text: str) -> str:
    # A `description: |` block holds newlines; a table row must not.
    return " ".join(clean(text).split())


def _footer(
    omitted: Sequence[Omitted],
    command_set: CommandSet,
    diags: Sequence[Diagnostic],
    label: str | None,
) -> list[str]:
    from skillbook.pipeline.commands.channels import (
        OMIT_DUPLICATE_NAME,
        OMIT_INVALID_NAME,
        OMIT_MAX_COMMANDS,
        OMIT_PAYLOAD,
    )

    why = {
        OMIT_INVALID_NAME: "the name is not accepted there",
        OMIT_DUPLICATE_NAME: "an earlier command has the same name",
        OMIT_MAX_COMMANDS: "the menu is full",
        OMIT_PAYLOAD: "the menu text budget is used up",
    }
    out: list[str] = []
    if omitted:
        out += ["", f"Left out of the {label} menu (`/skill <name>` still works):"]
        out += [
            f"  /{o.command.name} ({o.command.skill_name}): " + why.get(o.reason, o.reason)
            for o in omitted
        ]
    suffixed = [r for r in command_set.renamed if r.deduplicated]
    if suffixed:
        out += ["", "Renamed because the name was taken:"]
        out += [f"  /{r.unique} runs {r.skill_name} (/{r.base} is taken)" for r in suffixed]
    ignored = [d for d in diags if d.code == "command.exec-ignored"]
    if ignored:
        out += ["", *(f"⚠ {d.message}" for d in ignored)]
    return out
