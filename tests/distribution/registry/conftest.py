"""Fixtures of the registry tests: a ClawHub-compatible server, a workspace, an installer."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cli.conftest import Shell
from factories import skill_text

from distribution.registry.clawhub_server import ClawHub
from skillbook.distribution.http import RetryPolicy
from skillbook.distribution.registry.endpoint import Endpoint
from skillbook.distribution.registry.installer import Installer, InstallOptions
from skillbook.distribution.registry.workdir import Workdir

DEMO_V1 = {
    "SKILL.md": skill_text("demo", "A demo skill.", body="# Demo\nSay hello.\n").encode(),
    "references/a.md": b"reference one\n",
}
DEMO_V2 = {
    "SKILL.md": skill_text("demo", "A demo skill, second version.", body="# Demo\n").encode(),
    "references/a.md": b"reference two\n",
    "references/b.md": b"new file\n",
}
#: Short waits so that retry tests stay quick (the server's Retry-After still applies).
FAST = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.05, timeout=5.0)


@pytest.fixture
def hub() -> Iterator[ClawHub]:
    server = ClawHub()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def workdir(tmp_path: Path) -> Workdir:
    root = tmp_path / "ws"
    root.mkdir()
    return Workdir(root)


class Said(list[str]):
    def __call__(self, line: str) -> None:
        self.append(line)


@pytest.fixture
def said() -> Said:
    return Said()


@pytest.fixture
def installer(hub: ClawHub, workdir: Workdir, said: Said) -> Installer:
    return Installer(workdir, Endpoint(hub.url), say=said, retry=FAST)


@pytest.fixture
def options(tmp_path: Path) -> InstallOptions:
    return InstallOptions(state_dir=tmp_path / "state")


#: Every variable that could point a command at another registry or hand it a token
#: (the whole precedence of ``skillbook.distribution.registry.endpoint``), cleared for each CLI test.
REGISTRY_VARS = (
    "SKILLBOOK_REGISTRY_URL", "SKILLBOOK_REGISTRY_TOKEN", "OPENCLAW_CLAWHUB_URL", "CLAWHUB_URL",
    "CLAWHUB_REGISTRY", "CLAWDHUB_REGISTRY", "CLAWHUB_SITE", "CLAWDHUB_SITE", "CLAWHUB_TOKEN",
    "CLAWHUB_AUTH_TOKEN", "CLAWHUB_CONFIG_PATH", "XDG_CONFIG_HOME",
)  # fmt: skip


def point_at(shell: Shell, hub: ClawHub, monkeypatch: pytest.MonkeyPatch) -> Shell:
    """The CLI shell talking to the stand-in registry only, with its own state folder."""
    for name in REGISTRY_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLAWHUB_URL", hub.url)
    monkeypatch.setenv("SKILLBOOK_STATE_DIR", str(shell.home / "state"))
    return shell
