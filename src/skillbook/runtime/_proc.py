"""Running one shell command for ``exec``: process groups, timeouts, capped output.

Private to :mod:`skillbook.runtime.tools`; split out because it is the only part
that deals with pipes, signals and selectors.

Each command is the leader of its own process group. When the shell exits, the
group is killed, so background children (``cmd &``, daemons that did not call
``setsid``) never outlive the command, unless the plan says ``detach`` (a skill's
``metadata.skillbook.detach: true``). A child that starts its own session leaves
the group and is out of reach; that is what detaching on purpose looks like.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Final

from skillbook.runtime.process_group import exited, kill_group
from skillbook.runtime.secrets import redact

#: After the shell exits, how long background children may keep the pipe open.
DEFAULT_DRAIN_GRACE_S: Final = 0.5
_CHUNK: Final = 65536
_POLL_S: Final = 0.05


def cut_utf8(text: str, max_bytes: int) -> str:
    return text.encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")


@dataclass(frozen=True, slots=True)
class Plan:
    argv: tuple[str, ...]
    cwd: str
    env: dict[str, str]
    timeout: float
    secrets: tuple[str, ...]
    #: Leave background children running after the shell exits.
    detach: bool = False


class Collector:
    """Keeps the head of the output (cap + the longest secret, so redaction is whole)."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.head = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.keep - len(self.head)
        if room > 0:
            self.head += chunk[:room]


def render_output(col: Collector, max_output: int, secrets: tuple[str, ...]) -> str:
    truncated = col.total > max_output
    # An incomplete UTF-8 sequence at the cut is held back rather than shown as U+FFFD.
    text = codecs.getincrementaldecoder("utf-8")("replace").decode(bytes(col.head), not truncated)
    text = redact(text, secrets)
    if truncated:
        text = cut_utf8(text, max_output)
        text += ("" if text.endswith("\n") else "\n") + (
            f"[output truncated: showed the first {max_output} of {col.total} bytes; "
            "redirect to a file and look at parts of it (head, tail, grep, sed -n)]"
        )
    return text


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def run_posix(plan: Plan, keep: int) -> tuple[Collector, int | None, bool]:
    col = Collector(keep)
    proc = subprocess.Popen(
        plan.argv,
        cwd=plan.cwd,
        env=plan.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    run = _PosixRun(plan, proc, fd, col, deadline=time.monotonic() + plan.timeout)
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            run.read(sel)
            run.wait_for_exit()
            run.end(sel)
    finally:
        if proc.returncode is None:
            if not plan.detach or not exited(proc):
                kill_group(proc.pid)
            proc.wait()
        proc.stdout.close()
    return col, proc.returncode, run.timed_out


@dataclass(slots=True)
class _PosixRun:
    """One command of :func:`run_posix` in steps: read, wait for the shell, end the group."""

    plan: Plan
    proc: subprocess.Popen[bytes]
    fd: int
    col: Collector
    deadline: float
    #: When reading stops after the shell exited (background children may hold the pipe).
    drain_end: float | None = None
    timed_out: bool = False

    def read(self, sel: selectors.BaseSelector) -> None:
        """Collect output until end of file, the deadline, or the drain grace."""
        eof = False
        while not eof:
            wait = self._wait()
            if wait is None:
                return
            if sel.select(min(wait, _POLL_S)):
                eof = not read_into(self.fd, self.col)

    def _wait(self) -> float | None:
        """How long to wait for output now; None: stop reading."""
        now = time.monotonic()
        if not exited(self.proc):
            if now >= self.deadline:
                self.timed_out = True
                return None
            return self.deadline - now
        if self.drain_end is None:
            if not self.plan.detach:
                kill_group(self.proc.pid)  # its background children end with it
            self.drain_end = now + DEFAULT_DRAIN_GRACE_S
        return None if now >= self.drain_end else self.drain_end - now

    def wait_for_exit(self) -> None:
        """Closed its output but still running: wait for it (unreaped, as in ``_wait``)."""
        while not self.timed_out and not exited(self.proc):
            if time.monotonic() >= self.deadline:
                self.timed_out = True
            else:
                time.sleep(_POLL_S)

    def end(self, sel: selectors.BaseSelector) -> None:
        """End the group; after a timeout, keep what it printed while dying."""
        if not self.timed_out and self.drain_end is None and not self.plan.detach:
            kill_group(self.proc.pid)
        if self.timed_out:
            kill_group(self.proc.pid)
            self.proc.wait()
            end = time.monotonic() + DEFAULT_DRAIN_GRACE_S
            while time.monotonic() < end and sel.select(_POLL_S):
                if not read_into(self.fd, self.col):
                    break


def read_into(fd: int, col: Collector) -> bool:
    """Read what is there; False at end of file."""
    try:
        chunk = os.read(fd, _CHUNK)
    except BlockingIOError:
        return True
    col.add(chunk)
    return bool(chunk)


async def run_async(plan: Plan, keep: int) -> tuple[Collector, int | None, bool]:
    col = Collector(keep)
    # Our own pipe, read with add_reader: the subprocess transport then owns no pipe,
    # so a background child that keeps the write end open cannot keep it (and the
    # transport) alive once we stop reading.
    read_fd, write_fd = os.pipe()
    try:
        proc = await asyncio.create_subprocess_exec(
            *plan.argv,
            cwd=plan.cwd,
            env=plan.env,
            stdin=subprocess.DEVNULL,
            stdout=write_fd,
            stderr=write_fd,
            start_new_session=True,
        )
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)
    os.set_blocking(read_fd, False)
    loop = asyncio.get_running_loop()
    eof: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not read_into(read_fd, col) and not eof.done():
            eof.set_result(None)

    loop.add_reader(read_fd, readable)
    timed_out = False
    try:
        try:
            await asyncio.wait_for(proc.wait(), plan.timeout)
        except TimeoutError:
            timed_out = True
            kill_group(proc.pid)
            await proc.wait()
        else:
            if not plan.detach:
                # The loop has reaped the shell; its group id stays reserved while a
                # member lives, so this reaches the shell's background children only.
                kill_group(proc.pid)
        # Background children may still hold the pipe: stop reading after a grace.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(eof), DEFAULT_DRAIN_GRACE_S)
    finally:
        loop.remove_reader(read_fd)
        os.close(read_fd)
        if proc.returncode is None:
            kill_group(proc.pid)
            await proc.wait()
    return col, proc.returncode, timed_out


def run_portable(plan: Plan, keep: int) -> tuple[Collector, int | None, bool]:
    # Non-POSIX fallback: no process groups, so only the shell itself is killed.
    col = Collector(keep)
    try:
        proc = subprocess.run(
            plan.argv[2],
            shell=True,
            cwd=plan.cwd,
            env=plan.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=plan.timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        col.add(exc.output or b"")
        return col, None, True
    col.add(proc.stdout)
    return col, proc.returncode, False
