"""``skillbook restore NAME``: bring back the skill folder ``update --force`` replaced.

Output: ``Restored <name> from backup <id> (<version>) -> <dir>``; the folder it
replaced is kept as a backup in turn (stderr names it), so a restore can be undone the
same way. ``--list`` (or no NAME) lists the backups, oldest first. ``--json`` prints
the records. Exit codes: 0 done (a list, even empty), 1 no such backup
(``registry.no-backup``), 2 bad arguments.
"""

from __future__ import annotations

import time

import click

from skillbook.cli.context import Context, emit_json, emit_lines
from skillbook.cli.registry_support import global_option, registry_error, say_stderr, workdir_of


@click.command("restore")
@click.argument("name", required=False)
@click.option("--list", "list_", is_flag=True, help="List the backups (of NAME, or all).")
@click.option("--id", "backup_id", metavar="ID", help="Restore this backup, not the newest.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@global_option
@click.pass_obj
def restore_cmd(
    obj: Context,
    name: str | None,
    list_: bool,
    backup_id: str | None,
    as_json: bool,
    global_: bool,
) -> None:
    """Restore a skill folder that `update --force` replaced (its newest backup).

    `update --force` keeps an edited skill's folder before replacing it; this puts it
    back, atomically, with its lock entry. The folder it replaces is kept as a backup
    too. With --list (or no NAME), list the backups.
    """
    from skillbook.distribution.registry import RegistryError
    from skillbook.distribution.registry.backups import list_backups, restore

    workdir = workdir_of(obj.settings(), global_)
    if list_ or name is None:
        found = list_backups(workdir, name)
        if as_json:
            emit_json({"backups": [b.to_json() for b in found]})
            return
        if not found:
            emit_lines(["No backups." if name is None else f'No backups of "{name}".'])
            return
        emit_lines(
            [
                f"{b.name}  {b.id}  {b.version or 'unknown'}  {_when(b.created_at)}  {b.reason}"
                for b in found
            ]
        )
        return
    try:
        with workdir.locked():
            restored, replaced = restore(workdir, name, backup_id)
    except RegistryError as exc:
        registry_error(exc)
    if as_json:
        emit_json(
            {
                "restored": restored.to_json(),
                "replaced": replaced.to_json() if replaced is not None else None,
                "targetDir": str(workdir.target(name)),
            }
        )
        return
    version = restored.version or "unknown version"
    emit_lines([f"Restored {name} from backup {restored.id} ({version}) -> {workdir.target(name)}"])
    if replaced is not None:
        say_stderr(
            f"the folder it replaced is kept as backup {replaced.id} "
            f"(`skillbook restore {name}` swaps back)"
        )


def _when(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ms / 1000))
