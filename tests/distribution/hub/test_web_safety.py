"""The registry's pages without a browser: the Markdown sanitiser, sign-in, CSRF, visibility.

The browser tests (``test_web_pages.py``) show what a person sees; these pin the rules
that keep a hostile skill's text inert and admin forms unforgeable, quickly and with
many inputs.
"""

from __future__ import annotations

import re
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from skillbook.distribution.hub.http import Hub
from skillbook.distribution.hub.server_config import HubSettings, RateLimits
from skillbook.distribution.hub.tokens import revoke_token
from skillbook.distribution.hub.web.render import ALLOWED_TAGS, Links, render_markdown
from skillbook.distribution.hub.web.session import SESSION_COOKIE, open_session

from .helpers import BASE, HIGH_LINE, make_skill, publish

LINKS = Links("demo", "1.0.0", frozenset({"SKILL.md", "references/guide.md", "img/logo.png"}))

#: Pieces of Markdown and HTML that try to run script, load from elsewhere or clobber the DOM.
HOSTILE = [
    "<script>alert(1)</script>",
    "<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
    '<img src=x onerror="alert(1)">',
    "<img src=https://evil.example/beacon.png>",
    "<svg onload=alert(1)><script>alert(2)</script><circle r=4 /></svg>",
    '<iframe src="https://evil.example/"></iframe>',
    "<object data=x.swf></object><embed src=x.swf>",
    "<style>body{background:url(https://evil.example/s)}</style>",
    '<a href="javascript:alert(1)">a</a>',
    '<a href="jav&#x61;script:alert(1)">b</a>',
    '<a href=" JaVaScRiPt:alert(1)">c</a>',
    '<a href="data:text/html,<script>alert(1)</script>">d</a>',
    '<a href="vbscript:msgbox(1)">e</a>',
    "[f](javascript:alert(1))",
    "[g](data:text/html;base64,PHNjcmlwdD4=)",
    "![h](https://evil.example/track.gif)",
    "![i](data:image/svg+xml;base64,PHN2Zz4=)",
    '<div style="position:fixed" id="main" name="x" onclick="alert(1)">j</div>',
    '<form action="https://evil.example/"><input name=token></form>',
    '<math><mi xlink:href="javascript:alert(1)">k</mi></math>',
    "<base href=https://evil.example/>",
    '<meta http-equiv="refresh" content="0;url=https://evil.example/">',
    '<link rel=stylesheet href="https://evil.example/x.css">',
    "<details open ontoggle=alert(1)><summary>l</summary>m</details>",
    "[n](//evil.example/x)",
    "[o](/admin)",
    "[p](../../etc/passwd)",
    "<!-- <script>alert(1)</script> -->",
    '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>',
    "`<script>`",
    "# Heading\n\n> quote\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
]


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))


def _elements(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Collect()
    parser.feed(html)
    parser.close()
    return parser.elements


def _assert_inert(html: str) -> None:
    for tag, attrs in _elements(html):
        assert tag in ALLOWED_TAGS, tag
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            assert name not in ("style", "id", "name", "class", "srcset"), (tag, name)
            if name == "href":
                assert value is not None
                parts = urlsplit(value)
                assert parts.scheme in ("http", "https", "mailto") or value.startswith(
                    ("/skills/demo/files/", "#")
                ), value
            if name == "src":
                # Images come only from the skill's own files, through the registry.
                assert value is not None and value.startswith("/api/v1/skills/demo/file?"), value


@pytest.mark.parametrize("piece", HOSTILE)
def test_each_hostile_piece_renders_inert(piece: str) -> None:
    html = render_markdown(piece, LINKS)
    _assert_inert(html)
    for word in ("<script", "<svg", "<iframe", "<object", "<embed", "<style", "<form", "<math"):
        assert word not in html.lower()
    assert "evil.example/beacon" not in html and "track.gif" not in html.split("href")[0]


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(st.sampled_from(HOSTILE) | st.text(max_size=12), max_size=8))
def test_any_mix_of_hostile_pieces_renders_inert(pieces: list[str]) -> None:
    _assert_inert(render_markdown("".join(pieces), LINKS))
    _assert_inert(render_markdown("\n".join(pieces), LINKS))


