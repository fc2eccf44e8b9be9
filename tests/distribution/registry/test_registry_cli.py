"""``skillbook search/install/update/remove/verify`` in-process: OpenClaw's lines (§10),
exit codes, ``--json``, ``--global``, and ``list``/``info`` showing where skills came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli.conftest import Shell, shell  # noqa: F401 (fixture)
from factories import write_skill

from distribution.registry.clawhub_server import ClawHub, Failure
from distribution.registry.conftest import DEMO_V1, DEMO_V2, point_at


@pytest.fixture
def sh(shell: Shell, hub: ClawHub, monkeypatch: pytest.MonkeyPatch) -> Shell:  # noqa: F811
    point_at(shell, hub, monkeypatch)
    hub.state.publish("demo", "1.0.0", DEMO_V1, summary="Says hello")
    return shell


def test_search_lines_and_json(sh: Shell, hub: ClawHub) -> None:
    result = sh.run("search", "dem")
    assert (result.exit_code, result.stdout) == (0, "demo v1.0.0  Demo  Says hello\n")
    assert hub.state.requests[-1]["query"] == {"q": "dem"}
    none = sh.run("search", "zzz")
    assert none.stdout == f"No skills found on {hub.url}.\n"
    as_json = json.loads(sh.run("search", "--json", "--limit", "3").stdout)
    assert as_json["results"][0]["slug"] == "demo"
    assert hub.state.requests[-1]["query"] == {"q": "*", "limit": "3"}


def test_install_update_verify_remove(sh: Shell, hub: ClawHub) -> None:
    project = sh.project
    result = sh.run("install", "demo")
    assert result.exit_code == 0, result.output
    assert result.stdout == f"Installed demo@1.0.0 -> {project}/skills/demo\n"
    assert f"Downloading demo@1.0.0 from {hub.url}…" in result.stderr
    again = sh.run("install", "demo")
    assert again.exit_code == 1
    assert (
        f"Skill already exists at {project}/skills/demo. Re-run with force/update." in again.stderr
    )
    listed = sh.run("list")
    assert "demo" in listed.stdout and "workspace (clawhub)" in listed.stdout
    entry = next(
        s for s in json.loads(sh.run("list", "--json").stdout)["skills"] if s["name"] == "demo"
    )
    assert entry["installed"]["kind"] == "clawhub" and entry["installed"]["version"] == "1.0.0"
    info = sh.run("info", "demo").stdout
    assert f"  Installed: {hub.url} @bar-owner/demo@1.0.0" in info
    assert sh.run("verify").stdout == "✓ demo (clawhub 1.0.0): unchanged\n"
    hub.state.publish("demo", "1.1.0", DEMO_V2)
    write_skill(project / "skills/demo", description="Mine.", body="")
    refused = sh.run("update", "demo")
    assert refused.exit_code == 1 and "has local changes (1 changed: SKILL.md)" in refused.stderr
    assert sh.run("verify").exit_code == 1
    forced = sh.run("update", "--all", "--force")
    assert (forced.exit_code, forced.stdout) == (0, "Updated demo: 1.0.0 -> 1.1.0\n")
    assert sh.run("update", "demo").stdout == "demo already at 1.1.0\n"
    removed = sh.run("remove", "demo")
    assert (removed.exit_code, removed.stdout) == (0, f"Removed demo ({project}/skills/demo)\n")
    assert json.loads((project / ".clawhub/lock.json").read_text())["skills"] == {}
    assert sh.run("update", "--all").stdout == "No tracked ClawHub skills to update.\n"


def test_update_argument_rules(sh: Shell) -> None:
    assert sh.run("update").stderr == "skillbook: Provide a skill slug or use --all.\n"
    both = sh.run("update", "demo", "--all")
    assert (both.exit_code, both.stderr) == (2, "skillbook: Use either a skill slug or --all.\n")
    untracked = sh.run("update", "ghost")
    assert untracked.exit_code == 1
    assert 'Skill "ghost" is not tracked as a ClawHub install.' in untracked.stderr


def test_errors_as_json_and_exit_codes(sh: Shell, hub: ClawHub) -> None:
    bad = sh.run("install", "gіthub", "--json")
    assert bad.exit_code == 2
    assert json.loads(bad.stdout) == {
        "error": "Invalid skill slug: gіthub",
        "code": "registry.invalid-ref",
    }
    missing = sh.run("install", "nothing", "--json")
    assert missing.exit_code == 1 and json.loads(missing.stdout)["code"] == "registry.not-found"
    hub.state.fail("/api/v1/search", Failure(429, {"Retry-After": "3600"}, b"Rate limit exceeded"))
    limited = sh.run("search", "x")
    assert limited.exit_code == 1 and "(retry in 3600s)" in limited.stderr
    installed = json.loads(sh.run("install", "demo", "--json").stdout)["installed"][0]
    assert installed["version"] == "1.0.0" and installed["origin"]["slug"] == "demo"


def test_scan_blocked_then_forced_with_a_reason(sh: Shell, hub: ClawHub) -> None:
    hub.state.publish(
        "evil", "1.0.0", {"SKILL.md": DEMO_V1["SKILL.md"], "runner.js": b'"stratum+tcp://p:1"\n'}
    )
    blocked = sh.run("install", "evil")
    assert blocked.exit_code == 1
    assert 'Skill "evil" installation blocked: dangerous code patterns detected' in blocked.stderr
    assert "--dangerously-force --reason TEXT" in blocked.stderr
    assert sh.run("install", "evil", "--dangerously-force").exit_code == 2
    forced = sh.run("install", "evil", "--dangerously-force", "--reason", "I wrote it")
    assert forced.exit_code == 0, forced.output
    assert (
        "Recorded in" in forced.stdout and "forced despite dangerous code patterns" in forced.stderr
    )


def test_global_installs_into_the_managed_folder(sh: Shell) -> None:
    result = sh.run("install", "demo", "--global")
    managed = sh.home / "state" / "skills" / "demo"
    assert result.stdout == f"Installed demo@1.0.0 -> {managed}\n"
    assert (sh.home / "state" / ".clawhub" / "lock.json").is_file()
    entry = next(
        s for s in json.loads(sh.run("list", "--json").stdout)["skills"] if s["name"] == "demo"
    )
    assert entry["source"] == "openclaw-managed" and entry["installed"]["kind"] == "clawhub"
    assert sh.run("verify", "--global").exit_code == 0


def test_registry_option_and_config_key(
    sh: Shell, hub: ClawHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLAWHUB_URL")
    config = sh.project / "skillbook.json"
    config.write_text(json.dumps({"skills": {"registry": {"url": hub.url}}}))
    assert sh.run("-c", str(config), "search", "demo").stdout.startswith("demo v1.0.0")
    unreachable = sh.run("search", "demo", "--registry", "http://127.0.0.1:9")
    assert (
        unreachable.exit_code == 1
        and "/api/v1/search on http://127.0.0.1:9 failed" in unreachable.stderr
    )
    assert sh.run("search", "demo", "--registry", hub.url).exit_code == 0
    bad = sh.run("search", "x", "--registry", "nope")
    assert bad.exit_code == 2 and "Invalid registry URL: nope" in bad.stderr


def test_install_from_a_folder_shows_its_origin(sh: Shell, tmp_path: Path) -> None:
    source = tmp_path / "mine"
    write_skill(source, description="Mine.", body="")
    result = sh.run("install", str(source))
    assert result.stdout == f"Installed mine@local -> {sh.project}/skills/mine\n"
    assert f"  Installed: folder {source} (local)" in sh.run("info", "mine").stdout


def test_verify_remote_asks_each_skills_registry(sh: Shell, hub: ClawHub) -> None:
    assert sh.run("install", "demo").exit_code == 0
    result = sh.run("verify", "--remote")
    assert (result.exit_code, result.stdout) == (
        0,
        f"✓ demo (clawhub 1.0.0): unchanged\n  {hub.url} verify: pass\n",
    )
    asked = hub.state.requests[-1]
    assert asked["path"] == "/api/v1/skills/demo/verify"
    assert asked["query"] == {"version": "1.0.0", "ownerHandle": "bar-owner"}
    as_json = json.loads(sh.run("verify", "--remote", "--json").stdout)["skills"][0]
    assert as_json["remote"]["schema"] == "clawhub.skill.verify.v1" and as_json["ok"] is True
    # A failing decision fails the run, as `openclaw skills verify` does.
    hub.state.fail(
        "/api/v1/skills/demo/verify",
        Failure(
            200,
            {"Content-Type": "application/json"},
            json.dumps(
                {"ok": False, "decision": "fail", "reasons": ["signature.missing"]}
            ).encode(),
        ),
    )
    failed = sh.run("verify", "--remote")
    assert failed.exit_code == 1
    assert failed.stdout.endswith(f"  {hub.url} verify: fail (signature.missing)\n")
    # An unreachable answer is shown too, and fails it.
    hub.state.trust_routes = False
    gone = sh.run("verify", "--remote")
    assert gone.exit_code == 1
    assert f"{hub.url} verify: /api/v1/skills/demo/verify on {hub.url} failed (404)" in gone.stdout
    # Without --remote nothing is asked.
    before = len(hub.state.requests)
    assert sh.run("verify").exit_code == 0 and len(hub.state.requests) == before
