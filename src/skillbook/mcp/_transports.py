"""The transports ``skillbook serve`` runs on: stdio, streamable HTTP, the event loop.

Input: a built :class:`~skillbook.mcp.server.SkillServer` and where to listen (host,
port, path, an optional bearer token, a socket bound beforehand). Output: the server
running over stdio or HTTP (uvicorn), its ASGI application for mounting elsewhere,
the listening socket (:func:`bind_http`, which refuses an unauthenticated bind beyond
loopback), and :func:`run_event_loop`. The HTTP pieces (``_http``, uvicorn) are
imported only when HTTP is served, so a stdio server never loads them.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

import anyio

from skillbook.mcp import ServeError
from skillbook.mcp._http import DEFAULT_MAX_SESSIONS

if TYPE_CHECKING:
    from types import FrameType

    from mcp.server.lowlevel import Server
    from mcp.server.subscriptions import ListenHandler

    from skillbook.mcp._catalog import ServedState

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_HTTP_PATH = "/mcp"
#: After a stop signal, how long requests still running may take before they are
#: cancelled: uvicorn waits for every open response otherwise, and a client's
#: server-sent event stream never ends by itself.
GRACEFUL_STOP_S = 5


class Transports:
    """How a server is run (mixed into :class:`~skillbook.mcp.server.SkillServer`, which
    is also the ``mcp`` ``Server`` and provides :meth:`state`)."""

    if TYPE_CHECKING:  # provided by the server class (a stub here would shadow it)
        listens: ListenHandler

        async def state(self) -> ServedState: ...

    async def run_stdio(self) -> None:
        from mcp.server.stdio import stdio_server

        server = cast("Server[Any]", self)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    async def run_http(
        self,
        *,
        host: str = DEFAULT_HOST,
        port: int = DEFAULT_PORT,
        path: str = DEFAULT_HTTP_PATH,
        token: str | None = None,
        sock: socket.socket | None = None,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        stateless: bool = False,
    ) -> None:
        """Serve streamable HTTP on ``sock`` (from :func:`bind_http`) or a new bind.

        ``token``: requests must carry ``Authorization: Bearer <token>`` (401 otherwise).
        ``stateless``: no session state, for several replicas behind a load balancer.
        """
        import uvicorn

        from skillbook.mcp._http import bind

        listening = sock if sock is not None else bind(host, port)
        bound = int(listening.getsockname()[1])
        app = self.http_app(
            host=host,
            port=bound,
            path=path,
            token=token,
            max_sessions=max_sessions,
            stateless=stateless,
        )
        # MCP has no WebSocket transport: "none" spares importing a WebSocket library.
        config = uvicorn.Config(
            app,
            host=host,
            port=bound,
            log_level="warning",
            lifespan="on",
            ws="none",
            timeout_graceful_shutdown=GRACEFUL_STOP_S,
        )
        server = uvicorn.Server(config)
        loop = asyncio.get_running_loop()
        stop = server.handle_exit

        def handle_exit(signum: int, frame: FrameType | None) -> None:
            # Listen streams end at once, with their final result frame (the
            # spec's graceful close, so a client re-listens elsewhere): uvicorn's
            # graceful stop would otherwise wait for them as for any response.
            stop(signum, frame)
            loop.call_soon_threadsafe(self.listens.close)

        # uvicorn installs ``server.handle_exit`` as the signal handler when it starts.
        server.handle_exit = handle_exit  # type: ignore[method-assign,assignment]
        await server.serve(sockets=[listening])

    def http_app(
        self,
        *,
        host: str = DEFAULT_HOST,
        port: int = DEFAULT_PORT,
        path: str = DEFAULT_HTTP_PATH,
        token: str | None = None,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        stateless: bool = False,
    ) -> Any:
        """The ASGI application :meth:`run_http` serves, for mounting elsewhere: the
        ``Origin`` port check, the optional bearer token and the session bound included
        (``port`` is the port clients connect to)."""
        from skillbook.mcp._http import build_app

        return build_app(
            cast("Server[Any]", self),
            host=host,
            port=port,
            path=path,
            token=token,
            max_sessions=max_sessions,
            stateless=stateless,
            served_state=self.state,
        )


def run_event_loop(main: Callable[[], Awaitable[None]]) -> None:
    """Run ``main`` on asyncio, with uvloop's faster event loop when it is installed
    (``pip install 'skillbook[mcp]'`` brings it, with httptools for uvicorn's parser)."""
    try:
        import uvloop  # noqa: F401
    except ImportError:
        anyio.run(main)
    else:
        anyio.run(main, backend_options={"use_uvloop": True})


def bind_http(
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    *,
    token: str | None = None,
    allow_unauthenticated: bool = False,
) -> socket.socket:
    """The listening socket for :meth:`SkillServer.run_http`, bound before anything runs.

    Raises :class:`PortInUse` when the port is taken, and :class:`ServeError` for an
    address beyond loopback without a
    ``token`` (unless ``allow_unauthenticated``): every served skill would be readable
    by anyone who can reach it.
    """
    from skillbook.mcp._http import bind, is_loopback

    if not token and not allow_unauthenticated and not is_loopback(host):
        raise ServeError(
            f"{host} is reachable from other machines, and the server would let anyone "
            "there read every served skill: give a token (--token-env NAME), bind "
            "127.0.0.1, or pass --no-auth on a network you trust"
        )
    return bind(host, port)