def test_markdown_renders_and_links_stay_inside_the_skill() -> None:
    html = render_markdown(
        "# Title\n\nSee [the guide](references/guide.md#setup), [docs](https://example.com/d), "
        "[gone](references/missing.md) and [up](../other/SKILL.md).\n\n"
        "![logo](img/logo.png) ![remote](https://cdn.example/x.png)\n\n"
        "<details><summary>More</summary>\n\n**bold** ~~old~~\n\n</details>\n",
        LINKS,
        heading_offset=2,
    )
    assert "<h3>Title</h3>" in html
    assert 'href="/skills/demo/files/references/guide.md?version=1.0.0#setup"' in html
    assert 'href="https://example.com/d" rel="nofollow noopener noreferrer"' in html
    # Links to files the version lacks, or outside it, keep their text and lose the link.
    assert '<a rel="nofollow noopener noreferrer">gone</a>' in html
    assert '<a rel="nofollow noopener noreferrer">up</a>' in html
    assert (
        '<img src="/api/v1/skills/demo/file?path=img%2Flogo.png&amp;version=1.0.0" alt="logo">'
        in html
    )
    # A remote image is not fetched by the reader's browser: it becomes a link.
    assert (
        '<a href="https://cdn.example/x.png" rel="nofollow noopener noreferrer">image: remote</a>'
        in html
    )
    assert "<details><summary>More</summary>" in html
    assert "<strong>bold</strong>" in html and "<s>old</s>" in html


def test_raw_html_text_of_a_code_span_is_shown_not_run() -> None:
    assert render_markdown("`<script>alert(1)</script>`") == (
        "<p><code>&lt;script&gt;alert(1)&lt;/script&gt;</code></p>\n"
    )


# -- pages over HTTP (in-process) --------------------------------------------------------


def _hostile_skill(tmp_path: Path) -> Path:
    return make_skill(
        tmp_path / "hostile",
        "hostile",
        "Looks friendly.",
        body="\n\n".join(HOSTILE),
        extra={"notes.txt": "<script>alert('file')</script>\n"},
    )


def _held(client: TestClient, token: str, tmp_path: Path) -> None:
    folder = make_skill(tmp_path / "tool", "tool", "A helpful tool.")
    publish(client, token, folder)
    make_skill(folder, "tool", "A helpful tool.", body=f"```sh\n{HIGH_LINE}```")
    assert publish(client, token, folder, version="1.1.0").status == "pending"


def _sign_in(client: TestClient, token: str) -> str:
    """Sign in through the form; returns the session's CSRF token."""
    form = client.get("/admin/login")
    nonce = re.search(r'name="nonce" value="([^"]+)"', form.text)
    assert nonce is not None
    answer = client.post(
        "/admin/login",
        data={"token": token, "nonce": nonce.group(1)},
        follow_redirects=False,
    )
    assert answer.status_code == 303, answer.text
    page = client.get("/admin")
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert csrf is not None
    return csrf.group(1)


def test_a_hostile_skill_page_holds_none_of_its_markup(
    client: TestClient, token: str, tmp_path: Path
) -> None:
    publish(client, token, _hostile_skill(tmp_path))
    page = client.get("/skills/hostile")
    assert page.status_code == 200
    body = page.text.lower()
    for word in ("<script", "<svg", "<iframe", "<object", "<embed", '<form action="https'):
        assert word not in body
    for tag, attrs in _elements(page.text):
        assert not any(name.startswith("on") for name in attrs), tag
        for name in ("href", "src", "action"):
            value = (attrs.get(name) or "").strip().lower()
            assert not value.startswith(("javascript:", "data:", "vbscript:", "//")), (tag, value)
            if name == "src" and name in attrs:
                assert value.startswith("/"), value
    viewer = client.get("/skills/hostile/files/notes.txt")
    assert "&lt;script&gt;alert(&#39;file&#39;)&lt;/script&gt;" in viewer.text
    assert "<script>" not in viewer.text


