"""``skillbook serve``: a workspace's skills over MCP, with the official Skills extension.

Input: a :class:`~skillbook.pipeline.book.Loader` or a :class:`~skillbook.runtime.session.SkillSession`.
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

This module holds the server and its request handlers; the change notifier is
:mod:`skillbook.mcp._notify`, the stdio/HTTP transports and :func:`bind_http`
:mod:`skillbook.mcp._transports`, and the wire objects :mod:`skillbook.mcp._wire`.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any, Literal

import anyio
import anyio.lowlevel
import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPError

from skillbook.base.js import js_trim
from skillbook.mcp import _skillfiles as sf
from skillbook.mcp import _skillformat as fmt
from skillbook.mcp._catalog import (
    DEFAULT_RESCAN_INTERVAL_S,
    READ_TOOL,
    ServedState,
    SkillCatalog,
)
from skillbook.mcp._notify import ChangeNotifier
from skillbook.mcp._transports import (
    DEFAULT_HOST,
    DEFAULT_HTTP_PATH,
    DEFAULT_PORT,
    Transports,
    bind_http,
    run_event_loop,
)
from skillbook.mcp._wire import (
    PROMPT_ARGUMENT,
    READ_TOOL_SCHEMA,
    DirectoryReadParams,
    GetSkillParams,
    Views,
    invalid,
    is_modern,
    no_cursor,
    page_of,
    prompts_of,
    resources_of,
)
from skillbook.pipeline.commands.invocation import Invocation, rewrite_for_model
from skillbook.runtime.session import SkillSession

if TYPE_CHECKING:
    from skillbook.pipeline.book import Loader

__all__ = ["SkillServer", "build_server", "serve"]

DEFAULT_SERVER_NAME = "skillbook"
#: Freshness hint of ``skills/list`` and ``skills/get`` (2026-07-28 only).
DEFAULT_TTL_MS = 30_000
#: The catalog is one user's workspace: never shareable across callers.
DEFAULT_CACHE_SCOPE: Literal["public", "private"] = "private"
DEFAULT_PAGE_SIZE = 100
Transport = Literal["stdio", "http"]

# --------------------------------------------------------------------------- server


class SkillServer(ChangeNotifier, Transports, Server[dict[str, Any]]):
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
        from skillbook.version import __version__

        self.catalog = catalog
        self.bus = InMemorySubscriptionBus()
        #: Serves ``subscriptions/listen``; closed when an HTTP server is asked to stop.
        self.listens = ListenHandler(self.bus)
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
        self._view_cache: Views | None = None
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
            on_subscriptions_listen=self.listens,
        )
        self.extensions[fmt.EXTENSION_ID] = {"directoryRead": True}
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

    async def state(self, max_age_s: float | None = None) -> ServedState:
        """The state a request answers from. While the change notifier runs, it also
        walks the skill folders every rescan interval, so a request takes the held
        state without leaving the event loop and only rebuilds (in a worker thread)
        when the skills changed or the notifier fell behind. ``max_age_s``: how old
        a held walk may be when the notifier is not running (default: the interval)."""
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
            state = await anyio.to_thread.run_sync(
                lambda: self.catalog.current(max_age_s=max_age_s)
            )
        # Read by server/discover and initialize: new sessions see the current catalog.
        self.instructions = state.instructions or None
        return state

    def _views(self, state: ServedState) -> Views:
        """The wire objects of one state, built once (resources, prompts)."""
        views = self._view_cache
        if views is None or views.state is not state:
            views = Views(state, resources_of(state), prompts_of(state))
            self._view_cache = views
        return views

    # ------------------------------------------------------------------ resources

    async def _list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        no_cursor(params)
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
            raise invalid(f"Unknown resource: {params.uri}{hint}", params.uri)
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
        if is_modern(ctx):
            out.update(resultType="complete", ttlMs=self.ttl_ms, cacheScope=self.cache_scope)
        return out

    @staticmethod
    def _require_modern(ctx: ServerRequestContext[Any, Any]) -> None:
        # The extension is served on 2026-07-28 only (see the module docstring).
        if not is_modern(ctx):
            raise MCPError(code=types.METHOD_NOT_FOUND, message="Method not found", data=ctx.method)

    async def _skills_list(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams
    ) -> dict[str, Any]:
        self._require_modern(ctx)
        entries = (await self.state()).entries
        items, after = page_of(entries, params.cursor, self.page_size)
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
            raise invalid(f"No skill is served at {params.uri}", params.uri)
        if served.problem is not None:
            raise invalid(f"{params.uri} is not served as a skill: {served.problem}", params.uri)
        return self._envelope(ctx, {"skill": served.entry()})

    async def _dir_read(
        self, ctx: ServerRequestContext[Any, Any], params: DirectoryReadParams
    ) -> dict[str, Any]:
        self._require_modern(ctx)
        found = (await self.state()).directory(params.uri)
        if found is None:
            raise invalid(f"{params.uri} is not a directory resource", params.uri)
        served, rel = found
        children = [
            {"uri": uri, "name": name, "mimeType": mime}
            for name, uri, mime in served.files.children(rel)
        ]
        items, after = page_of(children, params.cursor, self.page_size)
        out: dict[str, Any] = {"resources": items}
        if after is not None:
            out["nextCursor"] = after
        return out

    # ------------------------------------------------------------------ fallbacks

    async def _list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        no_cursor(params)
        return types.ListPromptsResult(prompts=self._views(await self.state()).prompts)

    async def _get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        command = (await self.state()).commands.get(params.name)
        if command is None:
            raise invalid(f"Unknown prompt: {params.name}")
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
        no_cursor(params)
        tool = types.Tool(
            name=READ_TOOL,
            description="Read a skill's SKILL.md, or another file of the skill, as text.",
            input_schema=READ_TOOL_SCHEMA,
            annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
        )
        tools = [tool]
        plan = self._plan(await self.state())
        if plan is not None:
            from skillbook.runtime.find_skills import find_tool

            find = find_tool(plan)
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
            from skillbook.runtime.find_skills import find_tool

            found = await anyio.to_thread.run_sync(find_tool(plan).run, params.arguments or {})
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=found.text)], is_error=found.is_error
            )
        if params.name != READ_TOOL:
            raise invalid(f"Unknown tool: {params.name}")
        args = params.arguments or {}
        name, path = args.get("name"), args.get("path")
        if not isinstance(name, str) or not (path is None or isinstance(path, str)):
            text, failed = "`name` must be a string, and `path` a string when given.", True
        else:
            text, failed = (await self.state()).read_skill(name, path)
        content: list[types.ContentBlock] = [types.TextContent(type="text", text=text)]
        return types.CallToolResult(content=content, is_error=failed)


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
