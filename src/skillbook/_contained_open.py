"""Opening a file below a real folder so that a swapped folder cannot redirect it.

Input: a file's real path and the real folder it was checked to lie in. Output: an
open descriptor (:func:`open_contained`) or :class:`PathChanged` when the file opened
is not the one checked. The caller owns the descriptor.

``O_NOFOLLOW`` guards only the last component of a path: a folder on the way can be
swapped for a symlink between the check and the open. :func:`open_contained` therefore
opens every component below the folder with ``O_NOFOLLOW`` through directory
descriptors, and on Linux also compares the kernel's path of the opened descriptor
with the real path that was checked, which covers the folders above.
"""

from __future__ import annotations

import errno
import os
import sys

from skillbook._fs import is_path_inside

#: How every verified file is opened.
OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    # A file swapped for a FIFO between the checks must not block the reader.
    | getattr(os, "O_NONBLOCK", 0)
)
_DIR_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
# openat(2) through os.open(dir_fd=...); without it, components are checked by path.
_HAS_DIR_FD = os.open in os.supports_dir_fd and bool(getattr(os, "O_DIRECTORY", 0))
_PROC_FD = "/proc/self/fd"
_HAS_PROC_FD = sys.platform.startswith("linux") and os.path.isdir(_PROC_FD)
# For skillbook._pinned_root, which opens below a held folder the same way.
HAS_DIR_FD, HAS_PROC_FD, DIR_FLAGS = _HAS_DIR_FD, _HAS_PROC_FD, _DIR_FLAGS


class PathChanged(OSError):
    """The file opened is not the one that was checked: a path component was swapped."""

    def __init__(self, path: str, detail: str) -> None:
        super().__init__(errno.ESTALE, detail, path)


def fd_path(fd: int) -> str | None:
    """The kernel's path of an open descriptor (Linux ``/proc/self/fd``), or None."""
    if not _HAS_PROC_FD:
        return None
    try:
        return os.readlink(f"{_PROC_FD}/{fd}")
    except OSError:
        return None


def _parts_below(anchor: str, real: str) -> list[str]:
    if not is_path_inside(anchor, real) or real == anchor:
        raise PathChanged(real, f"{real} is not inside {anchor}")
    rest = real[len(anchor) :].lstrip(os.sep)
    parts = rest.split(os.sep)
    if any(p in ("", ".", "..") for p in parts):
        raise PathChanged(real, f"{real} is not a plain path below {anchor}")
    return parts


def open_contained(
    real: str,
    anchor: str,
    *,
    flags: int = OPEN_FLAGS,
    anchor_identity: tuple[int, int] | None = None,
) -> int:
    """Open the file at the real path ``real`` below the real folder ``anchor``.

    ``anchor`` itself is opened with ``O_NOFOLLOW`` (and, given ``anchor_identity``,
    must still be that ``(st_dev, st_ino)``); every component below it is opened with
    ``O_NOFOLLOW`` relative to its parent's descriptor, so a folder swapped for a
    symlink fails the open (``ELOOP``) instead of being followed. Where the kernel
    names open files (Linux), the opened file's path must also equal ``real``, which
    covers the folders above ``anchor``; without ``anchor_identity`` that check alone
    is made (it covers every component). Raises :class:`OSError` (:class:`PathChanged`
    when the file is not the one checked); the caller owns the returned descriptor.
    """
    if _HAS_PROC_FD and anchor_identity is None:
        # Fast path (discovery's hot loop): the kernel's path of the opened file covers
        # every component at once, so the component walk below adds nothing.
        if not real.startswith(anchor.rstrip(os.sep) + os.sep):
            raise PathChanged(real, f"{real} is not inside {anchor}")
        opened = os.open(real, flags)
        if fd_path(opened) != real:
            os.close(opened)
            raise PathChanged(real, f"{real} was not the file opened")
        return opened
    parts = _parts_below(anchor, real)
    if _HAS_DIR_FD:
        fd = os.open(anchor, _DIR_FLAGS)
        try:
            if anchor_identity is not None:
                info = os.fstat(fd)
                if (info.st_dev, info.st_ino) != anchor_identity:
                    raise PathChanged(anchor, f"{anchor} was replaced")
            for part in parts[:-1]:
                inner = os.open(part, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = inner
            opened = os.open(parts[-1], flags, dir_fd=fd)
        finally:
            os.close(fd)
    else:  # pragma: no cover - platforms without openat: the kernel-path check only
        opened = os.open(real, flags)
    kernel = fd_path(opened)
    if kernel is not None and kernel != real:
        os.close(opened)
        raise PathChanged(real, f"opened {kernel} instead of {real}")
    return opened