def test_pages_carry_a_strict_policy_and_the_api_a_sandbox(
    client: TestClient, token: str, tmp_path: Path
) -> None:
    publish(client, token, _hostile_skill(tmp_path))
    for path in ("/", "/skills/hostile", "/skills/hostile/files/notes.txt", "/u/alice"):
        headers = client.get(path).headers
        policy = headers["content-security-policy"]
        assert "default-src 'self'" in policy and "script-src 'none'" in policy
        assert "frame-ancestors 'none'" in policy
        assert headers["x-content-type-options"] == "nosniff"
    # A skill's HTML file opened from the file route cannot run script in this origin.
    raw = client.get("/api/v1/skills/hostile/file", params={"path": "notes.txt"})
    assert raw.text == "<script>alert('file')</script>\n"
    assert raw.headers["content-security-policy"] == "default-src 'none'; sandbox"
    assert raw.headers["x-content-type-options"] == "nosniff"


def test_clawhub_page_addresses_redirect_to_the_skill_page(
    client: TestClient, token: str, tmp_path: Path
) -> None:
    publish(client, token, make_skill(tmp_path / "weather", "weather", "Forecasts."))
    for owner in ("alice", "@alice", "Alice"):
        answer = client.get(f"/{owner}/weather", follow_redirects=False)
        assert (answer.status_code, answer.headers["location"]) == (301, "/skills/weather")
    assert client.get("/bob/weather", follow_redirects=False).status_code == 404
    assert client.get("/u/alice").status_code == 200
    assert client.get("/u/bob").status_code == 404


def test_held_versions_are_invisible_without_an_admin_session(
    client: TestClient, token: str, admin_token: str, tmp_path: Path
) -> None:
    _held(client, token, tmp_path)
    page = client.get("/skills/tool")
    assert "1.1.0" not in page.text and "1.0.0" in page.text
    assert client.get("/skills/tool", params={"version": "1.1.0"}).status_code == 404
    assert client.get("/skills/tool/files/SKILL.md", params={"version": "1.1.0"}).status_code == 404
    assert "1.1.0" not in client.get("/admin", follow_redirects=True).text
    # A bearer token is not a page session: the API's rules stay the API's.
    header = {"Authorization": f"Bearer {admin_token}"}
    assert (
        client.get("/skills/tool", params={"version": "1.1.0"}, headers=header).status_code == 404
    )
    _sign_in(client, admin_token)
    assert (
        "held for security review" in client.get("/skills/tool", params={"version": "1.1.0"}).text
    )
    assert "tool@1.1.0" in client.get("/admin").text


def test_sign_in_needs_the_form_nonce_and_a_live_token(
    client: TestClient, token: str, admin_token: str
) -> None:
    form = client.get("/admin/login")
    assert 'type="password"' in form.text
    cookie = form.cookies.get("skillbook_login")
    assert cookie
    set_cookie = form.headers["set-cookie"].lower()
    assert "httponly" in set_cookie and "samesite=strict" in set_cookie
    nonce = re.search(r'name="nonce" value="([^"]+)"', form.text)
    assert nonce is not None
    # A form posted from elsewhere has no nonce this browser was given.
    forged = client.post("/admin/login", data={"token": admin_token, "nonce": "guess"})
    assert forged.status_code == 403 and SESSION_COOKIE not in forged.cookies
    nonce = re.search(r'name="nonce" value="([^"]+)"', forged.text)  # the new form's
    assert nonce is not None
    wrong = client.post("/admin/login", data={"token": "clh_nope", "nonce": nonce.group(1)})
    assert wrong.status_code == 401 and "unknown or revoked" in wrong.text
    form = client.get("/admin/login")
    nonce = re.search(r'name="nonce" value="([^"]+)"', form.text)
    assert nonce is not None
    # A publisher's token signs in too, to see their own held versions; it reviews nothing.
    user = client.post(
        "/admin/login", data={"token": token, "nonce": nonce.group(1)}, follow_redirects=False
    )
    assert (user.status_code, user.headers["location"]) == (303, "/")
    assert SESSION_COOKIE in client.cookies and token not in client.cookies[SESSION_COOKIE]
    home = client.get("/")
    assert "Signed in as @alice" in home.text and "Admin (@" not in home.text
    assert client.get("/admin", follow_redirects=False).headers["location"] == "/admin/login"
    _sign_in(client, admin_token)
    session_cookie = client.cookies.get(SESSION_COOKIE)
    assert session_cookie and admin_token not in session_cookie


