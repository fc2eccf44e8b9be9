"""An advisory lock held while a read-modify-write runs, so two processes never
interleave theirs (two chats counting usage, two installs into one tools folder).

Input: the path of a lock file (created if missing, parents included). Output: an
exclusive ``flock`` on it for the ``with`` block; the kernel drops it when the process
dies, even by ``kill -9``. Where ``fcntl`` does not exist (Windows) the block runs
unlocked: writes stay atomic (:mod:`skillbook.base.atomic`), only the serialisation is lost.
Private to skillbook; sync locks its target folder itself (``sync.swap.folder_lock``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["locked"]


@contextlib.contextmanager
def locked(lock_file: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``lock_file`` while the block runs."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # not POSIX: no advisory locks
        yield
        return
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
