"""``skillbook serve``: a workspace's skills over MCP, with the official Skills extension.

Input: a :class:`~skillbook.book.Loader` or a :class:`~skillbook.runtime.session.SkillSession`.
Output: an ``mcp`` low-level server (:class:`SkillServer`) that publishes the skills the
catalog shows (``book.eligible``: gates, agent filter and config applied) as:

- ``skill://<name>/<path>`` resources for every servable file (text, or base64 blob);
- the Skills extension ``io.modelcontextprotocol/skills`` (SEP-2640, written against
  protocol revision 2026-07-28): ``skills/list``, ``skills/get`` and
  ``resources/directory/read``, with per-file ``sha256:`` digests and sizes;
- for hosts that do not know the extension: the ``## Skills (mandatory)`` catalog as
  the server ``instructions``, a ``read_skill`` tool, and one prompt per slash command.

Older clients: the Python SDK drops ``capabilities.extensions`` from handshake-era
(``initialize``, protocol ≤ 2025-11-25) results, so such a client never learns that
the extension exists; the ``skills/*`` methods answer ``-32601`` there. It gets the
plain resources, prompts, the tool and the instructions — everything else works.

When the skill watcher sees a change, ``resources`` and ``prompts`` list-changed
notifications go out (``subscriptions/listen`` streams on 2026-07-28, the session's
own channel on handshake-era sessions). The extension defines no notification of its
own. Only this package imports ``mcp``.
"""

from __future__ import annotations

import base64
import logging
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
)
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from skillbook._js import js_trim
from skillbook.invocation import Invocation, rewrite_for_model
from skillbook.mcp import _skillfiles as sf
from skillbook.mcp._catalog import (
    DEFAULT_RESCAN_INTERVAL_S,
    READ_TOOL,
    ServedState,
    SkillCatalog,
    page,
)
from skillbook.mcp._http import DEFAULT_MAX_SESSIONS, PortInUse, ServeError
from skillbook.runtime.session import SkillSession

if TYPE_CHECKING:
    from skillbook.book import Loader

__all__ = [
    "PortInUse",
    "ServeError",
    "SkillServer",
    "bind_http",
    "build_server",
    "run_event_loop",
    "serve",
]

_log = logging.getLogger("skillbook.mcp")

DEFAULT_SERVER_NAME = "skillbook"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_HTTP_PATH = "/mcp"
#: Freshness hint of ``skills/list`` and ``skills/get`` (2026-07-28 only).
DEFAULT_TTL_MS = 30_000
#: The catalog is one user's workspace: never shareable across callers.
DEFAULT_CACHE_SCOPE: Literal["public", "private"] = "private"
DEFAULT_PAGE_SIZE = 100
#: Handshake-era sessions remembered for list-changed notifications (oldest dropped).
DEFAULT_MAX_LEGACY_SESSIONS = 256
#: How long start-up waits for the skill watcher to be armed.
WATCH_READY_TIMEOUT_S = 5.0
PROMPT_ARGUMENT = "args"
Transport = Literal["stdio", "http"]

_READ_TOOL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "The skill's <name> in <available_skills>."},
        "path": {
            "type": "string",
            "description": "A file of the skill, relative to its folder (default SKILL.md). "
            "An absolute path inside the skill folder also works.",
        },
    },
    "required": ["name"],
}


class GetSkillParams(types.RequestParams):
    uri: str


class DirectoryReadParams(types.PaginatedRequestParams):
    uri: str


# --------------------------------------------------------------------------- server


def _invalid(message: str, uri: str | None = None) -> MCPError:
    return MCPError(code=types.INVALID_PARAMS, message=message, data={"uri": uri} if uri else None)


def _page(items: Sequence[Any], cursor: str | None, size: int) -> tuple[list[Any], str | None]:
    try:
        return page(items, cursor, size)
    except ValueError as exc:
        raise _invalid("Invalid cursor") from exc


def _no_cursor(params: types.PaginatedRequestParams | None) -> None:
    """Lists served in one page hand out no cursor, so any cursor is a bad one."""
    if params is not None and params.cursor is not None:
        raise _invalid("Invalid cursor")


def _modern(ctx: ServerRequestContext[Any, Any]) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def _resources(state: ServedState) -> list[types.Resource]:
    return [types.Resource.model_validate(item) for item in state.resource_items()]


def _prompts(state: ServedState) -> list[types.Prompt]:
    argument = types.PromptArgument(
        name=PROMPT_ARGUMENT, description="The text after the slash command.", required=False
    )
    return [
        types.Prompt(name=c.name, description=c.description, arguments=[argument])
        for c in state.commands.commands
    ]


@dataclass(frozen=True, slots=True)
class _Views:
    state: ServedState
    resources: list[types.Resource]
    prompts: list[types.Prompt]