def test_release_and_hold_need_the_session_csrf_token(
    client: TestClient, hub: Hub, token: str, admin_token: str, tmp_path: Path
) -> None:
    _held(client, token, tmp_path)
    csrf = _sign_in(client, admin_token)
    download = {"slug": "tool", "version": "1.1.0"}
    form = {"slug": "tool", "version": "1.1.0", "reason": "reviewed"}
    for bad in ({}, {"csrf": ""}, {"csrf": csrf[:-2] + "xx"}):
        refused = client.post("/admin/release", data={**form, **bad}, follow_redirects=False)
        assert refused.status_code == 403
    cross = client.post(
        "/admin/release",
        data={**form, "csrf": csrf},
        headers={"Sec-Fetch-Site": "cross-site"},
        follow_redirects=False,
    )
    assert cross.status_code == 403
    assert client.get("/api/v1/download", params=download).status_code == 423
    # Without a reason nothing changes (the audit log keeps one for every change).
    client.post("/admin/release", data={**form, "reason": " ", "csrf": csrf})
    assert client.get("/api/v1/download", params=download).status_code == 423
    done = client.post("/admin/release", data={**form, "csrf": csrf}, follow_redirects=False)
    assert (done.status_code, done.headers["location"]) == (303, "/admin")
    assert "Released tool@1.1.0." in client.get("/admin").text
    assert client.get("/api/v1/download", params=download).status_code == 200
    audit = client.get("/admin").text
    assert "release" in audit and "reviewed" in audit and "root" in audit
    # Hold it again from the skill page's form.
    held = client.post(
        "/admin/hold", data={**form, "csrf": csrf, "back": "skill"}, follow_redirects=False
    )
    assert (held.status_code, held.headers["location"]) == (303, "/skills/tool")
    assert client.get("/api/v1/download", params=download).status_code == 423
    # Another admin's CSRF token does not fit this session.
    with hub.db.session() as session:
        from skillbook.distribution.hub.tokens import create_token

        other = create_token(session, "ops", admin=True)
    with TestClient(client.app, base_url=BASE) as second:
        other_csrf = _sign_in(second, other)
    refused = client.post(
        "/admin/release", data={**form, "csrf": other_csrf}, follow_redirects=False
    )
    assert refused.status_code == 403


def test_a_session_ends_with_its_token_and_cannot_be_forged(
    client: TestClient, hub: Hub, admin_token: str
) -> None:
    _sign_in(client, admin_token)
    cookie = client.cookies[SESSION_COOKIE]
    with hub.db.session() as session:
        assert open_session(session, cookie) is not None
        version, token_id, expires, mac = cookie.split(".")
        # The last character must change whatever it was: a fixed "A" left one
        # cookie in sixteen unforged (a 32-byte MAC's last base64 character
        # is one of sixteen).
        other_last = "E" if mac.endswith("A") else "A"
        for forged in (
            f"{version}.{token_id}.{int(expires) + 999}.{mac}",
            f"{version}.{token_id}.{expires}.{mac[:-1]}{other_last}",
            f"{version}.{int(token_id) + 1}.{expires}.{mac}",
            "v1.1.99999999999.x",
            "",
            "x" * 500,
        ):
            assert open_session(session, forged) is None
        assert open_session(session, cookie, now=time.time() + 13 * 3600) is None
        revoke_token(session, admin_token[:10])
    assert "Signed in as" not in client.get("/admin", follow_redirects=True).text
    assert client.get("/admin", follow_redirects=False).headers["location"] == "/admin/login"


