"""docs/hub.md stays true: its quick start runs, and the compose file uses real options."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
import yaml

from skillbook.cli.app import cli

from .processes import REPO, free_port

DOC = REPO / "docs" / "hub.md"
COMPOSE = REPO / "deploy" / "registry" / "compose.yaml"


def _block(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index(f"## {title}") :]
    match = re.search(r"```sh\n(.*?)```", section, re.S)
    assert match is not None
    return match.group(1)


@pytest.mark.subprocess
def test_the_quick_start_runs(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLBOOK_", "CLAWHUB_"))}
    env.update(
        HOME=str(tmp_path),
        SKILLBOOK_STATE_DIR=str(tmp_path / "state"),
        PORT=str(free_port()),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
    )
    script = "set -euo pipefail\n" + _block("Quick start")
    proc = subprocess.run(
        ["bash", "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Published weather@1.0.0 (1 files)" in proc.stdout
    assert (tmp_path / "state" / "registry" / "metadata.sqlite3").is_file()


def test_the_compose_deployment_runs_real_commands() -> None:
    compose = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    services = compose["services"]
    replicas = [name for name in services if name.startswith("registry-")]
    assert len(replicas) >= 2
    env = compose["x-registry"]["environment"]
    assert env["SKILLBOOK_REGISTRY_DB"].startswith("postgresql+psycopg://")
    assert env["SKILLBOOK_REGISTRY_BLOBS"].startswith("s3://")
    for name in [*replicas, "migrate"]:
        args = services[name]["command"]
        group = cli.get_command(click.Context(cli), args[0])
        assert isinstance(group, click.Group)
        sub = group.get_command(click.Context(group), args[1])
        assert sub is not None, name
        sub.make_context(args[1], list(args[2:]))  # raises on an unknown option
    nginx = (COMPOSE.parent / "nginx.conf").read_text()
    assert all(f"server {name}:8787" in nginx for name in replicas)
    assert "proxy_set_header Host" in nginx
