"""Which registry every command uses: one precedence (skillbook.distribution.registry.endpoint), the
installed-skill rule (update goes back where a skill came from), and how output names it.

The end-to-end proof against ``skillbook registry serve`` is tests/distribution/hub/test_registry_choice.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli.conftest import Shell, shell  # noqa: F401 (fixture)
from hypothesis import given
from hypothesis import strategies as st

from distribution.registry.clawhub_server import ClawHub
from distribution.registry.conftest import DEMO_V1, DEMO_V2
from distribution.registry.tripwire import tripwire
from skillbook.distribution.registry import RegistryError
from skillbook.distribution.registry.endpoint import (
    DEFAULT_REGISTRY,
    Endpoint,
    installed_endpoint,
    normalize_base_url,
    resolve_endpoint,
    same_registry,
)

#: Every step that can name the registry, highest first: (where, kind, reason).
LADDER = [
    ("flag", "flag", "--registry"),
    ("SKILLBOOK_REGISTRY_URL", "env", "SKILLBOOK_REGISTRY_URL"),
    ("OPENCLAW_CLAWHUB_URL", "env", "OPENCLAW_CLAWHUB_URL"),
    ("CLAWHUB_URL", "env", "CLAWHUB_URL"),
    ("CLAWHUB_REGISTRY", "env", "CLAWHUB_REGISTRY"),
    ("CLAWDHUB_REGISTRY", "env", "CLAWDHUB_REGISTRY"),
    ("config", "config", "skills.registry.url in /cfg/skillbook.json"),
    ("site", "site", "apiBase in https://site.example/.well-known/clawhub.json"),
    ("cached", "cached", "registry in {home}/.config/clawhub/config.json"),
]


def url_of(step: str) -> str:
    return f"https://{step.lower().replace('_', '-')}.example"


def choose(home: Path, steps: set[str]) -> Endpoint:
    """resolve_endpoint with exactly ``steps`` set, each to its own URL."""
    cached = home / ".config/clawhub/config.json"
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps({"registry": url_of("cached")}) if "cached" in steps else "{}")
    env = {name: url_of(name) for name, kind, _ in LADDER if kind == "env" and name in steps}
    if "site" in steps:
        env["CLAWHUB_SITE"] = "https://site.example"
    return resolve_endpoint(
        env,
        home=home,
        platform="linux",
        explicit=url_of("flag") if "flag" in steps else None,
        config_url=url_of("config") if "config" in steps else None,
        config_url_reason="skills.registry.url in /cfg/skillbook.json",
        discover=lambda site: (url_of("site"), f"{site}/.well-known/clawhub.json"),
    )


@pytest.mark.parametrize("top", range(len(LADDER) + 1))
def test_each_step_wins_over_every_later_one(tmp_path: Path, top: int) -> None:
    chosen = choose(tmp_path, {step for step, _, _ in LADDER[top:]})
    if top == len(LADDER):
        assert (chosen.base_url, chosen.kind, chosen.base_reason) == (
            DEFAULT_REGISTRY, "default", "the default",
        )  # fmt: skip
        assert chosen.label == "clawhub.ai (default)"
        return
    step, kind, reason = LADDER[top]
    assert (chosen.base_url, chosen.kind) == (url_of(step), kind)
    assert chosen.base_reason == reason.format(home=tmp_path)
    assert chosen.label == url_of(step)


@given(st.sets(st.sampled_from([step for step, _, _ in LADDER])))
def test_the_first_step_set_always_decides(steps: set[str]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as home:
        chosen = choose(Path(home), steps)
    first = next((step for step, _, _ in LADDER if step in steps), None)
    assert chosen.base_url == (url_of(first) if first else DEFAULT_REGISTRY)


def test_the_default_is_labelled_as_such_and_a_chosen_clawhub_ai_is_not(tmp_path: Path) -> None:
    chosen = resolve_endpoint({}, home=tmp_path, platform="linux", explicit="https://clawhub.ai/")
    assert (chosen.label, chosen.kind) == ("https://clawhub.ai", "flag")
    assert Endpoint("http://127.0.0.1:9").label == "http://127.0.0.1:9"
    assert chosen.to_json()["registrySource"] == "flag"


def test_skillbook_registry_token_goes_first_and_only_to_the_chosen_registry(
    tmp_path: Path,
) -> None:
    env = {
        "SKILLBOOK_REGISTRY_URL": "https://hub.example.com",
        "SKILLBOOK_REGISTRY_TOKEN": "clh_team",
        "CLAWHUB_TOKEN": "clh_public",
    }
    chosen = resolve_endpoint(env, home=tmp_path, platform="linux")
    assert (chosen.token, chosen.token_reason) == ("clh_team", "SKILLBOOK_REGISTRY_TOKEN")
    # A skill installed from clawhub.ai is asked there, without the team's token.
    public = installed_endpoint(chosen, "https://clawhub.ai/")
    assert (public.base_url, public.kind, public.token) == (DEFAULT_REGISTRY, "recorded", None)
    assert public.label == "https://clawhub.ai"
    # The same registry, however spelled, keeps the chosen endpoint (and its token).
    assert installed_endpoint(chosen, "HTTPS://Hub.Example.com/") is chosen
    assert installed_endpoint(chosen, None) is chosen
    # The team's token never goes to a registry nobody chose.
    bare = resolve_endpoint(
        {"SKILLBOOK_REGISTRY_TOKEN": "clh_team"}, home=tmp_path, platform="linux"
    )
    assert (bare.base_url, bare.token) == (DEFAULT_REGISTRY, None)
    public = resolve_endpoint(
        {"SKILLBOOK_REGISTRY_TOKEN": "clh_team", "CLAWHUB_TOKEN": "clh_public"},
        home=tmp_path,
        platform="linux",
    )
    assert (public.token, public.token_reason) == ("clh_public", "CLAWHUB_TOKEN")
    assert same_registry("https://h.example/x/", "https://H.example/x")
    assert not same_registry("https://h.example/x", "https://h.example/y")
    with pytest.raises(RegistryError) as info:
        installed_endpoint(chosen, "javascript:alert(1)")
    assert info.value.code == "registry.invalid-url"
    assert "recorded for an installed skill" in info.value.message


@pytest.fixture
def two(shell: Shell, monkeypatch: pytest.MonkeyPatch) -> Any:  # noqa: F811
    """Two registries with a skill of the same name: ``old`` and ``new``."""
    for name in ("CLAWHUB_URL", "CLAWHUB_REGISTRY", "CLAWDHUB_REGISTRY", "CLAWHUB_TOKEN",
                 "CLAWHUB_AUTH_TOKEN", "CLAWHUB_CONFIG_PATH", "CLAWHUB_SITE"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(shell.home / "xdg"))
    monkeypatch.setenv("SKILLBOOK_STATE_DIR", str(shell.home / "state"))
    old, new = ClawHub(), ClawHub()
    old.state.publish("demo", "1.0.0", DEMO_V1)
    new.state.publish("demo", "1.0.0", DEMO_V1, owner="team")
    with tripwire(monkeypatch) as wire:
        yield shell, old, new
        assert wire.seen == []
    old.close()
    new.close()


def test_update_goes_back_to_where_the_skill_came_from_and_says_so(two: Any) -> None:
    sh, old, new = two
    assert sh.run("install", "demo", env={"SKILLBOOK_REGISTRY_URL": old.url}).exit_code == 0
    old.state.publish("demo", "1.1.0", DEMO_V2)
    new.state.publish("demo", "2.0.0", DEMO_V2, owner="team")
    asked_new = len(new.state.requests)
    env = {"SKILLBOOK_REGISTRY_URL": new.url, "SKILLBOOK_REGISTRY_TOKEN": "clh_team"}
    result = sh.run("update", "demo", env=env)
    assert result.exit_code == 0, result.output
    assert result.stdout == "Updated demo: 1.0.0 -> 1.1.0\n"
    assert f"Downloading demo@1.1.0 from {old.url}…" in result.stderr
    assert (
        f"skillbook: using {old.url} for the skills installed from it (their origin.json), "
        f"not {new.url} (SKILLBOOK_REGISTRY_URL); reinstall with "
        "`skillbook install NAME --force` to switch\n"
    ) in result.stderr
    assert len(new.state.requests) == asked_new
    # The team's token is for the team's registry only.
    assert all("Authorization" not in r["headers"] for r in old.state.requests)
    remote = sh.run("verify", "--remote", env=env)
    assert remote.stdout.splitlines()[1] == f"  {old.url} verify: pass"
    assert len(new.state.requests) == asked_new


def test_a_lock_entry_without_origin_json_still_names_its_registry(two: Any) -> None:
    sh, old, new = two
    assert sh.run("install", "demo", env={"CLAWHUB_URL": old.url}).exit_code == 0
    # OpenClaw 2026.9 records the registry in the lock entry too; a lost origin.json
    # must not send the update to whatever registry is set now.
    (sh.project / "skills/demo/.clawhub/origin.json").unlink()
    old.state.publish("demo", "1.1.0", DEMO_V2)
    new.state.publish("demo", "2.0.0", DEMO_V2, owner="team")
    result = sh.run("update", "demo", "--force", env={"CLAWHUB_REGISTRY": new.url})
    assert result.exit_code == 0, result.output
    assert f"Downloading demo@1.1.0 from {old.url}…" in result.stderr
    assert not any("/download" in r["path"] for r in new.state.requests)


def test_every_registry_command_names_the_registry_it_asked(two: Any) -> None:
    sh, old, _new = two
    env = {"CLAWHUB_REGISTRY": old.url}
    missing = sh.run("install", "nothing-here", env=env)
    assert missing.exit_code == 1
    assert f'Skill "nothing-here" not found on {old.url}.' in missing.stderr
    assert sh.run("search", "zzz", env=env).stdout == f"No skills found on {old.url}.\n"
    assert "ClawHub" not in missing.stderr


def test_doctor_shows_the_registry_and_why(shell: Shell, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    for name in ("CLAWHUB_URL", "CLAWHUB_REGISTRY", "CLAWHUB_TOKEN", "CLAWHUB_SITE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(shell.home / "xdg"))
    report = json.loads(shell.run("doctor", "--json").stdout)["registry"]
    assert (report["registry"], report["registrySource"], report["token"]) == (
        DEFAULT_REGISTRY, "default", False,
    )  # fmt: skip
    env = {
        "SKILLBOOK_REGISTRY_URL": "https://hub.example.com/",
        "CLAWHUB_REGISTRY": "https://other.example",
        "SKILLBOOK_REGISTRY_TOKEN": "clh_secret",
    }
    text = shell.run("doctor", env=env).stdout
    assert "Registry    https://hub.example.com  (SKILLBOOK_REGISTRY_URL)\n" in text
    assert "            token: SKILLBOOK_REGISTRY_TOKEN\n" in text
    assert "clh_secret" not in text
    site = shell.run("doctor", env={"CLAWHUB_SITE": "https://site.example"}).stdout
    assert "site: https://site.example/.well-known/clawhub.json (asked first by commands)" in site
    bad = shell.run("doctor", "--json", env={"SKILLBOOK_REGISTRY_URL": "nope"})
    assert bad.exit_code == 1
    problems = json.loads(bad.stdout)["problems"]
    assert {"code": "registry.invalid-url", "message": "Invalid registry URL: nope"} in problems


@given(st.text(max_size=40))
def test_any_registry_setting_is_a_clean_url_or_a_stable_error(raw: str) -> None:
    try:
        value = normalize_base_url(raw)
    except RegistryError as exc:
        assert exc.code == "registry.invalid-url"
        return
    assert value.startswith(("http://", "https://"))
    assert all(c.isprintable() and not c.isspace() for c in value)


@pytest.mark.parametrize(
    "raw", ["http://hub.example\x1b[31m", "http://a b", "http://[::1", "ftp://x"]
)
def test_urls_that_would_drive_a_terminal_or_break_are_refused(raw: str) -> None:
    with pytest.raises(RegistryError) as info:
        normalize_base_url(raw)
    assert info.value.code == "registry.invalid-url"
