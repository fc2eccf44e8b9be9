"""Verified, bounded reads of skill files: check a file, then read what was checked.

Input: a file path and the real folder it must lie in. Output: a :class:`Verified`
file (:func:`verify_file`), its bytes and identity (:func:`read_verified`, bounded by
:func:`skillbook.base.fs.read_at_most`), or a
:class:`ReadFailure` that says *why* it was refused, which :func:`describe_failure`
turns into a diagnostic's code, severity and message. Nothing here raises on a bad
skill folder.

The checks mirror OpenClaw's ``openVerifiedFileSync``: a symlinked file is refused,
the file must be regular, its size is checked from ``stat`` before reading, it is
opened with ``O_NOFOLLOW`` (below its folder, :func:`skillbook.base.fs.open_contained`) and
the descriptor must be the same inode/device that was checked, and no more than
``max_bytes`` are read.

Nothing here reports what it read: a :class:`Verified` file carries the ``lstat`` its
check took and a :class:`ReadFailure` the real path it was refused at, so a caller
that records its reads (the result cache's footprint) records them from the answer.
"""

from __future__ import annotations

import errno
import os
import stat as st
from collections.abc import Callable
from dataclasses import dataclass

from skillbook.base.fast_init import fast_init
from skillbook.base.fs import OPEN_FLAGS as _OPEN_FLAGS
from skillbook.base.fs import (
    PathChanged,
    _basename,
    is_path_inside,
    is_symlink,
    is_symlink_loop,
    join,
    open_contained,
    read_at_most,
    try_realpath,
)

# Failure kinds of a verified read; discover maps each to a diagnostic code.
MISSING = "missing"
SYMLINK = "symlink"
NOT_REGULAR = "not-regular"
TOO_LARGE = "too-large"
CHANGED = "changed"
ESCAPE = "escape"
IO_ERROR = "io"
LOOP = "loop"


@dataclass(frozen=True, slots=True)
class ReadFailure:
    kind: str
    detail: str = ""
    size: int | None = None
    real: str | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class Verified:
    """A file that passed every check before opening; ``identity`` keys the parse cache."""

    path: str
    real: str
    size: int
    identity: tuple[int, int, int, int, int]
    #: The real folder the file was checked to lie in; the open starts there.
    root_real: str = ""
    #: The ``lstat`` of :attr:`real` the check was made on (the file is no link).
    info: os.stat_result | None = None


def _identity(s: os.stat_result) -> tuple[int, int, int, int, int]:
    return (s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns)


def verify_file(
    path: str,
    *,
    root_real: str,
    max_bytes: int,
    realpath: Callable[[str], str | None] = try_realpath,
    dir_real: str | None = None,
    known: os.stat_result | None = None,
) -> Verified | ReadFailure:
    """Check ``path`` without reading it.

    ``realpath`` resolves a path (a caller's memo, which may record it);
    ``dir_real``: the known real path of its folder; ``known``: an ``lstat`` of
    ``path`` the caller just made (saves a system call on the hot path).
    """
    try:
        link_stat = known if known is not None else os.lstat(path)
    except FileNotFoundError:
        return ReadFailure(MISSING)
    except (OSError, ValueError) as exc:
        return ReadFailure(IO_ERROR, str(exc))
    if st.S_ISLNK(link_stat.st_mode):
        if is_symlink_loop(path):
            return ReadFailure(LOOP)
        return ReadFailure(SYMLINK, real=realpath(path))
    real = join(dir_real, _basename(path)) if dir_real is not None else realpath(path)
    if real is None:
        return ReadFailure(IO_ERROR, "the path does not resolve")
    try:
        pre = link_stat if real == path else os.lstat(real)
    except (OSError, ValueError) as exc:
        return ReadFailure(IO_ERROR, str(exc), real=real)
    if not st.S_ISREG(pre.st_mode):
        return ReadFailure(NOT_REGULAR, real=real)
    if pre.st_size > max_bytes:
        return ReadFailure(TOO_LARGE, size=pre.st_size, real=real)
    # A name joined to the checked folder itself is inside it (the test is lexical).
    if root_real != dir_real and not is_path_inside(root_real, real):
        return ReadFailure(ESCAPE, real=real)
    return Verified(
        path=path,
        real=real,
        size=pre.st_size,
        identity=_identity(pre),
        root_real=root_real,
        info=pre,
    )


