"""``skillbook remove SLUG``: delete an installed skill and its lock entry.

Output: ``Removed <slug> (<dir>)``; ``--json`` prints the record. Only tracked skills
(installed by skillbook, OpenClaw or the ``clawhub`` CLI) are removed. Exit codes: 0
removed, 1 not tracked, 2 bad arguments.

With ``--for AGENT`` it removes a skill ``install --for`` placed: ``Removed <name> (<path>)``
per path; the shared ``.agents/skills/NAME`` copy and its ``skills-lock.json`` entry stay
while another agent still uses them.
"""

from __future__ import annotations

import click

from skillbook.cli.context import Context, emit_json, emit_lines, fail
from skillbook.cli.registry_support import registry_error, say_stderr, workdir_of


@click.command("remove")
@click.argument("slug")
@click.option("--json", "as_json", is_flag=True, help="Print what was removed as JSON.")
@click.option(
    "--for",
    "for_agents",
    multiple=True,
    metavar="AGENT",
    help="Remove it from where this coding agent reads skills (repeatable; see docs/agents.md).",
)
@click.option(
    "-g",
    "--global",
    "global_",
    is_flag=True,
    help="Use the managed skills folder (<state dir>/skills) instead of the workspace; "
    "with --for: the agents' global folders.",
)
@click.pass_obj
def remove_cmd(
    obj: Context, slug: str, as_json: bool, for_agents: tuple[str, ...], global_: bool
) -> None:
    """Remove an installed skill: its folder and its lock entry."""
    from skillbook.distribution.registry import RegistryError

    if for_agents:
        _remove_for(obj, slug, for_agents, global_, as_json)
        return
    from skillbook.distribution.registry.remove import remove_skill

    workdir = workdir_of(obj.settings(), global_)
    try:
        removed = remove_skill(workdir, slug)
    except RegistryError as exc:
        registry_error(exc)
    if as_json:
        emit_json(removed.to_json())
        return
    if removed.drift.state == "modified":
        say_stderr(f"{removed.name} had local changes ({removed.drift.summary()}); they are gone")
    emit_lines([f"Removed {removed.name} ({removed.target})"])


def _remove_for(
    obj: Context, name: str, for_agents: tuple[str, ...], global_: bool, as_json: bool
) -> None:
    from skillbook.cli.agents_support import agent_env
    from skillbook.distribution.agents import AgentsError
    from skillbook.distribution.agents.ops import remove_for, resolve_agents

    where = agent_env(obj, obj.settings())
    try:
        removed, kept = remove_for(name, resolve_agents(for_agents, where), where, global_=global_)
    except AgentsError as exc:
        fail(exc.message, 2 if exc.code == "agents.unknown" else 1, error=exc.code)
    except OSError as exc:
        fail(f"could not remove {name}: {exc}", 1, error="agents.io-error")
    if as_json:
        emit_json({"name": name, "removed": [str(p) for p in removed], "sharedKept": kept})
        return
    lines = [f"Removed {name} ({path})" for path in removed]
    if kept:
        lines.append(f"Kept .agents/skills copy of {name}: another agent still uses it")
    emit_lines(lines)
