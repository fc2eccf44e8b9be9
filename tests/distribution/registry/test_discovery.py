"""Which registry: ``--site``/``CLAWHUB_SITE`` discovery through the site's
``/.well-known/clawhub.json`` (clawhub-api.md §1.1, §1.3), its place in the order, and
what happens when the document is missing or malformed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli.conftest import Shell, shell  # noqa: F401 (fixture)

from distribution.registry.clawhub_server import ClawHub, Failure
from distribution.registry.conftest import DEMO_V1
from skillbook.distribution.http import new_http
from skillbook.distribution.registry.discovery import discover
from skillbook.distribution.registry.endpoint import resolve_endpoint


def document(hub: ClawHub, value: object, name: str = "clawhub.json") -> None:
    hub.state.static[f"/.well-known/{name}"] = json.dumps(value).encode()


def test_apibase_then_the_legacy_document_then_none(hub: ClawHub) -> None:
    with new_http() as http:
        assert discover(hub.url, http) is None
        document(hub, {"registry": "http://legacy.test/api/"}, "clawdhub.json")
        found = discover(hub.url + "/", http)
        assert found is not None and found.api_base == "http://legacy.test/api"
        assert found.url == f"{hub.url}/.well-known/clawdhub.json"
        document(
            hub,
            {"apiBase": hub.url + "/x", "authBase": "https://auth.test", "minCliVersion": "0.0.5"},
        )
        found = discover(hub.url, http)
        assert found is not None
        assert (found.api_base, found.auth_base, found.min_cli_version) == (
            hub.url + "/x", "https://auth.test", "0.0.5",
        )  # fmt: skip
        # A non-2xx answer moves on to the legacy document.
        hub.state.fail("/.well-known/clawhub.json", Failure(500))
        fallback = discover(hub.url, http)
        assert fallback is not None and fallback.api_base == "http://legacy.test/api"
        for bad in ({"apiBase": 3}, ["x"], {"apiBase": "ftp://x"}):
            document(hub, bad)
            assert discover(hub.url, http) is None, bad
        hub.state.static["/.well-known/clawhub.json"] = b"<html>"
        assert discover(hub.url, http) is None
    assert all(r["headers"].get("Accept") == "application/json" for r in hub.state.requests)


def resolve(env: dict[str, str], home: Path, **kw: object) -> tuple[str, str]:
    def fetch(site: str) -> tuple[str, str] | None:
        with new_http() as http:
            found = discover(site, http)
        return (found.api_base, found.url) if found else None

    endpoint = resolve_endpoint(env, home=home, platform="linux", discover=fetch, **kw)  # type: ignore[arg-type]
    return endpoint.base_url, endpoint.base_reason


def test_where_discovery_sits_in_the_order(hub: ClawHub, tmp_path: Path) -> None:
    document(hub, {"apiBase": "http://discovered.test"})
    cached = tmp_path / ".config/clawhub/config.json"
    cached.parent.mkdir(parents=True)
    cached.write_text(json.dumps({"registry": "http://cached.test"}))
    site = {"CLAWHUB_SITE": hub.url}
    # A site's document beats the CLI's cached registry (the CLI's order) …
    assert resolve(site, tmp_path) == (
        "http://discovered.test",
        f"apiBase in {hub.url}/.well-known/clawhub.json",
    )
    assert resolve({"CLAWDHUB_SITE": hub.url}, tmp_path)[0] == "http://discovered.test"
    assert resolve({}, tmp_path, site=hub.url)[0] == "http://discovered.test"
    # … but any registry named outright beats discovery, which is then not asked.
    asked = len(hub.state.requests)
    assert (
        resolve({**site, "CLAWHUB_REGISTRY": "http://env.test"}, tmp_path)[0] == "http://env.test"
    )
    assert resolve(site, tmp_path, config_url="http://config.test")[0] == "http://config.test"
    assert resolve(site, tmp_path, explicit="http://flag.test")[0] == "http://flag.test"
    assert len(hub.state.requests) == asked
    # Without a site nothing is fetched: the cached registry, then the default.
    assert resolve({}, tmp_path) == ("http://cached.test", f"registry in {cached}")
    assert len(hub.state.requests) == asked
    # A site without a document falls through to the cached registry.
    del hub.state.static["/.well-known/clawhub.json"]
    assert resolve(site, tmp_path)[0] == "http://cached.test"
    cached.unlink()
    assert resolve(site, tmp_path) == ("https://clawhub.ai", "the default")


@pytest.fixture
def sh(shell: Shell, monkeypatch: pytest.MonkeyPatch) -> Shell:  # noqa: F811
    for name in ("CLAWHUB_URL", "OPENCLAW_CLAWHUB_URL", "CLAWHUB_REGISTRY", "CLAWDHUB_REGISTRY",
                 "CLAWHUB_SITE", "CLAWDHUB_SITE", "CLAWHUB_TOKEN", "CLAWHUB_CONFIG_PATH"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(shell.home / "xdg"))
    monkeypatch.setenv("SKILLBOOK_STATE_DIR", str(shell.home / "state"))
    return shell


def test_install_and_search_follow_the_site(sh: Shell, hub: ClawHub) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    document(hub, {"apiBase": hub.url})
    found = sh.run("search", "demo", "--site", hub.url)
    assert (found.exit_code, found.stdout) == (0, "demo v1.0.0  Demo\n")
    done = sh.run("install", "demo", "--site", hub.url, "--json")
    assert done.exit_code == 0, done.output
    [installed] = json.loads(done.stdout)["installed"]
    assert installed["origin"]["registry"] == hub.url
    bad = sh.run("search", "demo", "--site", "not a url")
    assert bad.exit_code == 2 and "Invalid registry URL: not a url" in bad.stderr
