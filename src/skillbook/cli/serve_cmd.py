"""``skillbook serve``: publish the workspace's skills over MCP (see ``docs/mcp.md``).

Input: the global ``--workspace/--config/--agent/--mode`` options (``ctx.obj``) and
``--transport/--host/--port/--token-env/--no-auth/--stateless/--workers``. Output: an MCP server on stdio
(the default; stdout carries only the protocol) or on streamable HTTP at
``http://HOST:PORT/mcp``. Status lines and skill diagnostics go to stderr. Ctrl-C or
the client closing stdin ends it. In HTTP mode the port is bound before the status
line is printed: a busy port, or a bind beyond loopback without a token, is one line
on stderr and exit code 2.

Registered in :mod:`skillbook.cli.app` with ``cli.add_command(serve_cmd, "serve")``.
"""

from __future__ import annotations

import logging
import math
import sys

import click

from skillbook.pipeline.book import Loader

DEFAULT_TRANSPORT = "stdio"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def _loader(obj: object) -> Loader:
    from skillbook.cli.context import Context

    assert isinstance(obj, Context)
    return obj.loader()


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


@click.command("serve")
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default=DEFAULT_TRANSPORT,
    show_default=True,
    help="stdio for a host that starts skillbook itself; http for streamable HTTP.",
)
@click.option(
    "--host",
    default=DEFAULT_HOST,
    show_default=True,
    help="Address to bind with --transport http (keep 127.0.0.1 unless you mean it).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="Port with --transport http.",
)
@click.option(
    "--token-env",
    metavar="NAME",
    help="With --transport http: require `Authorization: Bearer <token>`, the token "
    "read from the environment variable NAME (401 without it).",
)
@click.option(
    "--no-auth",
    is_flag=True,
    help="Allow --host beyond loopback without --token-env (only on a network you trust).",
)
@click.option(
    "--stateless",
    is_flag=True,
    help="With --transport http: keep no session between requests, so several `serve` "
    "processes behind one load balancer can answer any request.",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    help="With --transport http: serve from N processes on the one port (implies "
    "--stateless; POSIX only).",
)
@click.pass_obj
def serve_cmd(
    obj: object,
    transport: str,
    host: str,
    port: int,
    token_env: str | None,
    no_auth: bool,
    stateless: bool,
    workers: int,
) -> None:
    """Serve the skills over MCP (the Skills extension, plus resources, prompts and a
    read_skill tool for hosts without it). Reloads when skill folders change."""
    import os

    from skillbook.cli.context import fail

    try:
        from skillbook.mcp._startup import collector_paused, server_imports

        with server_imports():
            from skillbook.mcp import ServeError
            from skillbook.mcp._transports import bind_http, run_event_loop
            from skillbook.mcp.server import build_server
    except ImportError as exc:
        fail(f"`serve` needs the MCP SDK ({exc.name}): pip install 'skillbook[mcp]'")
    if workers > 1:
        from skillbook.mcp._workers import can_fork

        if transport != "http":
            fail("--workers needs --transport http")
        if not can_fork():
            fail("--workers needs a POSIX system (it forks); run one process per port")
        stateless = True  # a session on one worker would be unknown to the others
    token = None
    if token_env:
        token = os.environ.get(token_env, "").strip()
        if not token:
            fail(f"--token-env {token_env}: that environment variable is not set or empty")
    sock = None
    if transport == "http":
        try:
            sock = bind_http(host, port, token=token, allow_unauthenticated=no_auth)
        except ServeError as exc:
            fail(f"cannot serve on http://{host}:{port}/mcp: {exc}")
        port = int(sock.getsockname()[1])
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("skillbook: %(message)s"))
    log = logging.getLogger("skillbook.mcp")
    log.addHandler(handler)
    log.setLevel(logging.WARNING)

    # Workers watch the skill folders themselves: a watcher thread started here would
    # not survive the fork. The first book and catalog live until a skill changes:
    # built without collector passes over them (docs/mcp.md#performance).
    with collector_paused():
        server = build_server(_loader(obj), watch=workers == 1)
        # The state just built, however long the build took (no second walk).
        state = server.catalog.current(max_age_s=math.inf)
    where = "stdio" if transport == "stdio" else f"http://{host}:{port}/mcp"
    click.echo(
        f"skillbook: serving {_count(len(state.skills), 'skill')} "
        f"({len(state.listed)} with a Skills extension entry, "
        f"{_count(len(state.commands.commands), 'prompt')}) on {where}"
        + (f" from {workers} worker processes" if workers > 1 else ""),
        err=True,
    )
    if sock is not None and workers > 1:
        from skillbook.mcp._workers import run_workers

        def one_worker() -> None:
            server.catalog.session.start_watching()
            run_event_loop(
                lambda: server.run_http(host=host, token=token, sock=sock, stateless=True)
            )

        sys.exit(run_workers(workers, one_worker))
    try:
        if sock is None:
            run_event_loop(server.run_stdio)
        else:
            run_event_loop(
                lambda: server.run_http(host=host, token=token, sock=sock, stateless=stateless)
            )
    except KeyboardInterrupt:
        pass
