"""Replacing things on disk in one step, so ``kill -9`` leaves the old state or the new.

Input: a path and its new content (bytes, text, or a writer for a streamed body), or
two paths to swap. Output: the file replaced by one ``rename`` of a complete temporary
sibling (:func:`write_atomic`, :func:`atomic_writer`), or two paths exchanged by one
``renameat2(RENAME_EXCHANGE)`` on Linux or ``renamex_np(RENAME_SWAP)`` on macOS
(:func:`exchange`). A failed write removes its temporary; a crash can leave one
behind (hidden, named by the caller's ``prefix`` so the caller's sweep finds it), never
a half-written target.

The one home of these steps for every edge that keeps state on disk: the MCP client's
cache, the scan cache, the selection index, sync's marker and folder swaps, install's
staged targets and extracted files, and the files the CLI writes. Private to skillbook.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import secrets
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Final

__all__ = ["atomic_writer", "exchange", "new_token", "write_atomic"]

_TOKEN_ALPHABET: Final = "abcdefghijklmnopqrstuvwxyz0123456789"
_CREATE: Final = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NOFOLLOW", 0)
)
_AT_FDCWD: Final = -100
_RENAME_EXCHANGE: Final = 2  # linux/fs.h
_RENAME_SWAP: Final = 2  # macOS stdio.h
#: errno values meaning "this kernel or file system cannot exchange", not "this failed".
_NO_EXCHANGE: Final = frozenset({errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP})


def new_token() -> str:
    """Eight random lowercase letters and digits, for temporary names."""
    return "".join(secrets.choice(_TOKEN_ALPHABET) for _ in range(8))


def _create_temp(path: Path, prefix: str, suffix: str, mode: int | None) -> tuple[int, Path]:
    for _ in range(100):
        tmp = path.with_name(f"{prefix}{new_token()}{suffix}")
        try:
            # Without a mode the umask decides, as for open(); with one it is exact.
            fd = os.open(tmp, _CREATE, 0o666 if mode is None else 0o600)
        except FileExistsError:
            continue
        if mode is not None:
            try:
                os.fchmod(fd, mode)
            except BaseException:
                os.close(fd)
                tmp.unlink(missing_ok=True)
                raise
        return fd, tmp
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(path.parent))


@contextlib.contextmanager
def atomic_writer(
    path: str | os.PathLike[str],
    *,
    mode: int | None = None,
    prefix: str | None = None,
    suffix: str = ".tmp",
    fsync: bool = False,
) -> Iterator[BinaryIO]:
    """A binary file to write ``path``'s new content into; it replaces ``path`` when the
    block ends without an exception, and is removed otherwise.

    The temporary is ``<prefix><8 random characters><suffix>`` beside ``path`` (default
    prefix ``.<name>.``), created exclusively and never through a link. ``mode`` sets
    the file's permissions exactly (default: ``0o666`` less the umask, as ``open``);
    ``fsync`` flushes the bytes to the disk before the rename. The folder must exist.
    """
    target = Path(path)
    fd, tmp = _create_temp(target, f".{target.name}." if prefix is None else prefix, suffix, mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def write_atomic(
    path: str | os.PathLike[str],
    data: bytes | str,
    *,
    mode: int | None = None,
    prefix: str | None = None,
    suffix: str = ".tmp",
    fsync: bool = False,
) -> None:
    """Replace ``path`` with ``data`` (text is written as UTF-8); see :func:`atomic_writer`."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with atomic_writer(path, mode=mode, prefix=prefix, suffix=suffix, fsync=fsync) as fh:
        fh.write(raw)


def exchange(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Swap two existing paths in one step; False where this system cannot.

    Raises ``OSError`` for a failure that is not about the system's abilities (a path
    gone, no permission): a two-rename fallback would only fail the same way.
    """
    if sys.platform.startswith("linux"):
        name = "renameat2"
    elif sys.platform == "darwin":
        name = "renamex_np"
    else:
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return False
    function = getattr(libc, name, None)
    if function is None:  # glibc before 2.28, older musl
        return False
    src, dst = os.fsencode(a), os.fsencode(b)
    if name == "renameat2":
        function.argtypes = [
            ctypes.c_int,
            ctypes.c_char_p,
            ctypes.c_int,
            ctypes.c_char_p,
            ctypes.c_uint,
        ]
        result = function(_AT_FDCWD, src, _AT_FDCWD, dst, _RENAME_EXCHANGE)
    else:
        function.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint]
        result = function(src, dst, _RENAME_SWAP)
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in _NO_EXCHANGE:
        return False
    raise OSError(code, os.strerror(code), os.fsdecode(src), None, os.fsdecode(dst))
