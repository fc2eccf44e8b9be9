"""The request plumbing every route shares: auth, rate limits, body limits, error bodies.

Input: a Starlette request and the process's :class:`Hub`. Output: the response of
the route, with ``RateLimit-*`` headers, or a short plain-text error (the clawhub CLI
shows the body; ``Skill not found``-style texts are what it recognises). Database
work runs in the thread pool: the handlers are plain functions. A route may also have
a fast handler that answers an anonymous request from memory in the event loop
(a download or search this process answered before, in the current generation).
"""

from __future__ import annotations

import json as jsonlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope

from skillbook.distribution.hub import HttpError, HubError
from skillbook.distribution.hub.blobs import BlobStore, open_blob_store
from skillbook.distribution.hub.db import Database
from skillbook.distribution.hub.hot import (
    BlobCache,
    CatalogWatch,
    DownloadCounter,
    Flusher,
    ResolvedDownloads,
)
from skillbook.distribution.hub.ratelimit import RateDecision, RateLimiter
from skillbook.distribution.hub.search import HubSearch
from skillbook.distribution.hub.server_config import HubSettings
from skillbook.distribution.hub.tokens import Caller, authenticate
from skillbook.distribution.hub.web.headers import secure_headers

__all__ = ["Ctx", "Hub", "answer_from_memory", "json", "json_bytes", "route", "text"]

log = logging.getLogger("skillbook.distribution.hub")


@dataclass
class Hub:
    """What one server process holds: connections, caches and counts not yet flushed.

    The only state that is not a cache is what :attr:`flusher` has yet to write (at
    most ``flush_seconds`` of download and rate-limit counts); shutdown flushes it.
    """

    settings: HubSettings
    db: Database
    blobs: BlobStore
    search: HubSearch
    limiter: RateLimiter
    watch: CatalogWatch
    blob_cache: BlobCache
    resolved: ResolvedDownloads
    downloads: DownloadCounter
    flusher: Flusher

    @classmethod
    def open(cls, settings: HubSettings, *, migrate: bool = True) -> Hub:
        db = Database.open(settings.database_url, migrate_schema=migrate)
        index = Path(settings.index_dir) if settings.index_dir else None
        batched = settings.flush_seconds > 0
        watch = CatalogWatch(db, settings.catalog_poll_seconds)
        limiter = RateLimiter(db, settings.rate_limits, batched=batched)
        flusher = Flusher(settings.flush_seconds, [])
        downloads = DownloadCounter(db, batched=batched, wake=flusher.wake)
        flusher.jobs.extend([downloads.flush, limiter.flush])
        return cls(
            settings=settings,
            db=db,
            blobs=open_blob_store(settings.blob_url),
            search=HubSearch(
                db, backend=settings.search_backend, index_dir=index, generation=watch.current
            ),
            limiter=limiter,
            watch=watch,
            blob_cache=BlobCache(settings.blob_cache_bytes),
            resolved=ResolvedDownloads(),
            downloads=downloads,
            flusher=flusher,
        )

    @property
    def batched(self) -> bool:
        """Counts go through memory: a request answered from caches needs no database."""
        return self.settings.flush_seconds > 0

    def flush(self) -> None:
        """Write pending download and rate-limit counts now."""
        self.flusher.flush()

    def close(self) -> None:
        """Flush what is pending and release the database."""
        self.watch.stop()
        self.flusher.stop()
        self.db.close()


@dataclass
class Ctx:
    """One request as a handler sees it."""

    request: Request
    hub: Hub
    caller: Caller | None
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def query(self) -> QueryParams:
        return self.request.query_params

    def param(self, name: str) -> str:
        return str(self.request.path_params[name])

    @property
    def base_url(self) -> str:
        """Where clients reach this registry: the configured URL, else the request's host."""
        if self.hub.settings.public_url:
            return self.hub.settings.public_url.rstrip("/")
        return str(self.request.base_url).rstrip("/")

    def need_caller(self) -> Caller:
        if self.caller is None:
            raise HttpError(401, "Unauthorized")
        return self.caller


