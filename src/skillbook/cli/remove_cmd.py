"""``skillbook remove SLUG``: delete an installed skill and its lock entry.

Output: ``Removed <slug> (<dir>)``; ``--json`` prints the record. Only tracked skills
(installed by skillbook, OpenClaw or the ``clawhub`` CLI) are removed. Exit codes: 0
removed, 1 not tracked, 2 bad arguments.
"""

from __future__ import annotations

import click

from skillbook.cli.context import Context, emit_json, emit_lines
from skillbook.cli.registry_support import global_option, registry_error, say_stderr, workdir_of


@click.command("remove")
@click.argument("slug")
@click.option("--json", "as_json", is_flag=True, help="Print what was removed as JSON.")
@global_option
@click.pass_obj
def remove_cmd(obj: Context, slug: str, as_json: bool, global_: bool) -> None:
    """Remove an installed skill: its folder and its lock entry."""
    from skillbook.registry.errors import RegistryError
    from skillbook.registry.remove import remove_skill

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
