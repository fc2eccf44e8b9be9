"""Containment primitives: paths inside a folder, real paths, and opens that stay inside.

Input: paths as ``str`` (and, for a read, an open descriptor). Output: plain values:
absolute and real paths, whether a path lies inside a folder, exists or is a link (or
a link that loops); a descriptor of a file opened below a real folder
(:func:`open_contained`) and at most a given number of its bytes
(:func:`read_at_most`). Nothing here raises on a bad skill folder but
:func:`open_contained` (:class:`OSError`, :class:`PathChanged`), nothing keeps state
between calls, and nothing reports what it read: a caller that must account for its
reads (the result cache's footprint) records them from what it asked and what these
answer. Listings are :mod:`skillbook.base.listing`'s, the checked reads of skill files
:mod:`skillbook.base.verified_read`'s.

The containment test mirrors OpenClaw's ``isPathInside``. Beyond OpenClaw: a folder
on the way can be swapped for a symlink between the check and the open
(``O_NOFOLLOW`` guards only the last component). :func:`open_contained` therefore
opens every component below a known real folder with ``O_NOFOLLOW`` through
directory descriptors, and on Linux also compares the kernel's path of the opened
descriptor with the real path that was checked, which covers the folders above.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat as st
import sys

# Windows compares paths case-insensitively (as OpenClaw's isPathInside does there).
_CASE_FOLD = os.name == "nt"


def abspath(path: str | os.PathLike[str]) -> str:
    """``path.resolve(p)``: absolute and normalised, symlinks untouched."""
    absolute = os.path.abspath(os.fspath(path))
    # POSIX normpath keeps a leading "//"; Node's path.resolve does not.
    if absolute.startswith("//") and not absolute.startswith("///"):
        absolute = absolute[1:]
    return absolute


def join(parent: str, name: str) -> str:
    """``os.path.join`` for one plain name (hot path: no type dispatch)."""
    return parent + name if parent.endswith(os.sep) else parent + os.sep + name


def is_path_inside(root: str, target: str) -> bool:
    """OpenClaw's ``isPathInside``: ``target`` equals ``root`` or lies below it (lexically).

    Absolute inputs are taken as already normalised (real paths are).
    """
    if _CASE_FOLD:
        root, target = os.path.normcase(abspath(root)), os.path.normcase(abspath(target))
    else:
        # Hot path (called for every candidate): plain string tests on POSIX.
        if root[:1] != "/":
            root = abspath(root)
        if target[:1] != "/":
            target = abspath(target)
    if target == root:
        return True
    return target.startswith(root if root.endswith(os.sep) else root + os.sep)


def climbs_out(relative: str) -> bool:
    """Whether a relative POSIX path, normalised, leaves the folder it is relative to
    (``..`` or ``../…``): an archive entry or a link target that escapes.

    The relative twin of :func:`is_path_inside` (one rule for each kind of path).
    """
    normalized = posixpath.normpath(relative)
    return normalized == ".." or normalized.startswith("../")


def _basename(path: str) -> str:
    """``os.path.basename`` of a str path; inline on POSIX (hot path)."""
    if _CASE_FOLD:
        return os.path.basename(path)
    return path[path.rfind("/") + 1 :]


def try_realpath(path: str) -> str | None:
    """``fs.realpathSync`` or ``None`` when the path (or a link in it) does not resolve."""
    try:
        return os.path.realpath(path, strict=True)
    except (OSError, ValueError, RuntimeError):
        return None


def is_symlink(path: str) -> bool:
    try:
        return st.S_ISLNK(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


def has_file(path: str) -> bool:
    """``fs.existsSync``: follows symlinks; a broken link does not exist."""
    try:
        os.stat(path)
    except (OSError, ValueError):
        return False
    return True


def is_symlink_loop(path: str) -> bool:
    """Whether ``path`` is a symlink that never resolves (``a -> a``, ``a <-> b``)."""
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    except ValueError:
        return False
    return False


_OPEN_FLAGS = (
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
# For skillbook.base.pinned_root, which opens below a held folder the same way, and
# skillbook.base.verified_read, which opens every verified file with these flags.
HAS_DIR_FD, HAS_PROC_FD, DIR_FLAGS = _HAS_DIR_FD, _HAS_PROC_FD, _DIR_FLAGS
OPEN_FLAGS = _OPEN_FLAGS


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
    flags: int = _OPEN_FLAGS,
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


#: The most one ``os.read`` asks for.
_CHUNK = 1 << 20


def read_at_most(fd: int, limit: int, size: int = -1) -> bytes:
    """Read from ``fd`` until end of file or ``limit`` bytes, whichever comes first.

    Every bounded read goes through here: the size ``stat`` gave is never trusted as
    the end, because a file can grow between the check and the read. One read holds a
    skill file whole, and an empty second one finds the end, unless the first returned
    exactly ``size`` bytes (``fd``'s ``fstat`` just before; a file grown since gives more).
    """
    if limit <= 0:
        return b""
    # `os.read` allocates the whole buffer it is asked for: 1 MiB for a 2 KB file cost
    # more than the read itself (~3x a read of the file's size, issue 22). Told the
    # size, ask for one byte more: a file grown since fills it and is read on below.
    first = os.read(fd, min(limit, size + 1 if 0 <= size < _CHUNK else _CHUNK))
    remaining = limit - len(first)
    if not first or remaining <= 0 or len(first) == size:
        return first
    chunks = [first]
    while remaining > 0:
        chunk = os.read(fd, min(remaining, _CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_file_at_most(path: str | os.PathLike[str], limit: int) -> bytes:
    """The first ``limit`` bytes of the file at ``path`` (links followed), read through
    :func:`read_at_most`: a file larger than the caller wants is never read whole."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        return read_at_most(fd, limit)
    finally:
        os.close(fd)
