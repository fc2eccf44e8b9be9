"""``skillbook search [QUERY...]``: find skills on a ClawHub-compatible registry.

Output: OpenClaw's lines (``<slug>[ v<version>]  <displayName>[  <summary>]``) or
``No skills found on <registry>.`` (its URL, or ``clawhub.ai (default)``); ``--json`` prints the registry's ``{results}`` as received.
Exit codes: 0 answered (even with no hits), 1 the registry failed, 2 bad arguments.
"""

from __future__ import annotations

import click

from skillbook.cli.context import Context, emit_json, emit_lines
from skillbook.cli.registry_support import endpoint_of, registry_error, registry_option, say_stderr


@click.command("search")
@click.argument("query", nargs=-1)
@click.option("--limit", type=click.IntRange(min=1), help="At most this many results.")
@click.option("--json", "as_json", is_flag=True, help="Print the registry's {results} as JSON.")
@registry_option
@click.pass_obj
def search_cmd(
    obj: Context,
    query: tuple[str, ...],
    limit: int | None,
    as_json: bool,
    registry: str | None,
    site: str | None,
) -> None:
    """Search a ClawHub-compatible registry (an empty query lists everything)."""
    from skillbook.distribution.registry import RegistryError
    from skillbook.distribution.registry.api import search
    from skillbook.distribution.registry.client import RegistryClient

    settings = obj.settings()
    endpoint = endpoint_of(settings, registry, site)
    try:
        with RegistryClient(endpoint, on_wait=say_stderr) as client:
            raw, hits = search(client, " ".join(query), limit=limit)
    except RegistryError as exc:
        registry_error(exc)
    if as_json:
        emit_json(raw)
        return
    if not hits:
        emit_lines([f"No skills found on {endpoint.label}."])
        return
    emit_lines([hit.line() for hit in hits])
