"""Advisory locks, so two processes never interleave their read-modify-writes or swaps.

Two kinds, one rule (an exclusive ``flock`` the kernel drops when the process dies,
even by ``kill -9``):

- :func:`locked` holds a *lock file* (created if missing, parents included) while a
  read-modify-write runs: two chats counting usage, two installs into one tools
  folder. Where ``fcntl`` does not exist (Windows) the block runs unlocked: writes
  stay atomic (:mod:`skillbook.base.atomic`), only the serialisation is lost.
- :func:`folder_lock` holds the *folder itself* (no lock file is left behind) while a
  tree inside it is rebuilt and swapped (sync, load, the registry's installs; see
  :mod:`skillbook.distribution.swap`); ``wait=False`` raises :class:`FolderBusy`
  instead of waiting.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["FolderBusy", "folder_lock", "locked"]


class FolderBusy(BlockingIOError):
    """Another process holds the lock on the folder (only with ``wait=False``).

    A ``BlockingIOError`` (the lock would block), not a ``SkillbookError``: ``base`` sits
    below the error tree, and the one caller that asks not to wait (sync) re-raises it as
    its ``SyncBusy`` naming the target."""


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


@contextlib.contextmanager
def folder_lock(folder: Path, *, wait: bool = True) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``folder`` itself while the block runs.

    Raises :class:`FolderBusy` when ``wait`` is false and another process holds it.
    """
    import fcntl

    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError as exc:
            raise FolderBusy(f"{folder} is locked by another process") from exc
        yield
    finally:
        os.close(fd)
