"""``skillbook watch`` end to end: a subprocess, real files, a real watcher (spec §7.3-7.4).

The process (``python -m skillbook``) runs in an isolated environment: its own HOME,
state dir, empty bundled dir and empty PATH.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from factories import write_skill

pytestmark = pytest.mark.e2e

WAIT_S = 30.0


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Watch:
    """A running ``skillbook watch`` whose stdout lines arrive on a queue."""

    def __init__(self, tmp_path: Path, *args: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLBOOK_", "OPENCLAW_"))}
        for name in ("home", "state", "bundled"):
            (tmp_path / name).mkdir(exist_ok=True)
        env.update(
            HOME=str(tmp_path / "home"),
            PATH="",
            SKILLBOOK_STATE_DIR=str(tmp_path / "state"),
            SKILLBOOK_BUNDLED_SKILLS_DIR=str(tmp_path / "bundled"),
            PYTHONIOENCODING="utf-8",
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "skillbook", *args],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            # A job started in the background by a non-interactive shell (as CI may run
            # us) inherits SIGINT ignored, and Python keeps it ignored; Ctrl-C is what
            # this test sends, so the child starts with the default disposition.
            preexec_fn=_default_sigint,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, prefix: str) -> str:
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.1)
            except queue.Empty:
                if self.proc.poll() is not None and self.lines.empty():
                    break
                continue
            self.seen.append(line)
            if line.startswith(prefix):
                return line
        pytest.fail(f"no line starting with {prefix!r}; saw {self.seen}; stderr: {self.stderr()}")

    def finish(self) -> int:
        code = self.proc.wait(WAIT_S)
        # The reader ends at the end of the output: every line is on the queue then.
        self._reader.join(WAIT_S)
        while not self.lines.empty():
            self.seen.append(self.lines.get())
        return code

    def stderr(self) -> str:
        if self.proc.poll() is None or self.proc.stderr is None:
            return ""
        return self.proc.stderr.read()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(WAIT_S)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    write_skill(workspace / "skills" / "alpha", description="First skill")
    return workspace


def test_watch_once_prints_the_added_skill(tmp_path: Path, ws: Path) -> None:
    watch = Watch(tmp_path, "-w", str(ws), "watch", "--once", "--timeout", str(WAIT_S))
    try:
        header = watch.wait_for("Watching ")
        assert header.startswith("Watching 1 skill")
        assert watch.wait_for("prompt: ").startswith("prompt: 1 skills, ")
        write_skill(ws / "skills" / "gamma", description="Third skill")
        assert watch.wait_for("+ ") == "+ gamma (openclaw-workspace)"
        assert watch.wait_for("prompt: ").startswith("prompt: 2 skills, ")
        assert watch.finish() == 0, watch.stderr()
    finally:
        watch.kill()


def test_watch_prints_changes_and_removals_until_ctrl_c(tmp_path: Path, ws: Path) -> None:
    watch = Watch(tmp_path, "-w", str(ws), "watch")
    try:
        watch.wait_for("prompt: ")
        write_skill(ws / "skills" / "alpha", description="First skill, reworded")
        assert watch.wait_for("~ ") == "~ alpha"
        watch.wait_for("prompt: ")
        (ws / "skills" / "alpha" / "SKILL.md").unlink()
        assert watch.wait_for("- ") == "- alpha"
        assert watch.wait_for("prompt: ") == "prompt: 0 skills, 0 chars"
        watch.proc.send_signal(signal.SIGINT)
        assert watch.finish() == 0, watch.stderr()
    finally:
        watch.kill()


def test_watch_timeout_exits_zero_without_changes(tmp_path: Path, ws: Path) -> None:
    watch = Watch(tmp_path, "-w", str(ws), "watch", "--timeout", "1")
    try:
        watch.wait_for("prompt: ")
        assert watch.finish() == 0, watch.stderr()
        assert not any(line[:2] in ("+ ", "- ", "~ ") for line in watch.seen)
    finally:
        watch.kill()


def test_watch_missing_workspace_fails_with_a_message(tmp_path: Path) -> None:
    watch = Watch(tmp_path, "-w", str(tmp_path / "nope"), "watch", "--timeout", "1")
    try:
        assert watch.finish() == 2
        assert "does not exist" in watch.stderr()
    finally:
        watch.kill()
