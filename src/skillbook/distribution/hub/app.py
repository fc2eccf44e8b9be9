"""The ASGI application: every route of the ClawHub API this registry serves, and its pages.

``create_app(settings)`` builds a Starlette app around one :class:`~skillbook.distribution.hub.http.Hub`
(database engine, blob store, search cache, rate limiter). ``app_from_env`` is the
factory uvicorn workers import: the serving process passes the settings in
``SKILLBOOK_HUB_SETTINGS`` as JSON, so every worker builds the same app. No route
keeps state of its own beyond caches and counts not yet flushed
(:mod:`skillbook.distribution.hub.hot`): two processes on one database and one blob
store answer alike, within the stated catalog-poll and flush delays; shutdown flushes.
The web pages (:mod:`skillbook.distribution.hub.web`) come after the API routes, and
every answer gets the security headers of :class:`~skillbook.distribution.hub.web.SecurityHeaders`.
Each process sweeps the store at start-up and periodically
(:mod:`skillbook.distribution.hub.housekeeping`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from skillbook.distribution.hub.housekeeping import Housekeeper, sweep_forever, sweep_logged
from skillbook.distribution.hub.http import Hub, answer_from_memory, route
from skillbook.distribution.hub.routes_read import FAST_HANDLERS as F
from skillbook.distribution.hub.routes_read import READ_HANDLERS as R
from skillbook.distribution.hub.routes_write import WRITE_HANDLERS as W
from skillbook.distribution.hub.server_config import HubSettings
from skillbook.distribution.hub.web.headers import SecurityHeaders
from skillbook.distribution.hub.web.pages import web_routes

__all__ = ["SETTINGS_ENV", "app_from_env", "create_app"]

#: The variable ``serve`` passes the settings in to its uvicorn workers.
SETTINGS_ENV = "SKILLBOOK_HUB_SETTINGS"


def _routes() -> list[BaseRoute]:
    def sizes_json(s: HubSettings) -> int:
        return s.sizes.max_json_bytes

    def sizes_file(s: HubSettings) -> int:
        return s.sizes.max_file_bytes

    def sizes_publish(s: HubSettings) -> int:
        return s.sizes.max_multipart_bytes

    skill = "/api/v1/skills/{slug}"
    return [
        Route("/healthz", _health, methods=["GET"]),
        route("/.well-known/clawhub.json", R["well_known"]),
        route("/.well-known/clawdhub.json", R["well_known"]),
        route(_SEARCH_PATH, R["search"], fast=F["search"]),
        route("/api/v1/trending", R["trending"]),
        route("/api/v1/resolve", R["resolve"]),
        route("/api/v1/download", R["download"], kind="download", fast=F["download"]),
        route("/api/v1/whoami", R["whoami"], auth=True),
        route(
            "/api/v1/skills/-/upload-url",
            W["upload_url"],
            methods=("POST",),
            kind="write",
            auth=True,
            body_limit=sizes_json,
        ),
        route(
            "/api/v1/uploads/{ticket}",
            W["upload"],
            methods=("POST", "PUT"),
            kind="write",
            auth=True,
            body_limit=sizes_file,
        ),
        route(
            "/api/v1/skills/-/security-verdicts",
            W["verdicts"],
            methods=("POST",),
            body_limit=sizes_json,
        ),
        route(
            "/api/v1/skills",
            W["publish"],
            methods=("POST",),
            kind="write",
            auth=True,
            body_limit=sizes_publish,
            multipart=True,
        ),
        route("/api/v1/skills", R["list_skills"]),
        route(skill, R["detail"]),
        route(skill + "/versions", R["versions"]),
        route(skill + "/versions/{version}", R["version_detail"]),
        route(skill + "/versions/{version}/scan", R["version_scan"]),
        route(skill + "/file", R["file"], kind="download"),
        route(skill + "/moderation", R["moderation"]),
        route(skill + "/install", R["install"]),
        route(skill + "/verify", R["verify"]),
        route(
            "/api/cli/telemetry/install", W["telemetry"], methods=("POST",), body_limit=sizes_json
        ),
    ]


async def _health(request: Request) -> Response:
    from starlette.concurrency import run_in_threadpool

    hub: Hub = request.app.state.hub
    generation = await run_in_threadpool(hub.db.generation)
    return JSONResponse({"ok": True, "generation": generation})


async def _not_found(request: Request, exc: Exception) -> Response:
    return Response("Not found", status_code=404, media_type="text/plain")


#: The route whose answers from memory skip Starlette's stack (``answer_from_memory``).
_SEARCH_PATH = "/api/v1/search"


class _Registry(Starlette):
    """The app, answering an anonymous search from memory before its middleware and router.

    The same answer, headers and count as the route's fast handler gives through the
    stack (tests/distribution/hub/test_search_same.py compares them); anything else, a
    ``HEAD`` or a mounted app (a ``root_path``) included, goes through the stack.
    """

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope["method"] == "GET"
            and scope["path"] == _SEARCH_PATH
            and not scope.get("root_path")
        ):
            answer = answer_from_memory(self.state.hub, scope, receive, F["search"], "read")
            if answer is not None:
                await answer(scope, receive, send)
                return
        await super().__call__(scope, receive, send)


def create_app(settings: HubSettings, *, hub: Hub | None = None, migrate: bool = True) -> Starlette:
    """The registry as an ASGI app; ``hub`` shares an already open one (tests)."""
    opened = hub or Hub.open(settings, migrate=migrate)
    keeper = Housekeeper(opened.db, opened.blobs, settings)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        from starlette.concurrency import run_in_threadpool

        # What a crash left is removed before the first request, then swept periodically.
        await run_in_threadpool(sweep_logged, keeper)
        opened.flusher.restart()
        interval = settings.housekeeping.sweep_seconds
        task = asyncio.create_task(sweep_forever(keeper, interval)) if interval > 0 else None
        try:
            yield
        finally:
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            # Counts still in memory reach the database before the process ends.
            await run_in_threadpool(opened.flusher.stop)
            if hub is None:
                opened.close()

    # The web pages share the process and port; their routes come after the API's.
    app = _Registry(
        routes=_routes() + web_routes(),
        middleware=[Middleware(SecurityHeaders)],
        lifespan=lifespan,
        exception_handlers={404: _not_found},
    )
    app.state.hub = opened
    app.state.housekeeper = keeper
    return app


def app_from_env() -> Starlette:
    """The factory uvicorn imports in each worker (the schema is already migrated)."""
    return create_app(HubSettings.from_json(os.environ[SETTINGS_ENV]), migrate=False)
