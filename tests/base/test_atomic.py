"""``skillbook.base.atomic``: a file replaced in one rename, two paths swapped in one step.

Real files; the crash test kills a real process with SIGKILL halfway through a write.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from skillbook.base.atomic import atomic_writer, exchange, new_token, write_atomic

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX renames and modes")


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_write_replaces_the_file_and_leaves_nothing_beside_it(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    target.write_text("old")
    write_atomic(target, "new ✓")
    assert target.read_text(encoding="utf-8") == "new ✓"
    write_atomic(target, b"\x00bytes")
    assert target.read_bytes() == b"\x00bytes"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


def test_mode_is_exact_or_left_to_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        write_atomic(tmp_path / "plain", "x")
        write_atomic(tmp_path / "ro", "x", mode=0o444)
        write_atomic(tmp_path / "private", "x", mode=0o600)
    finally:
        os.umask(old)
    assert mode_of(tmp_path / "plain") == 0o640  # as open() would make it
    assert mode_of(tmp_path / "ro") == 0o444
    assert mode_of(tmp_path / "private") == 0o600


def test_a_failed_write_keeps_the_old_file_and_removes_its_temporary(tmp_path: Path) -> None:
    target = tmp_path / "index.npz"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic_writer(target, prefix=".tmp-", suffix=".npz") as fh:
        fh.write(b"half")
        raise RuntimeError("disk full")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.npz"]


def test_the_temporary_is_named_by_the_caller_and_never_a_link(tmp_path: Path) -> None:
    seen: list[str] = []
    target = tmp_path / "cache"
    with atomic_writer(target, prefix=".tmp-", suffix="") as fh:
        seen.extend(p.name for p in tmp_path.iterdir())
        fh.write(b"x")
    (name,) = seen
    assert name.startswith(".tmp-") and len(name) == len(".tmp-") + 8
    with atomic_writer(tmp_path / "default"):
        (other,) = [p.name for p in tmp_path.iterdir() if p.name.startswith(".default.")]
    assert other.endswith(".tmp")
    token = new_token()
    assert len(token) == 8 and token.isalnum() and token == token.lower()


@pytest.mark.subprocess
def test_kill_9_during_a_write_leaves_the_old_content(tmp_path: Path) -> None:
    target = tmp_path / "marker.json"
    target.write_text('{"old": true}')
    code = (
        "import os, signal, sys\n"
        "from skillbook.base.atomic import atomic_writer\n"
        "with atomic_writer(sys.argv[1], prefix='.marker.json.tmp-', suffix='') as fh:\n"
        "    fh.write(b'{\"new\": ')\n"
        "    fh.flush()\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(target)], check=False)
    assert proc.returncode == -signal.SIGKILL
    assert target.read_text() == '{"old": true}'
    leftovers = [p.name for p in tmp_path.iterdir() if p != target]
    assert len(leftovers) == 1 and leftovers[0].startswith(".marker.json.tmp-")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux's")
def test_exchange_swaps_two_paths_in_one_step(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    (a / "f").write_text("a")
    b.write_text("b")
    assert exchange(a, b) is True
    assert b.is_dir() and (b / "f").read_text() == "a" and a.read_text() == "b"
    with pytest.raises(FileNotFoundError):
        exchange(tmp_path / "gone", a)  # a failure, not "this system cannot"
