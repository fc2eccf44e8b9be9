"""``run_workers``: a stop signal sent while the workers are being forked is not lost.

A freshly forked worker runs the parent's handlers until it puts its own in place;
a SIGTERM landing in that window once ran the parent's forwarding handler inside the
worker, which then served on and the parent waited for it forever (a CI run's
``test_a_dead_worker_stops_the_server``). The window is widened here on purpose: an
``os.register_at_fork`` hook makes each new worker sleep before ``run_workers``' own
code runs in it, and the signal is sent while it sleeps.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.subprocess,
    pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc"),
]

SRC = Path(__file__).resolve().parents[2] / "src"
WAIT_S = 20.0

# Each worker would serve for a minute: only the signal ends it in time.
SCRIPT = textwrap.dedent(
    """
    import os, sys, time
    from skillbook.mcp._workers import run_workers
    os.register_at_fork(after_in_child=lambda: time.sleep(1.0))
    sys.exit(run_workers(2, lambda: time.sleep(60)))
    """
)


def start() -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.Popen([sys.executable, "-c", SCRIPT], env=env)


def children(pid: int) -> list[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return [int(p) for p in text.split()]


def wait_children(pid: int, count: int) -> list[int]:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        found = children(pid)
        if len(found) >= count:
            return found
        time.sleep(0.01)
    raise AssertionError(f"expected {count} workers, found {children(pid)}")


def finish(proc: subprocess.Popen[bytes]) -> int:
    try:
        return proc.wait(WAIT_S)
    finally:
        if proc.poll() is None:
            for pid in children(proc.pid):
                os.kill(pid, signal.SIGKILL)
            proc.kill()
            proc.wait()


def test_a_sigterm_while_forking_stops_every_worker() -> None:
    proc = start()
    workers = wait_children(proc.pid, 1)
    proc.send_signal(signal.SIGTERM)  # the first worker is still in the fork hook
    assert finish(proc) == 0
    for pid in workers:
        assert not Path(f"/proc/{pid}").exists()


def test_a_worker_killed_while_the_other_forks_stops_the_server() -> None:
    proc = start()
    first, *_ = wait_children(proc.pid, 1)
    second = next(p for p in wait_children(proc.pid, 2) if p != first)
    os.kill(first, signal.SIGKILL)  # the second is still in the fork hook
    assert finish(proc) == 128 + signal.SIGKILL
    assert not Path(f"/proc/{second}").exists()
