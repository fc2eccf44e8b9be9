"""A skills root held open while its skill folders are read.

Every ``SKILL.md`` read must be the file at its checked real path, with no symlink
swapped in on the way (:func:`skillbook.base.fs.open_contained`). Checked per file, that
is an open plus a ``/proc/self/fd`` readlink (~5 µs of a skill's ~100 µs). With the
root's real folder open (and its own kernel path checked once), the same guarantee
costs two ``openat`` calls without following links: the skill folder, then its
file. A folder swapped for a symlink fails the open (``ELOOP``), exactly where the
per-file check saw another path. Only files two plain names below the root take
this way; :meth:`PinnedRoot.open_file` declines everything else.
"""

from __future__ import annotations

import os
import weakref

from skillbook.base import fs as _fs


class PinnedRoot:
    """The descriptor of one real root folder; closed by :meth:`close` (or when dropped)."""

    __slots__ = ("__weakref__", "_close", "fd", "path", "prefix")

    def __init__(self, path: str, fd: int) -> None:
        self.path = path
        self.fd = fd
        self.prefix = path.rstrip(os.sep) + os.sep
        self._close = weakref.finalize(self, os.close, fd)

    @classmethod
    def open(cls, real: str) -> PinnedRoot | None:
        """The root at the real path ``real``, or None where the platform or the folder
        does not allow it (callers then check each file by its own path)."""
        if not (_fs.HAS_DIR_FD and _fs.HAS_PROC_FD):
            return None
        try:
            fd = os.open(real, _fs.DIR_FLAGS)
        except OSError:
            return None
        if _fs.fd_path(fd) != real:
            os.close(fd)
            return None
        return cls(real, fd)

    def open_file(self, real: str, flags: int) -> int | None:
        """Open ``real`` when it is ``<root>/<folder>/<file>``, neither component followed
        if it is a link (``OSError`` as ``os.open`` raises it); None for any other path."""
        if not real.startswith(self.prefix):
            return None
        folder, sep, name = real[len(self.prefix) :].partition(os.sep)
        if not sep or folder in ("", ".", "..") or name in ("", ".", "..") or os.sep in name:
            return None
        folder_fd = os.open(folder, _fs.DIR_FLAGS, dir_fd=self.fd)
        try:
            return os.open(name, flags, dir_fd=folder_fd)
        finally:
            os.close(folder_fd)

    def close(self) -> None:
        self._close()