def _sign_in_as(client: TestClient, token: str) -> str:
    """Sign in through the form with any token; returns the session's CSRF token (from
    the sign-out form every page carries)."""
    form = client.get("/admin/login")
    nonce = re.search(r'name="nonce" value="([^"]+)"', form.text)
    assert nonce is not None
    answer = client.post(
        "/admin/login", data={"token": token, "nonce": nonce.group(1)}, follow_redirects=False
    )
    assert answer.status_code == 303, answer.text
    csrf = re.search(r'name="csrf" value="([^"]+)"', client.get("/").text)
    assert csrf is not None
    return csrf.group(1)


def test_an_owner_signed_in_sees_their_held_versions_with_their_state(
    client: TestClient, hub: Hub, token: str, tmp_path: Path
) -> None:
    _held(client, token, tmp_path)  # alice's tool: 1.0.0 published, 1.1.0 held
    # Held at its first version: a skill only its owner (and admins) can open.
    gizmo = make_skill(tmp_path / "gizmo", "gizmo", "A gizmo.", body=f"```sh\n{HIGH_LINE}```")
    assert publish(client, token, gizmo).status == "pending"
    with hub.db.session() as session:
        from skillbook.distribution.hub.tokens import create_token

        bob = create_token(session, "bob")
    with TestClient(client.app, base_url=BASE) as other:
        _sign_in_as(other, bob)
        assert "1.1.0" not in other.get("/skills/tool").text
        assert other.get("/skills/tool", params={"version": "1.1.0"}).status_code == 404
        assert other.get("/skills/gizmo").status_code == 404
    _sign_in_as(client, token)
    page = client.get("/skills/tool")
    assert page.status_code == 200 and page.headers["cache-control"] == "no-store"
    versions = page.text.split('<ol class="versions">', 1)[1]
    assert "1.1.0" in versions and "Held: not downloadable" in versions
    assert "Held for review" in versions  # the scan's verdict, as admins see it
    held = client.get("/skills/tool", params={"version": "1.1.0"})
    assert held.status_code == 200
    assert "held for security review" in held.text and "Only you, the skill" in held.text
    assert "/admin/release" not in held.text  # the owner may not release it
    assert client.get("/skills/tool/files/SKILL.md", params={"version": "1.1.0"}).status_code == 200
    assert client.get("/skills/gizmo").status_code == 200
    assert client.get("/alice/gizmo", follow_redirects=False).status_code == 301
    # Still held for everyone else: not listed, searched or downloadable.
    gizmo_download = {"slug": "gizmo", "version": "1.0.0"}
    assert client.get("/api/v1/download", params=gizmo_download).status_code == 423


def test_an_owners_session_reviews_nothing_and_signs_out_with_its_token(
    client: TestClient, token: str, tmp_path: Path
) -> None:
    _held(client, token, tmp_path)
    csrf = _sign_in_as(client, token)
    form = {"slug": "tool", "version": "1.1.0", "reason": "mine", "csrf": csrf}
    for action in ("/admin/release", "/admin/hold"):
        refused = client.post(action, data=form, follow_redirects=False)
        assert (refused.status_code, refused.headers["location"]) == (303, "/admin/login")
    download = {"slug": "tool", "version": "1.1.0"}
    assert client.get("/api/v1/download", params=download).status_code == 423
    assert client.get("/admin", follow_redirects=False).headers["location"] == "/admin/login"
    forged = client.post("/admin/logout", data={"csrf": "guess"}, follow_redirects=False)
    assert forged.status_code == 403 and SESSION_COOKIE in client.cookies
    done = client.post("/admin/logout", data={"csrf": csrf}, follow_redirects=False)
    assert done.status_code == 303 and SESSION_COOKIE not in client.cookies
    assert "1.1.0" not in client.get("/skills/tool").text


