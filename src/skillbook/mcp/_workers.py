"""``skillbook serve --workers N``: N processes answering on one listening socket.

The pre-fork model of the standard ASGI servers (uvicorn's and gunicorn's
``--workers``): the parent binds the socket and builds the served state once, then
forks N workers that each run the HTTP server on the inherited socket; the kernel
hands each new connection to one of them. Workers keep no session another worker
lacks (``--stateless``) and each watches the skill tree itself, so a change reaches
every client whichever worker holds its ``subscriptions/listen`` stream.

The parent forwards SIGINT and SIGTERM to the workers as SIGTERM and waits (a worker
ended by that SIGTERM counts as a clean stop). When one worker ends, it stops the
others and exits with that worker's status: a process manager sees a failed worker
instead of a server quietly running on fewer. POSIX only
(it forks).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import traceback
from collections.abc import Callable
from types import FrameType

__all__ = ["can_fork", "run_workers"]

_FORWARDED = (signal.SIGINT, signal.SIGTERM)


def can_fork() -> bool:
    return hasattr(os, "fork")


def run_workers(count: int, serve: Callable[[], None]) -> int:
    """Fork ``count`` processes that each call ``serve()``; returns the exit status of
    the first one to end (128 + N when a signal N ended it), after stopping the rest."""
    pids: list[int] = []
    stopping: list[int] = []

    def forward(signum: int, _frame: FrameType | None) -> None:
        stopping.append(signum)
        _signal_all(pids, signal.SIGTERM)

    # Installed before forking so that no signal between two forks is lost; each
    # worker puts the defaults back and lets its server install its own. The signals
    # stay blocked while forking: a worker that had not yet put the defaults back
    # would run the parent's handler for a SIGTERM meant to stop it and serve on;
    # blocked, the signal waits until the worker's own handling is in place.
    previous = {s: signal.signal(s, forward) for s in _FORWARDED}
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _FORWARDED)
    try:
        try:
            for _ in range(count):
                pid = os.fork()
                if pid == 0:
                    _worker(serve, blocked)
                pids.append(pid)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        first, raw = os.wait()
        status = os.waitstatus_to_exitcode(raw)
        if stopping and status == -signal.SIGTERM:
            status = 0  # the stop asked for, not a failure
        rest = [p for p in pids if p != first]
        _signal_all(rest, signal.SIGTERM)
        for pid in rest:
            os.waitpid(pid, 0)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    return status if status >= 0 else 128 - status


def _worker(serve: Callable[[], None], mask: set[int | signal.Signals]) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    code = 0
    try:
        # A SIGTERM sent while forking is delivered here, to the default action.
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        serve()
    except KeyboardInterrupt:
        pass
    except BaseException:  # a worker reports and exits, it never returns
        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        # The parent's Python state (its click context, atexit hooks) is not ours to run.
        os._exit(code)


def _signal_all(pids: list[int], signum: int) -> None:
    for pid in pids:
        # One already gone is collected by the parent's wait.
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)
