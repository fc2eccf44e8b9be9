"""A command's process group: whether its leader exited, and ending the whole group.

Every command the runtime starts (``exec``, a secret's ``exec`` provider) leads its own
process group, so background children it leaves behind can be ended with it. Both
:mod:`skillbook.runtime._proc` and :mod:`skillbook.runtime.secrets` stand on this module.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess

__all__ = ["exited", "kill_group"]


def kill_group(pid: int) -> None:
    """SIGKILL to the group led by ``pid``; a group already gone is no error."""
    with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
        os.killpg(pid, signal.SIGKILL)


def exited(proc: subprocess.Popen[bytes]) -> bool:
    """Whether the leader exited, without reaping it: until it is reaped its pid, which
    is also its group's id, cannot be reused, so killing the group is safe."""
    if proc.returncode is not None:
        return True
    waitid = getattr(os, "waitid", None)
    if waitid is None:  # pragma: no cover - POSIX platforms without waitid
        return proc.poll() is not None
    try:
        info = waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return proc.poll() is not None
    return info is not None
