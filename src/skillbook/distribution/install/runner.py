"""Run one installer command: argv (never a shell), a timeout, the caller's environment.

Input: an argv, a timeout in milliseconds and the environment to run in. Output: a
:class:`CommandResult` with the exit code (``None`` when the process was killed or
could not start) and its decoded output. The environment is passed through as it
is (no ``UV_*``, ``PIP_*`` or ``PYTHONPATH`` overrides are added); ``overrides`` are
layered on top only when a step needs them (``GOBIN`` for ``go install`` via brew).
stdin is ``/dev/null``: an installer that asks a question gets end-of-file instead
of waiting, unseen, for the timeout.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

__all__ = ["MAX_CAPTURE_BYTES", "CommandResult", "run_command"]

#: Output kept per stream (the tail: errors come last).
MAX_CAPTURE_BYTES: Final = 1024 * 1024
#: ``npm`` prints funding notices unless told not to (OpenClaw sets these too).
_NPM_QUIET: Final = {"NPM_CONFIG_FUND": "false", "npm_config_fund": "false"}


@dataclass(frozen=True, slots=True)
class CommandResult:
    code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False


def _decode(data: bytes) -> str:
    return data[-MAX_CAPTURE_BYTES:].decode("utf-8", errors="replace")


def run_command(
    argv: Sequence[str],
    *,
    timeout_ms: int,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, str] | None = None,
) -> CommandResult:
    """Run ``argv`` and wait at most ``timeout_ms``; the whole process group is killed
    on timeout. ``env=None`` means this process's environment, inherited unchanged.
    """
    base = os.environ if env is None else env
    exe = argv[0]
    if os.sep not in exe:
        found = shutil.which(exe, path=base.get("PATH", ""))
        if found is None:
            return CommandResult(None, "", f"{exe}: command not found")
        exe = found
    child_env: dict[str, str] | None = None
    extra = dict(overrides or {})
    if os.path.basename(argv[0]) == "npm":
        extra.update({k: v for k, v in _NPM_QUIET.items() if k not in base})
    if env is not None or extra:
        child_env = {**base, **extra}
    try:
        proc = subprocess.Popen(
            [exe, *argv[1:]],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env,
            start_new_session=True,
        )
    except OSError as exc:
        return CommandResult(None, "", f"{argv[0]}: {exc.strerror or exc}")
    try:
        out, err = proc.communicate(timeout=max(timeout_ms, 1) / 1000)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        note = f"{argv[0]} timed out after {timeout_ms} ms and was killed"
        stderr = _decode(err)
        return CommandResult(None, _decode(out), f"{stderr}\n{note}" if stderr else note, True)
    except BaseException:
        # Ctrl-C (or any error) must not leave an installer running in the background.
        _kill_group(proc)
        proc.wait()
        raise
    code = proc.returncode
    return CommandResult(code if code >= 0 else None, _decode(out), _decode(err))


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    killpg = getattr(os, "killpg", None)  # POSIX only
    try:
        if killpg is None:
            proc.kill()
        else:
            killpg(proc.pid, getattr(signal, "SIGKILL", signal.SIGTERM))
    except (ProcessLookupError, PermissionError):
        proc.kill()
