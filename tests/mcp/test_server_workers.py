"""``skillbook serve --transport http --workers 2``: two processes on one port.

The pre-fork model (issue 11 §3, "the standard ASGI server's process model"): the
parent binds and builds once, forks the workers, forwards SIGTERM, and stops the
others when one dies. Which worker answers is the kernel's choice, so the test stops
one worker (SIGSTOP: it accepts nothing) and checks that the other answers alone, then
the other way round: both serve, and both see a new skill.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from factories import write_skill
from mcp import Client
from serve_process import ServeProcess, free_port
from test_server import LAUNCH, Workspace, all_skills

pytestmark = [
    pytest.mark.subprocess,
    pytest.mark.e2e,
    pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc"),
]

WAIT_S = 30.0


def children(pid: int) -> list[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return [int(p) for p in text.split()]


def wait_children(pid: int, count: int) -> list[int]:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        found = children(pid)
        if len(found) == count:
            return found
        time.sleep(0.05)
    raise AssertionError(f"expected {count} workers, found {children(pid)}")


def skill_uris(url: str) -> set[str]:
    async def main() -> set[str]:
        async with Client(url, mode="auto") as client:
            return {e["uri"] for e in await all_skills(client.session)}

    return anyio.run(main)


def wait_listed(url: str, uri: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while uri not in skill_uris(url):
        assert time.monotonic() < deadline, f"{uri} never listed"
        time.sleep(0.2)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Workspace, ServeProcess]]:
    space = Workspace(tmp_path)
    port = free_port()
    args = ["--workspace", str(space.ws), "serve", "--transport", "http", "--workers", "2"]
    process = ServeProcess(
        [sys.executable, *LAUNCH, *args, "--port", str(port)],
        port=port,
        env=space.env(),
        cwd=tmp_path,
        log=tmp_path / "serve.log",
    )
    try:
        process.wait_listening()
        yield space, process
    finally:
        for pid in children(process.proc.pid) if process.proc.poll() is None else []:
            os.kill(pid, signal.SIGCONT)
        process.stop()


def test_both_workers_answer_and_see_changes(served: tuple[Workspace, ServeProcess]) -> None:
    space, process = served
    workers = wait_children(process.proc.pid, 2)
    assert "from 2 worker processes" in process.log.read_text()
    for stopped in workers:
        os.kill(stopped, signal.SIGSTOP)
        try:
            assert "skill://alpha/SKILL.md" in skill_uris(process.url)
        finally:
            os.kill(stopped, signal.SIGCONT)
    write_skill(space.skills / "gamma")
    for stopped in workers:
        os.kill(stopped, signal.SIGSTOP)
        try:
            wait_listed(process.url, "skill://gamma/SKILL.md")
            # A new skill beside the others, not a root turned into one skill.
            assert "skill://alpha/SKILL.md" in skill_uris(process.url)
        finally:
            os.kill(stopped, signal.SIGCONT)
    process.proc.send_signal(signal.SIGTERM)
    assert process.proc.wait(WAIT_S) == 0
    for pid in workers:
        assert not Path(f"/proc/{pid}").exists()


def test_a_dead_worker_stops_the_server(served: tuple[Workspace, ServeProcess]) -> None:
    _space, process = served
    first, second = wait_children(process.proc.pid, 2)
    os.kill(first, signal.SIGKILL)
    assert process.proc.wait(WAIT_S) == 128 + signal.SIGKILL
    assert not Path(f"/proc/{second}").exists()


def test_workers_need_the_http_transport(tmp_path: Path) -> None:
    import subprocess

    space = Workspace(tmp_path)
    args = ["--workspace", str(space.ws), "serve", "--workers", "2"]
    got = subprocess.run(
        [sys.executable, *LAUNCH, *args],
        env=space.env(),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=False,
    )
    assert got.returncode == 2
    assert "--workers needs --transport http" in got.stderr
