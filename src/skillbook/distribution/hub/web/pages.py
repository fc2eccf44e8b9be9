"""The registry's web pages: routes, sign-in, forms. Server-rendered, no script.

Input: requests to the same app (and port) as the API; the process's
:class:`~skillbook.distribution.hub.http.Hub`. Output: HTML from the Jinja templates
in ``templates/`` (autoescaped), one stylesheet and one icon, redirects. The pages read the catalog
through :mod:`.views` and change it only through :mod:`skillbook.distribution.hub.catalog`
(release and hold, as ``skillbook registry release/hold`` do), so a page never shows
or does what the API or the admin commands would not.

Every page counts against the address's ``read`` rate limit, a sign-in attempt
against its ``write`` limit (token guessing is limited as on the API). Forms that
change something need a signed-in admin and that session's CSRF token, and are
refused when the browser says the request came from another site. Any registry token
signs in: an admin's reviews (the admin page, release, hold); a publisher's shows them
their own skills' held versions on the skill and file pages, with their state, and
changes nothing.
"""

from __future__ import annotations

import base64
import functools
import hmac
import math
import time
from collections.abc import Awaitable, Callable
from importlib.resources import files
from typing import Any, Final
from urllib.parse import quote, urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from skillbook.distribution.hub import HubError, catalog
from skillbook.distribution.hub.http import Hub
from skillbook.distribution.hub.tokens import HANDLE_RE, authenticate
from skillbook.distribution.hub.web import views
from skillbook.distribution.hub.web.headers import PAGE_HEADERS
from skillbook.distribution.hub.web.session import (
    LOGIN_COOKIE,
    SESSION_COOKIE,
    SESSION_SECONDS,
    PageSession,
    csrf_valid,
    new_login_nonce,
    open_session,
    session_value,
)

__all__ = ["STYLESHEET", "web_routes"]

STYLESHEET: Final = "/static/registry.css"
ICON: Final = "/favicon.svg"
FLASH_COOKIE: Final = "skillbook_flash"
#: Skills per page of the home list, and the most a search shows.
PAGE_SIZE: Final = 50
#: Bytes of a text file the viewer shows; the rest is one click away (the raw file).
VIEWER_BYTES: Final = 512 * 1024
MAX_QUERY: Final = 200
MAX_REASON: Final = 500
#: The admin forms are a few short fields.
MAX_FORM_BYTES: Final = 16 * 1024


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    exp = min(int(math.log(n, 1024)), 3)
    return f"{n / 1024**exp:.1f} {'KMG'[exp - 1]}B"


