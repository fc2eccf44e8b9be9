"""On a real terminal (pexpect): a download shows a progress bar and a rate-limit wait
is announced; under ``--json`` nothing but the JSON is printed."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from factories import skill_text

from distribution.registry.clawhub_server import ClawHub, Failure

pytestmark = pytest.mark.e2e
BIG = {
    "SKILL.md": skill_text("big", "A big skill.", body="").encode(),
    **{f"data/{i}.bin": os.urandom(64 * 1024) for i in range(40)},
}


def spawn(hub: ClawHub, tmp_path: Path, *args: str) -> Any:
    pexpect = pytest.importorskip("pexpect")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SKILLBOOK_", "OPENCLAW_", "CLAWHUB_"))
    }
    env.update(
        HOME=str(tmp_path / "home"),
        SKILLBOOK_STATE_DIR=str(tmp_path / "state"),
        CLAWHUB_URL=hub.url,
        TERM="xterm",
        PYTHONPATH=os.pathsep.join(sys.path),
    )
    argv = ["-m", "skillbook", "--workspace", str(tmp_path), *args]
    return pexpect.spawn(sys.executable, argv, env=env, encoding="utf-8", timeout=60)


def test_progress_and_rate_limit_notice_on_a_terminal(hub: ClawHub, tmp_path: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    hub.state.publish("big", "1.0.0", BIG)
    hub.state.fail("/api/v1/skills/big", Failure(429, {"Retry-After": "1"}, b"slow down"))
    child = spawn(hub, tmp_path, "install", "big")
    try:
        child.expect_exact("rate limited; retrying in 1.0s (attempt 2 of 3)")
        child.expect_exact(f"Downloading big@1.0.0 from {hub.url}…")
        child.expect(r"Downloading big@1\.0\.0.*\d+(\.\d+)?/\d+(\.\d+)? [kM]B")  # the bar
        child.expect_exact(f"Installed big@1.0.0 -> {tmp_path}/skills/big")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


def test_json_on_a_terminal_prints_only_json(hub: ClawHub, tmp_path: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    hub.state.publish("big", "1.0.0", BIG)
    child = spawn(hub, tmp_path, "install", "big", "--json")
    try:
        child.expect(pexpect.EOF)
        output = child.before
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    assert "Downloading big@1.0.0 from" in output  # the log line (stderr) …
    body = output[output.index("{") :]
    assert "━" not in output  # … but no progress bar
    assert json.loads(body.replace("\r\n", "\n"))["installed"][0]["name"] == "big"
