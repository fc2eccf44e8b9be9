"""``skillbook registry …`` and ``skillbook publish`` as a user runs them (in-process CLI)."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner, Result
from factories import skill_text

from skillbook.cli.app import cli
from skillbook.distribution.hub.app import create_app
from skillbook.distribution.hub.http import Hub
from skillbook.distribution.hub.server_config import HubSettings

from .conftest import GENEROUS
from .helpers import CRITICAL_LINE, HIGH_LINE, LiveServer, make_skill


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), env=env, prog_name="skillbook")


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith(("SKILLBOOK_", "OPENCLAW_", "CLAWHUB_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SKILLBOOK_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    return tmp_path / "state"


@pytest.fixture
def live(state: Path) -> Iterator[LiveServer]:
    settings = HubSettings(
        database_url=f"sqlite:///{state / 'registry' / 'metadata.sqlite3'}",
        blob_url=str(state / "registry" / "blobs"),
        search_backend="bm25",
        rate_limits=GENEROUS,
    )
    hub = Hub.open(settings)
    with LiveServer(create_app(settings, hub=hub)) as server:
        yield server
    hub.db.close()


def test_migrate_and_tokens_default_to_the_state_dir(state: Path) -> None:
    assert run("registry", "migrate").output == "schema at revision 0004\n"
    assert (state / "registry" / "metadata.sqlite3").is_file()
    created = run("registry", "token", "create", "@Alice", "--label", "laptop", "--json")
    token = json.loads(created.output)
    assert token["handle"] == "alice" and token["token"].startswith("clh_")
    listed = json.loads(run("registry", "token", "list", "--json").output)["tokens"]
    assert [(t["handle"], t["label"], t["revokedAt"]) for t in listed] == [
        ("alice", "laptop", None)
    ]
    assert token["token"] not in run("registry", "token", "list").output
    # The database holds the token's sha256 and its shown prefix, never the token.
    with closing(sqlite3.connect(state / "registry" / "metadata.sqlite3")) as conn:
        dump = "\n".join(conn.iterdump())
    assert token["token"] not in dump
    assert hashlib.sha256(token["token"].encode()).hexdigest() in dump
    assert run("registry", "token", "revoke", token["token"][:10]).exit_code == 0
    listed = json.loads(run("registry", "token", "list", "--json").output)["tokens"]
    assert listed[0]["revokedAt"] is not None
    bad = run("registry", "token", "create", "no spaces allowed")
    assert bad.exit_code == 2 and "invalid handle" in bad.output


def test_publish_hold_release_delete_and_the_audit_log(
    live: LiveServer, state: Path, tmp_path: Path
) -> None:
    token = run("registry", "token", "create", "alice").output.strip()
    env = {"SKILLBOOK_REGISTRY_TOKEN": token, "SKILLBOOK_REGISTRY_URL": live.url}
    folder = make_skill(tmp_path / "tool", "tool", "A helpful tool.")
    first = run("publish", str(folder), env=env)
    assert first.exit_code == 0, first.output
    assert first.output == f"Published tool@1.0.0 (1 files) to {live.url}\n"
    assert run("publish", str(folder), env=env).output.endswith(
        "is already published (same files).\n"
    )
    make_skill(folder, "tool", "A helpful tool.", body=CRITICAL_LINE)
    held = run("publish", str(folder), "--version", "1.1.0", "--json", env=env)
    assert held.exit_code == 1 and json.loads(held.output)["status"] == "pending"
    listing = run("registry", "held")
    assert (
        listing.exit_code == 1
        and "tool@1.1.0" in listing.output
        and "remote-fetch-exec" in listing.output
    )
    assert run("registry", "release", "tool", "1.1.0").exit_code == 2  # --reason is required
    released = run("registry", "release", "tool", "1.1.0", "--reason", "reviewed")
    assert released.output == "released tool@1.1.0\n"
    again = run("registry", "release", "tool", "1.1.0", "--reason", "twice")
    assert again.exit_code == 2 and "tool@1.1.0 is published, not held" in again.output
    assert run("registry", "held").output == "No held versions.\n"
    # The default hold severity is high: a high-only finding is held and listed too.
    make_skill(folder, "tool", "A helpful tool.", body=HIGH_LINE)
    assert run("publish", str(folder), "--version", "1.2.0", env=env).exit_code == 1
    high = json.loads(run("registry", "held", "--json").output)["held"]
    assert [(h["version"], [f["severity"] for f in h["findings"]]) for h in high] == [
        ("1.2.0", ["high"])
    ]
    assert run("registry", "delete", "tool", "1.2.0", "--reason", "not this").exit_code == 0
    rolled = run("registry", "tag", "tool", "1.0.0", "latest", "--reason", "roll back")
    assert rolled.output == "tool: latest -> 1.0.0\n"
    detail = httpx.get(live.url + "/api/v1/skills/tool").json()
    assert detail["skill"]["tags"] == {"latest": "1.0.0"}
    assert run("registry", "tag", "tool", "1.0.0", "1.0", "--reason", "x").exit_code == 2
    assert run("registry", "hold", "tool", "1.1.0", "--reason", "again").exit_code == 0
    missing = run("registry", "release", "tool", "9.9.9", "--reason", "x")
    assert missing.exit_code == 2 and "no version" in missing.output
    deleted = run("registry", "delete", "tool", "--reason", "retired")
    assert deleted.output == "deleted tool@1.0.0\ndeleted tool@1.1.0\ndeleted tool@1.2.0\n"
    entries = json.loads(run("registry", "audit", "--json").output)["entries"]
    assert [e["action"] for e in entries] == [
        "delete",
        "hold",
        "tag",
        "delete",
        "publish",
        "release",
        "publish",
        "publish",
        "token-create",
    ]
    assert entries[5]["detail"]["reason"] == "reviewed" and entries[5]["actor"].startswith("cli")
    assert "release" in run("registry", "audit", "-n", "6").output


def test_publish_needs_a_registry_and_a_token(state: Path, tmp_path: Path) -> None:
    folder = make_skill(tmp_path / "tool", "tool", "A tool.")
    no_registry = run("publish", str(folder))
    assert no_registry.exit_code == 2 and "no registry" in no_registry.output
    no_token = run("publish", str(folder), "--registry", "http://127.0.0.1:9")
    assert no_token.exit_code == 2 and "no token" in no_token.output
    # A `clawhub login` to the public registry chooses neither the registry nor the token.
    config = tmp_path / "xdg" / "clawhub" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"registry": "https://clawhub.ai", "token": "clh_public"}))
    assert "no registry" in run("publish", str(folder)).output
    elsewhere = run("publish", str(folder), "--registry", "http://127.0.0.1:9", "--json")
    assert json.loads(elsewhere.output) == {
        "error": "no token: set $SKILLBOOK_REGISTRY_TOKEN (see `skillbook registry token create`)",
        "code": "bad-argument",
    }


def test_publish_reads_clawhub_login_and_takes_archives(live: LiveServer, tmp_path: Path) -> None:
    import zipfile

    token = run("registry", "token", "create", "alice").output.strip()
    config = tmp_path / "xdg" / "clawhub" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"registry": live.url, "token": token}))
    archive = tmp_path / "packed.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("notes/SKILL.md", skill_text("notes", "Notes.", body="Body\n"))
        zf.writestr("notes/refs/a.md", "a")
    result = run("publish", str(archive), "--registry", live.url, "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert (out["slug"], out["files"], out["status"]) == ("notes", 2, "published")
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as zf:
        zf.writestr("../SKILL.md", "x")
    refused = run("publish", str(evil), "--registry", live.url)
    assert refused.exit_code == 2 and "escapes" in refused.output