def test_the_pages_have_an_icon_and_favicon_ico_answers(client: TestClient) -> None:
    home = client.get("/")
    assert '<link rel="icon" href="/favicon.svg" type="image/svg+xml">' in home.text
    icon = client.get("/favicon.svg")
    assert icon.status_code == 200 and icon.headers["content-type"] == "image/svg+xml"
    assert icon.content.startswith(b"<svg") and len(icon.content) < 1024
    css = client.get("/static/registry.css")  # served by the same static route
    assert css.status_code == 200 and css.headers["content-type"] == "text/css; charset=utf-8"
    assert css.headers["cache-control"] == "public, max-age=3600" and b".verdict" in css.content
    # Asked for by habit (crawlers, tools): an empty answer, not a 404.
    ico = client.get("/favicon.ico")
    assert ico.status_code == 204 and ico.content == b""


@pytest.fixture
def strict_settings(tmp_path: Path) -> HubSettings:
    return HubSettings(
        database_url=f"sqlite:///{tmp_path / 'db' / 'metadata.sqlite3'}",
        blob_url=str(tmp_path / "blobs"),
        search_backend="bm25",
        rate_limits=RateLimits(write_per_ip=3, read_per_ip=1000),
    )


def test_sign_in_attempts_count_against_the_write_limit(strict_settings: HubSettings) -> None:
    from skillbook.distribution.hub.app import create_app

    from .helpers import fresh_rate_window

    hub = Hub.open(strict_settings)
    try:
        fresh_rate_window(5)
        with TestClient(create_app(strict_settings, hub=hub), base_url=BASE) as c:
            statuses = []
            for _ in range(5):
                nonce = re.search(r'name="nonce" value="([^"]+)"', c.get("/admin/login").text)
                assert nonce is not None
                answer = c.post(
                    "/admin/login", data={"token": "clh_guess", "nonce": nonce.group(1)}
                )
                statuses.append(answer.status_code)
        assert statuses == [401, 401, 401, 429, 429]
    finally:
        hub.db.close()


def test_the_home_page_searches_with_the_api_selector(
    client: TestClient, token: str, tmp_path: Path
) -> None:
    publish(client, token, make_skill(tmp_path / "weather", "weather", "Get a weather forecast."))
    publish(client, token, make_skill(tmp_path / "notes", "notes", "Take meeting notes."))
    api = [
        r["slug"] for r in client.get("/api/v1/search", params={"q": "forecast"}).json()["results"]
    ]
    page = client.get("/", params={"q": "forecast"}).text
    shown = re.findall(r'<h3><a href="/skills/([a-z-]+)">', page)
    assert shown == api == ["weather"]
    everything = re.findall(r'<h3><a href="/skills/([a-z-]+)">', client.get("/").text)
    assert sorted(everything) == ["notes", "weather"]


def test_a_refusal_naming_any_characters_reaches_the_admin(
    client: TestClient, admin_token: str
) -> None:
    csrf = _sign_in(client, admin_token)
    form = {"slug": 'tool-版;"', "version": "1.0.0", "reason": "r", "csrf": csrf}
    answer = client.post("/admin/release", data=form, follow_redirects=False)
    assert answer.status_code == 303
    shown = client.get("/admin").text
    assert "Not changed: skill &#39;tool-版;&#34;&#39; not found" in shown
    # Shown once: the message does not follow the admin around.
    assert "Not changed" not in client.get("/admin").text


def test_a_huge_skill_md_is_rendered_up_to_a_limit() -> None:
    from skillbook.distribution.hub.web.views import MAX_RENDERED, rendered

    html = rendered("word " * (MAX_RENDERED // 4), None, 2)
    assert len(html) < MAX_RENDERED + 1000
    assert "Cut here: the file is longer than this page shows." in html