def _when(ms: int | None) -> str:
    if not ms:
        return ""
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ms / 1000))


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("skillbook.distribution.hub.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["size"] = _size
    env.filters["when"] = _when
    env.filters["urlpart"] = lambda s: quote(str(s), safe="")
    env.filters["pathpart"] = lambda s: quote(str(s))
    env.globals["stylesheet"] = STYLESHEET
    env.globals["icon"] = ICON
    return env


_ENV: Environment | None = None


def _templates() -> Environment:
    global _ENV
    if _ENV is None:
        _ENV = _environment()
    return _ENV


def _hub(request: Request) -> Hub:
    hub: Hub = request.app.state.hub
    return hub


def _base_url(request: Request) -> str:
    public = _hub(request).settings.public_url
    return public.rstrip("/") if public else str(request.base_url).rstrip("/")


def _client(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def _viewer(request: Request) -> PageSession | None:
    """Who is signed in (any token), or None."""
    cookie = request.cookies.get(SESSION_COOKIE)
    if not cookie:
        return None
    with _hub(request).db.session() as session:
        return open_session(session, cookie)


def _admin_of(viewer: PageSession | None) -> PageSession | None:
    return viewer if viewer is not None and viewer.caller.admin else None


def _admin(request: Request) -> PageSession | None:
    """The signed-in admin, or None (nobody, or someone who may not review)."""
    return _admin_of(_viewer(request))


def _handle(viewer: PageSession | None) -> str | None:
    return viewer.caller.handle if viewer is not None else None


def page(
    request: Request,
    template: str,
    *,
    status: int = 200,
    viewer: PageSession | None = None,
    **context: Any,
) -> Response:
    """``template`` for ``viewer`` (who is signed in: the nav says so, and ``admin`` is
    set for an admin only)."""
    flash = _unpack_flash(request.cookies.get(FLASH_COOKIE, ""))
    html = (
        _templates()
        .get_template(template)
        .render(
            admin=_admin_of(viewer),
            viewer=viewer,
            csrf=viewer.csrf if viewer else "",
            q=context.pop("q", ""),
            flash=flash,
            **context,
        )
    )
    response = HTMLResponse(html, status_code=status, headers=PAGE_HEADERS)
    response.headers["Vary"] = "Cookie"
    if viewer is not None:
        response.headers["Cache-Control"] = "no-store"
    if flash:
        response.delete_cookie(FLASH_COOKIE, path="/")
    return response


def _not_found(request: Request, viewer: PageSession | None, what: str) -> Response:
    return page(request, "error.html", status=404, viewer=viewer, title="Not found", message=what)


def _secure(request: Request) -> bool:
    return request.url.scheme == "https"


Endpoint = Callable[[Request], Awaitable[Response]]


def _limited(kind: str, handler: Callable[[Request], Response]) -> Endpoint:
    """``handler`` run in the thread pool after the address's rate limit for ``kind``."""

    def admitted(request: Request) -> Response:
        decision = _hub(request).limiter.hit(kind, _client(request), token=False)
        if decision is not None and not decision.allowed:
            answer = page(
                request,
                "error.html",
                status=429,
                title="Too many requests",
                message=f"Too many requests from this address; try again in {decision.reset} s.",
            )
            answer.headers.update(decision.headers())
            return answer
        return handler(request)

    async def endpoint(request: Request) -> Response:
        return await run_in_threadpool(admitted, request)

    return endpoint


# -- public pages ---------------------------------------------------------------------


def home(request: Request) -> Response:
    hub = _hub(request)
    viewer = _viewer(request)
    q = request.query_params.get("q", "").strip()[:MAX_QUERY]
    try:
        number = max(1, int(request.query_params.get("page", "1")))
    except ValueError:
        number = 1
    if q:
        # The API's search, ranked by the same selector (``/api/v1/search``).
        entries = [h.entry for h in hub.search.search(q, limit=PAGE_SIZE)]
        more = False
    else:
        ordered = sorted(hub.search.entries(), key=lambda e: e.updated_at, reverse=True)
        start = (number - 1) * PAGE_SIZE
        entries = list(ordered[start : start + PAGE_SIZE])
        more = len(ordered) > start + PAGE_SIZE
    with hub.db.session() as session:
        cards = views.cards_for_entries(session, entries)
    return page(
        request,
        "home.html",
        viewer=viewer,
        q=q,
        cards=cards,
        number=number,
        more=more,
        title=f"Search: {q}" if q else "Skills",
    )


def skill(request: Request) -> Response:
    viewer = _viewer(request)
    slug = request.path_params["slug"]
    asked = request.query_params.get("version") or None
    with _hub(request).db.session() as session:
        found = views.skill_page(
            session, slug, asked, admin=_admin_of(viewer) is not None, viewer=_handle(viewer)
        )
    if found is None:
        return _not_found(request, viewer, "No such skill or version here.")
    return page(
        request,
        "skill.html",
        viewer=viewer,
        s=found,
        title=found.name,
        install=views.install_commands(_base_url(request), found.slug),
    )


def file_page(request: Request) -> Response:
    hub = _hub(request)
    viewer = _viewer(request)
    slug, path = request.path_params["slug"], request.path_params["path"]
    asked = request.query_params.get("version") or None
    with hub.db.session() as session:
        entry = views.file_entry(
            session,
            slug,
            asked,
            path,
            admin=_admin_of(viewer) is not None,
            viewer=_handle(viewer),
        )
    if entry is None:
        return _not_found(request, viewer, "No such file in this skill.")
    data = hub.blobs.get(entry.sha256)
    text: str | None
    try:
        text = data[:VIEWER_BYTES].decode("utf-8")
        if "\x00" in text:
            text = None
    except UnicodeDecodeError as exc:
        # A cut through a multi-byte character at the limit is still text.
        cut = len(data) > VIEWER_BYTES and exc.start >= VIEWER_BYTES - 4
        text = data[: exc.start].decode("utf-8") if cut else None
    raw = f"/api/v1/skills/{quote(entry.slug)}/file?" + urlencode(
        {"path": entry.path, "version": entry.version}
    )
    return page(
        request,
        "file.html",
        viewer=viewer,
        f=entry,
        text=text,
        truncated=text is not None and len(data) > VIEWER_BYTES,
        raw=raw if entry.status == "published" else None,
        title=f"{entry.path} · {entry.name}",
    )


def owner(request: Request) -> Response:
    viewer = _viewer(request)
    handle = str(request.path_params["handle"]).strip().lstrip("@").lower()
    if not HANDLE_RE.match(handle):
        return _not_found(request, viewer, "No such owner here.")
    with _hub(request).db.session() as session:
        cards = views.owner_cards(session, handle)
    if not cards:
        return _not_found(request, viewer, f"@{handle} has no skills here.")
    return page(
        request, "owner.html", viewer=viewer, handle=handle, cards=cards, title=f"@{handle}"
    )


def owner_and_slug(request: Request) -> Response:
    """ClawHub's page address ``/<owner>/<slug>``: redirected to ``/skills/<slug>``."""
    viewer = _viewer(request)
    who = str(request.path_params["owner"])
    slug = str(request.path_params["slug"])
    with _hub(request).db.session() as session:
        found = catalog.find_skill(session, slug, who)
        visible = found is not None and bool(
            views.visible_versions(
                found, admin=_admin_of(viewer) is not None, viewer=_handle(viewer)
            )
        )
        target = f"/skills/{quote(found.slug)}" if found is not None else ""
    if not visible:
        return _not_found(request, viewer, "No such skill here.")
    return RedirectResponse(target, status_code=301)


@functools.cache
def _static(name: str) -> bytes:
    return files("skillbook.distribution.hub.web").joinpath("static", name).read_bytes()


def _static_file(name: str, media_type: str, max_age: int) -> Endpoint:
    """A file of ``static/`` the registry serves itself (the pages load nothing else)."""

    async def serve(request: Request) -> Response:
        return Response(
            _static(name),
            media_type=media_type,
            headers={"Cache-Control": f"public, max-age={max_age}"},
        )

    return serve


async def no_icon(request: Request) -> Response:
    # Clients that ask for /favicon.ico by habit (not the pages, which name the SVG) get
    # an empty answer rather than a 404 in their console and in the access log.
    return Response(status_code=204, headers={"Cache-Control": "public, max-age=86400"})


# -- admin ----------------------------------------------------------------------------


def _cross_site(request: Request) -> bool:
    # Browsers say where a request came from; a form posted from another site is refused
    # even before the CSRF token is looked at.
    return request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none")


def _forbidden(request: Request, message: str, viewer: PageSession | None = None) -> Response:
    return page(
        request, "error.html", status=403, viewer=viewer, title="Forbidden", message=message
    )


def login_form(request: Request) -> Response:
    viewer = _viewer(request)
    if _admin_of(viewer) is not None:
        return RedirectResponse("/admin", status_code=303)
    # A publisher signed in may still sign in with an admin token here.
    return _login_page(request, status=200, error="", viewer=viewer)


def _login_page(
    request: Request, *, status: int, error: str, viewer: PageSession | None = None
) -> Response:
    nonce = new_login_nonce()
    answer = page(
        request,
        "login.html",
        status=status,
        viewer=viewer,
        nonce=nonce,
        error=error,
        title="Sign in",
    )
    answer.set_cookie(
        LOGIN_COOKIE,
        nonce,
        max_age=3600,
        path="/admin",
        httponly=True,
        samesite="strict",
        secure=_secure(request),
    )
    return answer


async def login(request: Request) -> Response:
    fields = await _small_form(request)
    if fields is None:
        return await run_in_threadpool(_bad_form, request)
    token = fields.get("token", "").strip()
    nonce = fields.get("nonce", "")
    cookie = request.cookies.get(LOGIN_COOKIE, "")
    if _cross_site(request) or not cookie or not hmac.compare_digest(nonce, cookie):
        return await run_in_threadpool(
            _login_page,
            request,
            status=403,
            error="The form expired or came from elsewhere; sign in again.",
        )
    return await run_in_threadpool(_login, request, token)


def _login(request: Request, token: str) -> Response:
    hub = _hub(request)
    decision = hub.limiter.hit("write", _client(request), token=False)
    if decision is not None and not decision.allowed:
        return _login_page(
            request, status=429, error=f"Too many attempts; try again in {decision.reset} s."
        )
    with hub.db.session() as session:
        caller = authenticate(session, token) if token else None
    if caller is None:
        return _login_page(request, status=401, error="That token is unknown or revoked.")
    if caller.admin:
        answer: Response = RedirectResponse("/admin", status_code=303)
    else:
        # A publisher reviews nothing; what signing in gives them is said once.
        answer = _flash_redirect(
            request,
            "/",
            f"Signed in as @{caller.handle}. The pages of your skills now show their held "
            "versions too; releasing them takes an admin.",
        )
    answer.set_cookie(
        SESSION_COOKIE,
        session_value(caller),
        max_age=SESSION_SECONDS,
        path="/",
        httponly=True,
        samesite="strict",
        secure=_secure(request),
    )
    answer.delete_cookie(LOGIN_COOKIE, path="/admin")
    return answer


def admin_home(request: Request) -> Response:
    admin = _admin(request)
    if admin is None:
        return RedirectResponse("/admin/login", status_code=303)
    with _hub(request).db.session() as session:
        held = views.held_rows(session)
        audit = views.audit_rows(session)
    return page(request, "admin.html", viewer=admin, held=held, audit=audit, title="Admin")


async def _small_form(request: Request) -> dict[str, str] | None:
    """The fields of a small urlencoded form, or None when the body is not one."""
    declared = request.headers.get("content-length", "")
    kind = request.headers.get("content-type", "")
    if not declared.isdigit() or int(declared) > MAX_FORM_BYTES:
        return None
    if not kind.startswith("application/x-www-form-urlencoded"):
        return None
    form = await request.form()
    fields = {k: v for k, v in form.items() if isinstance(v, str)}
    await form.close()
    return fields


def _bad_form(request: Request) -> Response:
    return page(
        request, "error.html", status=400, title="Bad request", message="Not a form this page sent."
    )


async def _admin_form(
    request: Request,
) -> tuple[PageSession | None, dict[str, str], Response | None]:
    fields = await _small_form(request)
    if fields is None:
        return None, {}, await run_in_threadpool(_bad_form, request)
    admin = await run_in_threadpool(_admin, request)
    if admin is None:
        return None, fields, RedirectResponse("/admin/login", status_code=303)
    if _cross_site(request) or not csrf_valid(admin, fields.get("csrf")):
        refused = await run_in_threadpool(
            _forbidden,
            request,
            "The form expired or came from elsewhere; reload and try again.",
            admin,
        )
        return admin, fields, refused
    return admin, fields, None


def _pack_flash(message: str) -> str:
    # A cookie value is ASCII without quotes or semicolons; a message may hold anything
    # an admin typed into a form (its version field) or an error repeated it.
    return base64.urlsafe_b64encode(message[:300].encode("utf-8")).decode("ascii")


def _unpack_flash(value: str) -> str:
    try:
        return base64.urlsafe_b64decode(value[:800].encode("ascii")).decode("utf-8", "replace")
    except (ValueError, UnicodeEncodeError):
        return ""


def _flash_redirect(request: Request, target: str, message: str) -> Response:
    answer = RedirectResponse(target, status_code=303)
    answer.set_cookie(
        FLASH_COOKIE,
        _pack_flash(message),
        max_age=60,
        path="/",
        httponly=True,
        samesite="strict",
        secure=_secure(request),
    )
    return answer


def _change(
    request: Request,
    admin: PageSession,
    fields: dict[str, str],
    change: Callable[..., Any],
    done: str,
) -> Response:
    slug, version = fields.get("slug", ""), fields.get("version", "")
    reason = fields.get("reason", "").strip()[:MAX_REASON]
    back = "/admin" if fields.get("back") != "skill" else f"/skills/{quote(slug)}"
    if not reason:
        return _flash_redirect(request, back, f"Not changed: {slug}@{version} needs a reason.")
    try:
        with _hub(request).db.session() as session:
            change(session, slug, version, actor=admin.caller.handle, reason=reason)
    except HubError as exc:
        return _flash_redirect(request, back, f"Not changed: {exc}")
    return _flash_redirect(request, back, f"{done} {slug}@{version}.")


async def release(request: Request) -> Response:
    admin, fields, refused = await _admin_form(request)
    if refused is not None or admin is None:
        return refused or RedirectResponse("/admin/login", status_code=303)
    return await run_in_threadpool(
        _change, request, admin, fields, catalog.release_version, "Released"
    )


async def hold(request: Request) -> Response:
    admin, fields, refused = await _admin_form(request)
    if refused is not None or admin is None:
        return refused or RedirectResponse("/admin/login", status_code=303)
    return await run_in_threadpool(_change, request, admin, fields, catalog.hold_version, "Held")


async def logout(request: Request) -> Response:
    fields = await _small_form(request)
    viewer = await run_in_threadpool(_viewer, request)
    if viewer is not None and (
        fields is None or _cross_site(request) or not csrf_valid(viewer, fields.get("csrf"))
    ):
        # A forged sign-out is refused too; without a session there is none to end.
        return await run_in_threadpool(
            _forbidden,
            request,
            "The form expired or came from elsewhere; reload and try again.",
            viewer,
        )
    answer = RedirectResponse("/", status_code=303)
    answer.delete_cookie(SESSION_COOKIE, path="/")
    return answer


def web_routes() -> list[BaseRoute]:
    """The page routes; mounted after the API's, the ``/<owner>/<slug>`` catch-all last."""
    read = "read"
    return [
        Route("/", _limited(read, home), methods=["GET"], name="home"),
        Route(
            STYLESHEET,
            _static_file("registry.css", "text/css; charset=utf-8", 3600),
            methods=["GET"],
            name="stylesheet",
        ),
        # The pages' icon (<link rel="icon">), a small SVG.
        Route(
            ICON, _static_file("favicon.svg", "image/svg+xml", 86400), methods=["GET"], name="icon"
        ),
        Route("/favicon.ico", no_icon, methods=["GET"], name="favicon"),
        Route("/skills/{slug}", _limited(read, skill), methods=["GET"], name="skill"),
        Route(
            "/skills/{slug}/files/{path:path}",
            _limited(read, file_page),
            methods=["GET"],
            name="file",
        ),
        Route("/u/{handle}", _limited(read, owner), methods=["GET"], name="owner"),
        Route("/admin", _limited(read, admin_home), methods=["GET"], name="admin"),
        Route("/admin/login", _limited(read, login_form), methods=["GET"], name="login_form"),
        Route("/admin/login", login, methods=["POST"], name="login"),
        Route("/admin/logout", logout, methods=["POST"], name="logout"),
        Route("/admin/release", release, methods=["POST"], name="release"),
        Route("/admin/hold", hold, methods=["POST"], name="hold"),
        Route(
            "/{owner}/{slug}", _limited(read, owner_and_slug), methods=["GET"], name="owner_slug"
        ),
    ]