class SkillServer(Server[dict[str, Any]]):
    """The low-level ``mcp`` server with skillbook's handlers (see the module docstring)."""

    def __init__(
        self,
        catalog: SkillCatalog,
        *,
        name: str = DEFAULT_SERVER_NAME,
        owns_session: bool = False,
        ttl_ms: int = DEFAULT_TTL_MS,
        cache_scope: Literal["public", "private"] = DEFAULT_CACHE_SCOPE,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> None:
        from skillbook import __version__

        self.catalog = catalog
        self.bus = InMemorySubscriptionBus()
        self.ttl_ms, self.cache_scope, self.page_size = ttl_ms, cache_scope, page_size
        self._owns_session = owns_session
        self._legacy: list[Any] = []
        #: ``skills.selection`` (not off): the plan whose ``find_skills`` is served.
        self._selection: Any = None
        self._wake: anyio.Event | None = None
        self._notifying = False
        #: The notifier also rescans the skill folders (requests then never do).
        self._refreshing = False
        #: A request arrived since the notifier's last walk.
        self._asked = False
        self._view_cache: _Views | None = None
        super().__init__(
            name,
            version=__version__,
            lifespan=self._lifespan,
            on_list_resources=self._list_resources,
            on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_subscriptions_listen=ListenHandler(self.bus),
        )
        self.extensions[sf.EXTENSION_ID] = {"directoryRead": True}
        self.add_request_handler("skills/list", types.PaginatedRequestParams, self._skills_list)
        self.add_request_handler("skills/get", GetSkillParams, self._skills_get)
        self.add_request_handler("resources/directory/read", DirectoryReadParams, self._dir_read)
        self.middleware.append(self._remember_legacy_session)
        self.instructions = catalog.current().instructions or None

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        # Handshake-era sessions get list-changed notifications too: say so.
        notify = notification_options or NotificationOptions(
            prompts_changed=True, resources_changed=True
        )
        return super().create_initialization_options(notify, experimental_capabilities, extensions)

    async def state(self) -> ServedState:
        """The state a request answers from. While the change notifier runs, it also
        walks the skill folders every rescan interval, so a request takes the held
        state without leaving the event loop and only rebuilds (in a worker thread)
        when the skills changed or the notifier fell behind."""
        interval = self.catalog.rescan_interval_s
        self._asked = True
        if self._refreshing and interval > 0:
            held = self.catalog.fresh(2 * interval)
            if held is not None:
                return held
            state = await anyio.to_thread.run_sync(
                lambda: self.catalog.current(max_age_s=2 * interval)
            )
        else:
            state = await anyio.to_thread.run_sync(self.catalog.current)
        # Read by server/discover and initialize: new sessions see the current catalog.
        self.instructions = state.instructions or None
        return state

    def _views(self, state: ServedState) -> _Views:
        """The wire objects of one state, built once (resources, prompts)."""
        views = self._view_cache
        if views is None or views.state is not state:
            views = _Views(state, _resources(state), _prompts(state))
            self._view_cache = views
        return views

    # ------------------------------------------------------------------ resources

    async def _list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        _no_cursor(params)
        return types.ListResourcesResult(resources=self._views(await self.state()).resources)

    async def _read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        state = await self.state()
        found = state.file(params.uri)
        if found is None:
            hint = (
                " (a directory: use resources/directory/read)"
                if state.directory(params.uri)
                else ""
            )
            raise _invalid(f"Unknown resource: {params.uri}{hint}", params.uri)
        content: types.TextResourceContents | types.BlobResourceContents
        if found.text is not None:
            content = types.TextResourceContents(
                uri=found.uri, mime_type=found.mime, text=found.text
            )
        else:
            blob = base64.b64encode(found.data).decode("ascii")
            content = types.BlobResourceContents(uri=found.uri, mime_type=found.mime, blob=blob)
        return types.ReadResourceResult(contents=[content])

    # ------------------------------------------------------------------ the extension

    def _envelope(self, ctx: ServerRequestContext[Any, Any], out: dict[str, Any]) -> dict[str, Any]:
        if _modern(ctx):
            out.update(resultType="complete", ttlMs=self.ttl_ms, cacheScope=self.cache_scope)
        return out

    @staticmethod
    def _require_modern(ctx: ServerRequestContext[Any, Any]) -> None:
        # The extension is served on 2026-07-28 only (see the module docstring).
        if not _modern(ctx):
            raise MCPError(code=types.METHOD_NOT_FOUND, message="Method not found", data=ctx.method)

    async def _skills_list(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams
    ) -> dict[str, Any]:
        self._require_modern(ctx)
        entries = (await self.state()).entries
        items, after = _page(entries, params.cursor, self.page_size)
        out: dict[str, Any] = {"skills": items}
        if after is not None:
            out["nextCursor"] = after
        return self._envelope(ctx, out)

    async def _skills_get(
        self, ctx: ServerRequestContext[Any, Any], params: GetSkillParams
    ) -> dict[str, Any]:
        self._require_modern(ctx)
        served = (await self.state()).by_md_uri(params.uri)
        if served is None:
            raise _invalid(f"No skill is served at {params.uri}", params.uri)
        if served.problem is not None:
            raise _invalid(f"{params.uri} is not served as a skill: {served.problem}", params.uri)
        return self._envelope(ctx, {"skill": served.entry()})

    async def _dir_read(
        self, ctx: ServerRequestContext[Any, Any], params: DirectoryReadParams
    ) -> dict[str, Any]:
        self._require_modern(ctx)
        found = (await self.state()).directory(params.uri)
        if found is None:
            raise _invalid(f"{params.uri} is not a directory resource", params.uri)
        served, rel = found
        children = [
            {"uri": uri, "name": name, "mimeType": mime}
            for name, uri, mime in served.files.children(rel)
        ]
        items, after = _page(children, params.cursor, self.page_size)
        out: dict[str, Any] = {"resources": items}
        if after is not None:
            out["nextCursor"] = after
        return out

    # ------------------------------------------------------------------ fallbacks

    async def _list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        _no_cursor(params)
        return types.ListPromptsResult(prompts=self._views(await self.state()).prompts)

    async def _get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        command = (await self.state()).commands.get(params.name)
        if command is None:
            raise _invalid(f"Unknown prompt: {params.name}")
        raw = (params.arguments or {}).get(PROMPT_ARGUMENT)
        args = js_trim(raw) if isinstance(raw, str) else ""
        text = rewrite_for_model(Invocation(command, args or None))
        message = types.PromptMessage(
            role="user", content=types.TextContent(type="text", text=text)
        )
        return types.GetPromptResult(description=command.description, messages=[message])

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        _no_cursor(params)
        tool = types.Tool(
            name=READ_TOOL,
            description="Read a skill's SKILL.md, or another file of the skill, as text.",
            input_schema=_READ_TOOL_SCHEMA,
            annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
        )
        tools = [tool]
        plan = self._plan(await self.state())
        if plan is not None:
            find = plan.find_tool()
            tools.append(
                types.Tool(
                    name=find.name,
                    description=find.description,
                    input_schema=find.schema,
                    annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
                )
            )
        return types.ListToolsResult(tools=tools)

    def _plan(self, state: ServedState) -> Any:
        """The selection plan of the served book (kept across reloads), or None when off."""
        if state.book.config.skills.selection.mode == "off":
            return None
        if self._selection is None or self._selection.book is not state.book:
            import os

            from skillbook.selection.plan import plan_for

            self._selection = plan_for(state.book, previous=self._selection, env=os.environ)
        return self._selection

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        plan = self._plan(await self.state()) if params.name == "find_skills" else None
        if plan is not None:
            found = await anyio.to_thread.run_sync(plan.find_tool().run, params.arguments or {})
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=found.text)], is_error=found.is_error
            )
        if params.name != READ_TOOL:
            raise _invalid(f"Unknown tool: {params.name}")
        args = params.arguments or {}
        name, path = args.get("name"), args.get("path")
        if not isinstance(name, str) or not (path is None or isinstance(path, str)):
            text, failed = "`name` must be a string, and `path` a string when given.", True
        else:
            text, failed = (await self.state()).read_skill(name, path)
        content: list[types.ContentBlock] = [types.TextContent(type="text", text=text)]
        return types.CallToolResult(content=content, is_error=failed)

    # ------------------------------------------------------------------ notifications

    async def _remember_legacy_session(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method == "notifications/initialized" and not _modern(ctx):
            self._legacy.append(ctx.session)
            del self._legacy[:-DEFAULT_MAX_LEGACY_SESSIONS]
        return result

    def _on_bump(self, token: anyio.lowlevel.EventLoopToken) -> Callable[[object], None]:
        def wake(_event: object) -> None:
            event = self._wake
            if event is None:
                return
            try:
                anyio.from_thread.run_sync(event.set, token=token)
            except RuntimeError:
                event.set()  # bumped from the event loop's own thread

        return wake

    async def notify_changes(self, old: ServedState, new: ServedState) -> None:
        """Publish what differs between two states (list changes, updated files)."""
        events: list[ServerEvent] = []
        legacy: list[str] = []
        if self._views(old).resources != self._views(new).resources:
            events.append(ResourcesListChanged())
            legacy.append("resources")
        if self._views(old).prompts != self._views(new).prompts:
            events.append(PromptsListChanged())
            legacy.append("prompts")
        before, after = old.digests(), new.digests()
        events.extend(ResourceUpdated(uri=u) for u, d in before.items() if after.get(u) != d)
        for event in events:
            await self.bus.publish(event)
        for session in list(self._legacy):
            try:
                if "resources" in legacy:
                    await session.send_resource_list_changed()
                if "prompts" in legacy:
                    await session.send_prompt_list_changed()
            except Exception as err:  # a closed session: forget it
                _log.debug("dropping a closed MCP session: %s", err, exc_info=err)
                self._legacy.remove(session)

    async def _notify_loop(self, baseline: ServedState) -> None:
        interval = self.catalog.rescan_interval_s
        while True:
            assert self._wake is not None
            # Woken by the watcher, or every rescan interval: the walk of the skill
            # folders runs here, off the request path (supporting-file edits too).
            woken = False
            with anyio.move_on_after(interval if interval > 0 else None):
                await self._wake.wait()
                woken = True
            self._wake = anyio.Event()
            if not woken and not self._asked:
                continue  # idle: nobody asked since the last walk, so do not walk
            self._asked = False
            state = await anyio.to_thread.run_sync(self.catalog.current)
            self.instructions = state.instructions or None
            if state is not baseline:
                await self.notify_changes(baseline, state)
            baseline = state

    @asynccontextmanager
    async def _lifespan(self, _server: object) -> AsyncIterator[dict[str, Any]]:
        """Runs the change notifier while the server runs (once, however many entries)."""
        if self._notifying:
            yield {}
            return
        self._notifying = True
        self._wake = anyio.Event()
        unsubscribe = self.catalog.session.versions.subscribe(
            self._on_bump(anyio.lowlevel.current_token())
        )
        try:
            baseline = await self.state()
            watcher = self.catalog.session.watcher
            if watcher is not None:
                # From here on no change is missed: the OS watches are in place.
                await anyio.to_thread.run_sync(watcher.wait_ready, WATCH_READY_TIMEOUT_S)
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._notify_loop, baseline)
                self._refreshing = True
                yield {}
                tg.cancel_scope.cancel()
        finally:
            unsubscribe()
            self._wake = None
            self._notifying = False
            self._refreshing = False
            if self._owns_session:
                self.catalog.session.close()

    # ------------------------------------------------------------------ running

    async def run_stdio(self) -> None:
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read_stream, write_stream):
            await self.run(read_stream, write_stream, self.create_initialization_options())

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
            app, host=host, port=bound, log_level="warning", lifespan="on", ws="none"
        )
        await uvicorn.Server(config).serve(sockets=[listening])

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
            self,
            host=host,
            port=port,
            path=path,
            token=token,
            max_sessions=max_sessions,
            stateless=stateless,
            served_state=self.state,
        )


