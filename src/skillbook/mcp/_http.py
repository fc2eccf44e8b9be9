"""``skillbook serve --transport http``: the socket, the guard in front, the sessions.

Input: a :class:`~skillbook.mcp.server.SkillServer`, an address, an optional bearer
token. Output: a listening socket (bound *before* anything is announced, so a busy
port is one clear error) and the ASGI application served on it:

- :class:`Guard` refuses a request whose ``Origin`` names another port than the
  server's (or, on a loopback bind, a host that is not loopback) with 403, and, given
  a token, one without ``Authorization: Bearer <token>`` with 401;
- :class:`BoundedSessions` keeps at most ``max_sessions`` live handshake-era sessions:
  opening one more closes the least recently used idle session (no request in flight,
  no open stream), or answers 503 when every session is busy.

Protocol 2026-07-28 requests carry no session (each stands alone); the bound is for
the ``initialize`` sessions older clients open and may never close. With
``stateless=True`` no session is kept at all (every handshake-era request stands
alone too), so several server processes behind one load balancer answer any request
alike; see ``docs/mcp.md`` ("Several workers").
"""

from __future__ import annotations

import errno
import hmac
import ipaddress
import json
import socket
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import Route

from skillbook.mcp import PortInUse, ServeError
from skillbook.mcp._answers import CachedAnswers

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

#: Live handshake-era HTTP sessions kept at once (the least recently used idle one goes).
DEFAULT_MAX_SESSIONS: Final = 100
#: A session with nothing in flight for this long is closed by the SDK.
DEFAULT_SESSION_IDLE_S: Final = 30 * 60
_LOOPBACK_NAMES: Final = frozenset({"localhost"})
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or a name) only ever reaches this machine."""
    name = host.strip("[]").lower()
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port``; raises :class:`PortInUse` or ServeError."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ServeError(f"cannot serve on {host}: {exc.strerror or exc}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise PortInUse(
                errno.EADDRINUSE,
                f"port {port} on {host} is already in use; stop the other server or pick "
                "another port with --port",
            ) from None
        raise ServeError(f"cannot bind {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(False)
    return sock


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


async def _refuse(send: Send, status: int, message: str, extra: list[tuple[bytes, bytes]]) -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}
    ).encode()
    headers = [(b"content-type", b"application/json"), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class Guard:
    """ASGI middleware: the ``Origin`` port check and the bearer token (see the module)."""

    def __init__(self, app: Any, *, port: int, loopback: bool, token: str | None) -> None:
        self.app, self.port, self.loopback = app, port, loopback
        self._token = f"Bearer {token}".encode() if token else None

    def origin_problem(self, origin: str) -> str | None:
        try:
            parts = urlsplit(origin)
            port = parts.port or _DEFAULT_PORTS.get(parts.scheme)
        except ValueError:
            return "a malformed Origin"
        if port != self.port:
            return f"Origin port {port} is not this server's port {self.port}"
        if self.loopback and not is_loopback(parts.hostname or ""):
            return "Origin is not a loopback host"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        origin = _header(scope, b"origin")
        problem = self.origin_problem(origin) if origin is not None else None
        if problem is not None:
            await _refuse(send, 403, f"Invalid Origin header: {problem}", [])
            return
        if self._token is not None:
            given = (_header(scope, b"authorization") or "").encode("latin-1")
            if not hmac.compare_digest(given, self._token):
                challenge = (b"www-authenticate", b'Bearer realm="skillbook"')
                await _refuse(send, 401, "Unauthorized: a bearer token is required", [challenge])
                return
        await self.app(scope, receive, send)


class BoundedSessions(StreamableHTTPSessionManager):
    """The SDK's session manager, with the oldest idle session closed to make room."""

    def __init__(self, app: Server[Any], *, max_sessions: int, **kw: Any) -> None:
        # The SDK's own limit refuses new sessions; the bound here evicts instead.
        super().__init__(app, max_sessions=None, **kw)
        self.limit = max(1, max_sessions)
        #: Session id -> last request time, least recently used first.
        self._used: dict[str, float] = {}

    def _touch(self, session_id: str) -> None:
        self._used.pop(session_id, None)
        self._used[session_id] = time.monotonic()

    async def _make_room(self) -> bool:
        live = self._server_instances
        for session_id in [s for s in self._used if s not in live]:
            del self._used[session_id]
        while len(live) >= self.limit:
            idle = next(
                (s for s in self._used if getattr(live[s], "_requests_in_flight", 1) == 0), None
            )
            if idle is None:
                return False
            transport = live[idle]
            del self._used[idle]
            await self._discard_session(idle, transport)
        return True

    async def _handle_stateful_request(self, scope: Scope, receive: Receive, send: Send) -> None:
        session_id = _header(scope, MCP_SESSION_ID_HEADER.encode())
        if session_id is None:
            async with self._session_creation_lock:
                room = await self._make_room()
            if not room:
                await _refuse(send, 503, "Too many open sessions (all busy)", [])
                return
            before = set(self._server_instances)
            await super()._handle_stateful_request(scope, receive, send)
            for new in set(self._server_instances) - before:
                self._touch(new)
            return
        if session_id in self._server_instances:
            self._touch(session_id)
        await super()._handle_stateful_request(scope, receive, send)
        if session_id in self._server_instances:
            self._touch(session_id)


def build_app(
    server: Server[Any],
    *,
    host: str,
    port: int,
    path: str,
    token: str | None,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    stateless: bool = False,
    served_state: Callable[[], Awaitable[object]] | None = None,
) -> Guard:
    """The ASGI application for one bound address (``port`` is the real bound port).

    ``stateless``: keep no handshake-era session between requests (for several
    replicas behind a load balancer). ``served_state``: the server's state accessor;
    given, repeated read requests are answered from the SDK's kept response bytes
    (:mod:`._answers`)."""
    loopback = is_loopback(host)
    security = None
    if loopback:
        # DNS-rebinding protection, pinned to this server's own port.
        names = ("127.0.0.1", "localhost", "[::1]")
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"{n}:{port}" for n in names],
            allowed_origins=[f"http://{n}:{port}" for n in names],
        )
    manager: StreamableHTTPSessionManager
    if stateless:
        manager = StreamableHTTPSessionManager(
            server, stateless=True, security_settings=security, max_sessions=None
        )
    else:
        manager = BoundedSessions(
            server,
            max_sessions=max_sessions,
            security_settings=security,
            session_idle_timeout=DEFAULT_SESSION_IDLE_S,
        )
    app: Any = Starlette(
        routes=[Route(path, endpoint=StreamableHTTPASGIApp(manager))],
        lifespan=lambda _app: manager.run(),
    )
    if served_state is not None:
        app = CachedAnswers(app, served_state, path=path)
    return Guard(app, port=port, loopback=loopback, token=token)
