"""``skillbook registry``: run a ClawHub-compatible registry and administer it.

``serve`` starts the server; ``token`` creates, lists and revokes bearer tokens;
``held``, ``release`` and ``hold`` handle versions the scan kept back; ``delete``
removes skills or versions; ``audit`` shows who published, released and deleted
what; ``migrate`` brings the schema up to date. Every command works on the
database and blob store named by ``--db``/``--blobs`` (or their environment
variables), by default a SQLite file and a folder under ``<state dir>/registry``.
"""

from __future__ import annotations

import dataclasses

import click

from skillbook.cli.context import ERR_USAGE, Context, emit_lines, fail
from skillbook.cli.registry_admin import ADMIN_COMMANDS
from skillbook.cli.registry_store import hub_settings, store_options

EXAMPLES = """\b
Examples:
  skillbook registry serve
      a registry on 127.0.0.1:8787 (SQLite and a blob folder under the state dir)
  skillbook registry token create alice
      a publish token for @alice (shown once, stored hashed)
  skillbook registry held
      versions the scan kept out of search and downloads
  skillbook registry release weather 1.2.0 --reason "reviewed: false positive"
      make a held version visible"""


@click.group("registry", epilog=EXAMPLES)
def registry_cmd() -> None:
    """Run a ClawHub-compatible skill registry and administer it."""


@registry_cmd.command("serve")
@store_options
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8787, show_default=True, type=int, help="Port to listen on.")
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(1, 64),
    help="uvicorn worker processes (all stateless; several share one database).",
)
@click.option(
    "--public-url",
    metavar="URL",
    help="The URL clients use (behind a proxy); default: each request's Host.",
)
@click.option(
    "--validate-mode",
    type=click.Choice(["openclaw", "mixed", "legacy", "strict"]),
    default="openclaw",
    show_default=True,
    help="The `skillbook validate` mode every published version must pass.",
)
@click.option(
    "--search",
    "search_backend",
    type=click.Choice(["hybrid", "bm25"]),
    default="hybrid",
    show_default=True,
    help="hybrid: BM25 and embeddings (the selector); bm25: words only.",
)
@click.option(
    "--limit",
    "limits",
    multiple=True,
    metavar="KIND.SCOPE=N",
    help="A rate limit per minute, e.g. read.ip=600 or write.token=120 "
    "(kinds read, download, write; scopes ip, token; 0 = unlimited). Repeatable.",
)
@click.option(
    "--hold-severity",
    type=click.Choice(["high", "critical"]),
    default="high",
    show_default=True,
    help="Scan findings of this severity or worse hold a version until an admin "
    "releases it (`skillbook registry held`).",
)
@click.option(
    "--forwarded-allow-ips",
    default="",
    metavar="IPS",
    help="Proxies (comma-separated addresses, * for any) whose X-Forwarded-For names the "
    "client; default none: the connecting address counts, 127.0.0.1 included.",
)
@click.option(
    "--upload-ttl",
    "upload_ttl_hours",
    type=click.FloatRange(min=0, min_open=True),
    default=24,
    show_default=True,
    metavar="HOURS",
    help="Uploads not published within this time expire; their blobs are collected.",
)
@click.option(
    "--quota",
    "quota_mb",
    type=click.IntRange(min=0),
    default=1024,
    show_default=True,
    metavar="MB",
    help="Storage per token: its unexpired uploads and published files (0 = unlimited).",
)
@click.option(
    "--sweep-every",
    "sweep_seconds",
    type=click.IntRange(min=0),
    default=600,
    show_default=True,
    metavar="SECONDS",
    help="How often each process removes leftovers and expired uploads (0 = at start only).",
)
@click.option(
    "--flush-every",
    "flush_seconds",
    type=click.FloatRange(min=0),
    default=1.0,
    show_default=True,
    metavar="SECONDS",
    help="How often each process adds its download and rate-limit counts to the database "
    "(replicas count together within this delay; 0 = in every request, exact but slower).",
)
@click.option(
    "--access-log/--no-access-log",
    default=False,
    show_default=True,
    help="Log a line per request (uvicorn's access log).",
)
@click.pass_obj
def serve_cmd(
    obj: Context,
    db: str | None,
    blobs: str | None,
    host: str,
    port: int,
    workers: int,
    public_url: str | None,
    validate_mode: str,
    search_backend: str,
    limits: tuple[str, ...],
    hold_severity: str,
    forwarded_allow_ips: str,
    upload_ttl_hours: float,
    quota_mb: int,
    sweep_seconds: int,
    flush_seconds: float,
    access_log: bool,
) -> None:
    """Serve the registry (the ClawHub HTTP API and its web pages) until interrupted."""
    from skillbook.distribution.hub.server_config import MIB, Housekeeping, RateLimits

    rates = RateLimits()
    for item in limits:
        key, _, value = item.partition("=")
        field = key.replace(".", "_per_")
        if not value.isdigit() or field not in RateLimits.__dataclass_fields__:
            fail(f"--limit {item!r}: expected KIND.SCOPE=N like read.ip=600", error=ERR_USAGE)
        rates = dataclasses.replace(rates, **{field: int(value)})
    settings = hub_settings(
        obj,
        db,
        blobs,
        public_url=public_url,
        validate_mode=validate_mode,
        search_backend=search_backend,
        rate_limits=rates,
        hold_severity=hold_severity,
        index_dir=str(obj.settings().paths.state_dir / "registry" / "index"),
        upload_ttl_seconds=max(1, round(upload_ttl_hours * 3600)),
        housekeeping=Housekeeping(
            quota_bytes_per_token=quota_mb * MIB, sweep_seconds=sweep_seconds
        ),
        flush_seconds=flush_seconds,
    )
    from skillbook.distribution.hub.server import Listen, serve

    click.echo(f"skillbook registry: http://{host}:{port} (workers: {workers})", err=True)
    serve(
        settings,
        Listen(
            host=host,
            port=port,
            workers=workers,
            forwarded_allow_ips=forwarded_allow_ips,
            access_log=access_log,
        ),
    )


@registry_cmd.command("migrate")
@store_options
@click.pass_obj
def migrate_cmd(obj: Context, db: str | None, blobs: str | None) -> None:
    """Create or upgrade the registry's database schema."""
    from skillbook.distribution.hub.server import prepare

    revision = prepare(hub_settings(obj, db, blobs))
    emit_lines([f"schema at revision {revision}"])


for _command in ADMIN_COMMANDS:
    registry_cmd.add_command(_command)