# --------------------------------------------------------------------------- entry points


def build_server(
    loader_or_session: Loader | SkillSession,
    *,
    name: str = DEFAULT_SERVER_NAME,
    watch: bool = True,
    limits: sf.FileLimits = sf.DEFAULT_LIMITS,
    ttl_ms: int = DEFAULT_TTL_MS,
    page_size: int = DEFAULT_PAGE_SIZE,
    rescan_interval_s: float = DEFAULT_RESCAN_INTERVAL_S,
) -> SkillServer:
    """An MCP server for the skills of a loader (a new session, closed with the server)
    or of a caller's :class:`SkillSession` (left open)."""
    owns = not isinstance(loader_or_session, SkillSession)
    session = (
        SkillSession(loader_or_session, watch=watch)
        if not isinstance(loader_or_session, SkillSession)
        else loader_or_session
    )
    catalog = SkillCatalog(session, limits=limits, rescan_interval_s=rescan_interval_s)
    return SkillServer(catalog, name=name, owns_session=owns, ttl_ms=ttl_ms, page_size=page_size)


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


def serve(
    loader_or_session: Loader | SkillSession,
    *,
    transport: Transport = "stdio",
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    path: str = DEFAULT_HTTP_PATH,
    name: str = DEFAULT_SERVER_NAME,
    watch: bool = True,
    token: str | None = None,
    allow_unauthenticated: bool = False,
    stateless: bool = False,
) -> None:
    """Serve until the client disconnects (stdio) or the process is interrupted (http).

    ``stateless`` (http): keep no session, so replicas behind a load balancer can
    answer any request."""
    if transport not in ("stdio", "http"):
        raise ValueError(f"unknown transport {transport!r}: use 'stdio' or 'http'")
    sock = None
    if transport == "http":
        sock = bind_http(host, port, token=token, allow_unauthenticated=allow_unauthenticated)
    server = build_server(loader_or_session, name=name, watch=watch)
    if sock is None:
        run_event_loop(server.run_stdio)
    else:
        run_event_loop(
            lambda: server.run_http(
                host=host, path=path, token=token, sock=sock, stateless=stateless
            )
        )