def json(data: Any, status: int = 200) -> Response:
    return JSONResponse(data, status_code=status)


def json_bytes(data: Any) -> bytes:
    """``data`` encoded as :func:`json`'s response body encodes it (Starlette's settings)."""
    return jsonlib.dumps(
        data, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")
    ).encode("utf-8")


def text(message: str, status: int) -> Response:
    return PlainTextResponse(message, status_code=status)


def _bearer(request: Request) -> str | None:
    value = request.headers.get("authorization", "")
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HttpError(413, f"Request body exceeds {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HttpError(413, f"Request body exceeds {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def _form(request: Request, settings: HubSettings) -> dict[str, Any]:
    """A multipart publish: the ``payload`` JSON part and the files, named by their paths."""
    from starlette.datastructures import UploadFile

    sizes = settings.sizes
    try:
        form = await request.form(max_files=sizes.max_files, max_part_size=sizes.max_json_bytes)
    except Exception as exc:  # python-multipart's errors have no common public base
        raise HttpError(400, f"Invalid multipart body: {exc}") from None
    payload = form.get("payload")
    if not isinstance(payload, str):
        raise HttpError(400, "multipart publish needs a payload part (JSON)")
    files: dict[str, bytes] = {}
    for name, value in form.multi_items():
        if name in ("files", "files[]") and isinstance(value, UploadFile):
            files[value.filename or ""] = await value.read()
    await form.close()
    try:
        # msgspec refuses lone surrogates (``\ud800``), which json.loads lets through and
        # the database then cannot store (a 500).
        data = msgspec.json.decode(payload.encode("utf-8", "surrogatepass"))
    except msgspec.DecodeError:
        raise HttpError(400, "payload is not JSON (or holds a lone surrogate)") from None
    return {"payload": data, "files": files}


Handler = Callable[[Ctx], Response]
#: Answers from memory in the event loop, or None to let the handler answer in a thread.
FastHandler = Callable[[Ctx], Response | None]


def route(
    path: str,
    handler: Handler,
    *,
    methods: tuple[str, ...] = ("GET",),
    kind: str = "read",
    auth: bool = False,
    body_limit: Callable[[HubSettings], int] | None = None,
    multipart: bool = False,
    fast: FastHandler | None = None,
) -> Route:
    """A route whose handler runs after auth, the rate limit and the body limit.

    With ``fast``, an anonymous request on a batching hub is admitted and, when the
    answer is in memory, answered in the event loop: no thread, no database.
    """

    def rate(request: Request, hub: Hub, caller: Caller | None) -> RateDecision | None:
        return _rate(request, hub, caller, kind, auth)

    def admit(request: Request, hub: Hub) -> tuple[Caller | None, RateDecision | None]:
        token = _bearer(request)
        caller = None
        if token is not None:
            with hub.db.session() as session:
                caller = authenticate(session, token)
        return caller, rate(request, hub, caller)

    async def endpoint(request: Request) -> Response:
        hub: Hub = request.app.state.hub
        decision: RateDecision | None = None
        if hub.batched:
            hub.flusher.ensure_started()
        hub.watch.start()
        try:
            if fast is not None and hub.batched and "authorization" not in request.headers:
                decision = rate(request, hub, None)
                ctx = Ctx(request=request, hub=hub, caller=None)
                answer = fast(ctx)
                response = answer if answer is not None else await run_in_threadpool(handler, ctx)
                if ctx.headers:
                    response.headers.update(ctx.headers)
                return _with_limits(response, decision)
            caller, decision = await run_in_threadpool(admit, request, hub)
            body = b""
            form = multipart and request.headers.get("content-type", "").startswith("multipart/")
            if body_limit is not None:
                limit = body_limit(hub.settings)
                if multipart and not form:
                    # The JSON publish names uploaded files; only a form carries their bytes.
                    limit = min(limit, hub.settings.sizes.max_json_bytes)
                body = await _read_body(request, limit)
            if form:
                request._body = body  # the form parser reads the body we already bounded
                request.state.multipart = await _form(request, hub.settings)
                body = b""
            ctx = Ctx(request=request, hub=hub, caller=caller, body=body)
            response = await run_in_threadpool(handler, ctx)
            response.headers.update(ctx.headers)
        except HttpError as exc:
            response = text(str(exc), exc.status)
            response.headers.update(exc.headers)
        except HubError as exc:
            response = json(exc.body, exc.status) if exc.body else text(str(exc), exc.status)
        return _with_limits(response, decision)

    return Route(path, endpoint, methods=list(methods), name=handler.__name__)


def _rate(
    request: Request, hub: Hub, caller: Caller | None, kind: str, auth: bool
) -> RateDecision | None:
    """Count the request; refuse it (429, or 401 where a token is needed) with the headers."""
    if caller is not None:
        subject = caller.token_hash[:32]
    else:
        # A missing or wrong token counts against the address: guessing tokens is
        # limited like any other anonymous traffic.
        # The scope's own pair: ``request.client`` builds a named tuple at each read.
        client = request.scope.get("client")
        subject = client[0] if client else "unknown"
    decision = hub.limiter.hit(kind, subject, token=caller is not None)
    refused = decision is not None and not decision.allowed
    if refused or (auth and caller is None):
        # Only a refusal carries the headers itself; an answer gets them at the end.
        headers = decision.headers() if decision is not None else {}
        if refused:
            who = "token" if caller else "address"
            raise HttpError(429, f"Rate limit exceeded for this {who}", headers)
        raise HttpError(401, "Unauthorized", headers)
    return decision


def answer_from_memory(
    hub: Hub, scope: Scope, receive: Receive, fast: FastHandler, kind: str
) -> Response | None:
    """What :func:`route`'s endpoint answers an anonymous request from memory, ahead of
    Starlette's middleware and router (they were a tenth of a new search's time).

    None when the request is not one a fast handler answers from memory (a token, a
    hub without batching, an answer not in memory, an error): the app's stack answers
    it then, and counts it, so no request is counted twice. An answered request is
    counted here and gets every header the stack would give it, in the same order: the
    answer's, the rate limit's and the security headers (a refusal its own).
    """
    if not hub.batched or any(name == b"authorization" for name, _ in scope["headers"]):
        return None
    hub.flusher.ensure_started()
    hub.watch.start()
    request = Request(scope, receive)
    ctx = Ctx(request=request, hub=hub, caller=None)
    try:
        answer = fast(ctx)
    except Exception:  # the stack answers it as it answers any error
        return None
    if answer is None:
        return None
    try:
        decision = _rate(request, hub, None, kind, False)
    except HttpError as exc:
        refusal = text(str(exc), exc.status)
        refusal.headers.update(exc.headers)
        return _secured(refusal)
    if ctx.headers:
        answer.headers.update(ctx.headers)
    return _secured(_with_limits(answer, decision))


def _secured(response: Response) -> Response:
    """The security headers :class:`~skillbook.distribution.hub.web.headers.SecurityHeaders` adds."""
    response.raw_headers[:] = secure_headers(response.raw_headers)
    return response


def _with_limits(response: Response, decision: RateDecision | None) -> Response:
    """The rate-limit headers, unless the response has them (a 429 or 401 carries its own).

    Appended to the raw header lines: the same bytes as ``headers.update``, which
    looked up and encoded each name again (most of what the limits cost a request).
    """
    if decision is not None:
        raw = response.raw_headers
        if not any(name == b"ratelimit-limit" for name, _ in raw):
            raw.extend(decision.raw_headers())
    return response
