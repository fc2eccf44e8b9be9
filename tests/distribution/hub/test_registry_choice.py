"""One registry setting reaches every command (issue 18 §1).

A team's own registry (``skillbook registry serve``'s app under uvicorn on 127.0.0.1),
named once, by ``SKILLBOOK_REGISTRY_URL`` only or by ``skills.registry.url`` only: then
``publish``, ``search``, ``install``, ``update``, ``verify --remote`` and ``remove`` all
go there, every line that names a registry names it, and ``doctor`` says which and why.
Any request for another host (the public default, https://clawhub.ai) lands on a
loopback tripwire proxy instead of the network, and the test fails on it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from distribution.registry.tripwire import Tripwire, tripwire
from skillbook.cli.app import cli
from skillbook.distribution.hub.app import create_app
from skillbook.distribution.hub.http import Hub
from skillbook.distribution.hub.server_config import HubSettings
from skillbook.distribution.hub.tokens import create_token

from .conftest import GENEROUS
from .helpers import LiveServer, make_skill


class Recorder:
    """The registry's app, with the path of every HTTP request it got."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.paths: list[str] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.paths.append(scope["path"])
        await self.app(scope, receive, send)


@dataclass
class Team:
    url: str
    token: str
    recorder: Recorder
    wire: Tripwire
    project: Path


@pytest.fixture
def team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Team]:
    for name in list(os.environ):
        if name.startswith(("SKILLBOOK_", "OPENCLAW_", "CLAWHUB_", "CLAWDHUB_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("SKILLBOOK_STATE_DIR", str(tmp_path / "state"))
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    server_dir = tmp_path / "server"
    settings = HubSettings(
        database_url=f"sqlite:///{server_dir / 'metadata.sqlite3'}",
        blob_url=str(server_dir / "blobs"),
        search_backend="bm25",
        rate_limits=GENEROUS,
    )
    hub = Hub.open(settings)
    with hub.db.session() as session:
        token = create_token(session, "alice")
    recorder = Recorder(create_app(settings, hub=hub))
    with LiveServer(recorder) as server, tripwire(monkeypatch) as wire:
        yield Team(server.url, token, recorder, wire, project)
    hub.db.close()


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), env=env, prog_name="skillbook")


def every_command(team: Team, pre: list[str], env: dict[str, str], reason: str) -> None:
    """publish, search, install, update, verify --remote, remove and doctor, with the
    registry named only as the caller set it up (``pre``/``env``)."""
    url, source = team.url, team.project.parent / "src" / "weather"
    make_skill(source, "weather", "Forecasts for the team's offices.")
    env = {**env, "SKILLBOOK_REGISTRY_TOKEN": team.token}

    published = run(*pre, "publish", str(source), env=env)
    assert published.exit_code == 0, published.output
    assert published.stdout.startswith(f"Published weather@1.0.0 (1 files) to {url}")

    seen = len(team.recorder.paths)
    found = run(*pre, "search", "forecasts", env=env)
    assert found.exit_code == 0, found.output
    assert found.stdout.startswith("weather v1.0.0")
    assert "/api/v1/search" in team.recorder.paths[seen:]
    none = run(*pre, "search", "nothing-like-this", env=env)
    assert none.stdout == f"No skills found on {url}.\n"

    installed = run(*pre, "install", "weather", env=env)
    assert installed.exit_code == 0, installed.output
    assert f"Downloading weather@1.0.0 from {url}…" in installed.stderr
    origin = json.loads((team.project / "skills/weather/.clawhub/origin.json").read_text())
    assert origin["registry"] == url

    (source / "notes.md").write_text("Offices: Berlin, Lisbon.\n")
    assert run(*pre, "publish", str(source), env=env).exit_code == 0
    seen = len(team.recorder.paths)
    updated = run(*pre, "update", "weather", env=env)
    assert updated.exit_code == 0, updated.output
    assert updated.stdout == "Updated weather: 1.0.0 -> 1.0.1\n"
    assert f"Downloading weather@1.0.1 from {url}…" in updated.stderr
    assert "/api/v1/download" in team.recorder.paths[seen:]

    seen = len(team.recorder.paths)
    verified = run(*pre, "verify", "--remote", env=env)
    assert verified.stdout.startswith("✓ weather (clawhub 1.0.1): unchanged\n")
    assert verified.stdout.splitlines()[1].startswith(f"  {url} verify: ")
    assert "/api/v1/skills/weather/verify" in team.recorder.paths[seen:]

    doctor = json.loads(run(*pre, "doctor", "--json", env=env).stdout)["registry"]
    assert (doctor["registry"], doctor["registryReason"], doctor["token"]) == (url, reason, True)
    text = run(*pre, "doctor", env=env).stdout
    assert f"Registry    {url}  ({reason})" in text

    seen = len(team.recorder.paths)
    removed = run(*pre, "remove", "weather", env=env)
    assert removed.exit_code == 0, removed.output
    # remove is local: it asks no registry at all, the public one least of all.
    assert team.recorder.paths[seen:] == []
    assert team.wire.seen == []


def test_skillbook_registry_url_alone_reaches_every_command(team: Team) -> None:
    every_command(team, [], {"SKILLBOOK_REGISTRY_URL": team.url}, "SKILLBOOK_REGISTRY_URL")


def test_the_config_key_alone_reaches_every_command(team: Team) -> None:
    config = team.project / "skillbook.json"
    config.write_text(json.dumps({"skills": {"registry": {"url": team.url + "/"}}}))
    every_command(team, ["-c", str(config)], {}, f"skills.registry.url in {config}")


def test_without_a_setting_the_default_is_named_and_publish_refuses(team: Team) -> None:
    source = make_skill(team.project.parent / "src" / "weather", "weather", "Forecasts.")
    refused = run("publish", str(source), env={"SKILLBOOK_REGISTRY_TOKEN": team.token})
    assert refused.exit_code == 2
    assert (
        "no registry: pass --registry URL, set $SKILLBOOK_REGISTRY_URL or skills.registry.url"
        in (refused.stderr)
    )
    doctor = run("doctor").stdout
    assert "Registry    https://clawhub.ai  (the default)" in doctor
    assert "            token: none" in doctor
    # The default is asked through the tripwire, so the failure names it as the default
    # ("clawhub.ai (default)"), never a bare "ClawHub".
    failed = run("search", "weather")
    assert failed.exit_code == 1
    assert "/api/v1/search on clawhub.ai (default) failed" in failed.stderr
    assert team.wire.seen and all(s.startswith("CONNECT clawhub.ai:443") for s in team.wire.seen)
    assert team.recorder.paths == []