def read_contained(
    path: str,
    *,
    root_real: str,
    max_bytes: int,
    realpath: Callable[[str], str | None] = try_realpath,
) -> bytes | ReadFailure:
    """A small file inside ``root_real`` (a manifest, a command file), verified as a
    SKILL.md is: no symlink, regular, inside the root, at most ``max_bytes``."""
    checked = verify_file(path, root_real=root_real, max_bytes=max_bytes, realpath=realpath)
    if isinstance(checked, ReadFailure):
        return checked
    got = read_verified(checked, max_bytes=max_bytes)
    return got if isinstance(got, ReadFailure) else got[0]


def read_verified(
    checked: Verified,
    *,
    max_bytes: int,
    open_below: Callable[[str, int], int | None] | None = None,
) -> tuple[bytes, tuple[int, int, int, int, int]] | ReadFailure:
    """Open the checked file with ``O_NOFOLLOW``, confirm it is the same file, read it.

    Returns the bytes and the identity from ``fstat`` taken *before* reading: a later
    change to the file changes its ctime, so caching under it is safe. ``open_below``
    (a held root's :meth:`~skillbook.base.pinned_root.PinnedRoot.open_file`) opens the
    file with the same guarantee as :func:`open_contained`, or declines with None.
    """
    try:
        fd = open_below(checked.real, _OPEN_FLAGS) if open_below is not None else None
        if fd is None and checked.root_real and checked.root_real != checked.real:
            # Every component below the checked folder without following a link, and
            # (Linux) the opened file's own path: a swapped folder cannot redirect it.
            fd = open_contained(checked.real, checked.root_real)
        elif fd is None:
            fd = os.open(checked.real, _OPEN_FLAGS)
    except PathChanged:
        return ReadFailure(CHANGED, real=checked.real)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            if is_symlink(checked.real):
                return ReadFailure(SYMLINK, real=checked.real)
            return ReadFailure(CHANGED, real=checked.real)
        if exc.errno == errno.ENOENT:
            return ReadFailure(MISSING)
        return ReadFailure(IO_ERROR, exc.strerror or str(exc))
    try:
        opened = os.fstat(fd)
        if not st.S_ISREG(opened.st_mode):
            return ReadFailure(NOT_REGULAR, real=checked.real)
        if opened.st_size > max_bytes:
            return ReadFailure(TOO_LARGE, size=opened.st_size, real=checked.real)
        if (opened.st_dev, opened.st_ino) != checked.identity[:2]:
            return ReadFailure(CHANGED, real=checked.real)
        data = read_at_most(fd, max_bytes, opened.st_size)
        if len(data) >= max_bytes and os.fstat(fd).st_size > max_bytes:
            # Grew while we read: the cap holds, the truncated text is not used.
            return ReadFailure(TOO_LARGE, size=os.fstat(fd).st_size, real=checked.real)
        return data, _identity(opened)
    except OSError as exc:
        return ReadFailure(IO_ERROR, exc.strerror or str(exc))
    finally:
        os.close(fd)


_FAILURES = {
    MISSING: ("discover.unreadable", "error", "disappeared while it was being read"),
    SYMLINK: (
        "discover.symlinked-skill-md",
        "error",
        "is a symbolic link{target}; skill files are never read through a link, even "
        "inside the root: copy the file, or symlink the whole skill folder instead",
    ),
    NOT_REGULAR: (
        "discover.not-regular-file",
        "error",
        "is not a regular file{target}; the skill is not loaded",
    ),
    CHANGED: (
        "discover.unreadable",
        "error",
        "changed between its check and its opening (a different file was opened); not read",
    ),
    ESCAPE: (
        "discover.path-escape",
        "warning",
        "resolves to {real}, outside its skill folder; not read",
    ),
    IO_ERROR: ("discover.unreadable", "error", "could not be read: {detail}"),
    TOO_LARGE: ("discover.file-too-large", "error", "is too large ({size} bytes); not read"),
    LOOP: (
        "discover.symlink-loop",
        "error",
        "is a symbolic link that loops back to itself; it resolves to no file: remove it",
    ),
}


def describe_failure(failure: ReadFailure, path: str) -> tuple[str, str, str]:
    """(diagnostic code, severity, message) for a refused read of ``path``."""
    if failure.kind == SYMLINK and failure.real is None and is_symlink_loop(path):
        failure = ReadFailure(LOOP)
    code, severity, template = _FAILURES[failure.kind]
    if failure.kind == SYMLINK and failure.real is None:
        target = " whose target does not exist"
    elif failure.real is not None and failure.real != path:
        target = f" (to {failure.real})"
    else:
        target = ""
    text = template.format(
        target=target, real=failure.real, detail=failure.detail, size=failure.size
    )
    return code, severity, f"{os.path.basename(path)} {text}"
