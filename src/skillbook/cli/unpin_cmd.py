"""``skillbook unpin SLUG``: let ``update`` change a pinned skill again.

Output: ``Unpinned <slug>`` (``<slug> was not pinned`` when it was not); ``--json``
prints the record. Exit codes: 0 done, 1 not tracked, 2 bad arguments.
"""

from __future__ import annotations

import click

from skillbook.cli.context import Context, emit_json, emit_lines
from skillbook.cli.registry_support import global_option, registry_error, workdir_of


@click.command("unpin")
@click.argument("slug")
@click.option("--json", "as_json", is_flag=True, help="Print the record as JSON.")
@global_option
@click.pass_obj
def unpin_cmd(obj: Context, slug: str, as_json: bool, global_: bool) -> None:
    """Unpin an installed skill (see `skillbook pin`)."""
    from skillbook.distribution.registry import RegistryError
    from skillbook.distribution.registry.pins import set_pin

    try:
        pin = set_pin(workdir_of(obj.settings(), global_), slug, pinned=False)
    except RegistryError as exc:
        registry_error(exc)
    if as_json:
        emit_json(pin.to_json())
    else:
        emit_lines([f"Unpinned {pin.name}" if pin.changed else f"{pin.name} was not pinned"])
