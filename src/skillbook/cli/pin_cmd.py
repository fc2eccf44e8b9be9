"""``skillbook pin SLUG [--reason TEXT]``: keep an installed skill at its version.

Output: ``Pinned <slug>`` (``update --all`` skips it, ``update <slug>`` and ``install
--force`` refuse it); ``--json`` prints the record. The pin is the ``clawhub`` CLI's
(``pinned``/``pinReason`` in the lock entry), so either tool honours the other's.
Exit codes: 0 pinned, 1 not tracked, 2 bad arguments.
"""

from __future__ import annotations

import click

from skillbook.cli.context import Context, emit_json, emit_lines
from skillbook.cli.registry_support import global_option, registry_error, workdir_of


@click.command("pin")
@click.argument("slug")
@click.option("--reason", help="Why it is pinned (shown when an update is refused).")
@click.option("--json", "as_json", is_flag=True, help="Print the record as JSON.")
@global_option
@click.pass_obj
def pin_cmd(obj: Context, slug: str, reason: str | None, as_json: bool, global_: bool) -> None:
    """Pin an installed skill: updates leave it at its version until `skillbook unpin`."""
    from skillbook.distribution.registry import RegistryError
    from skillbook.distribution.registry.pins import set_pin

    try:
        pin = set_pin(workdir_of(obj.settings(), global_), slug, pinned=True, reason=reason)
    except RegistryError as exc:
        registry_error(exc)
    if as_json:
        emit_json(pin.to_json())
    else:
        emit_lines([f"Pinned {pin.name}" + (f" ({pin.reason})" if pin.reason else "")])
