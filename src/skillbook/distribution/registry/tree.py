"""Copy a folder (a local skill, or one from a git checkout) into a staging folder,
with the rules every archive obeys.

Input: a source folder, a fresh destination and the archive limits
(:class:`~skillbook.distribution.archives.paths.ExtractLimits`). Output: a copy of its
regular files and folders, or an ``install.archive-rejected``
:class:`~skillbook.distribution.registry.RegistryError`: a symbolic or hard link, device,
FIFO or socket anywhere in the tree refuses the whole copy (as in an archive: a link
could point at ``~/.ssh``), and so do more entries, a bigger file or more bytes than
the limits allow. ``.git`` folders are left out. Files are read through descriptors
opened without following links, so a file swapped for a link mid-copy is refused too.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path
from typing import Final

from skillbook.distribution import InstallError
from skillbook.distribution.archives.paths import ByteBudget, ExtractLimits
from skillbook.distribution.registry import RegistryError

__all__ = ["copy_tree"]

_SKIP: Final = frozenset({".git"})
_CHUNK: Final = 1024 * 1024


def _rejected(message: str) -> RegistryError:
    return RegistryError("install.archive-rejected", message)


def copy_tree(source: Path, dest: Path, *, limits: ExtractLimits) -> int:
    """Copy ``source`` into the existing empty folder ``dest``; returns the file count."""
    budget = ByteBudget(limits)
    count = 0
    stack: list[str] = [""]
    while stack:
        rel = stack.pop()
        folder = source / rel if rel else source
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in entries:
            if entry.name in _SKIP:
                continue
            child = f"{rel}/{entry.name}" if rel else entry.name
            info = entry.stat(follow_symlinks=False)
            count += 1
            if count > limits.max_entries:
                raise _rejected("archive entry count exceeds limit")
            if stat.S_ISDIR(info.st_mode):
                (dest / child).mkdir(mode=0o777)
                os.chmod(dest / child, stat.S_IMODE(info.st_mode) | 0o700)
                stack.append(child)
            elif stat.S_ISREG(info.st_mode) and info.st_nlink <= 1:
                _copy_file(Path(entry.path), dest / child, info, budget)
            elif stat.S_ISREG(info.st_mode):
                raise _rejected(f"tree entry is a hard link: {child}")
            elif stat.S_ISLNK(info.st_mode):
                raise _rejected(f"tree entry is a link: {child}")
            else:
                raise _rejected(f"tree entry is not a file or folder: {child}")
    return count


def _copy_file(src: Path, dst: Path, info: os.stat_result, budget: ByteBudget) -> None:
    try:
        budget.add_entry_size(info.st_size)
    except InstallError as exc:
        raise _rejected(exc.message) from None
    fd = os.open(src, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as reader:
        opened = os.fstat(reader.fileno())
        if (opened.st_ino, opened.st_dev) != (info.st_ino, info.st_dev):
            raise _rejected(f"tree entry changed while copying: {src}")
        out = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(out, "wb") as writer:
            shutil.copyfileobj(reader, writer, _CHUNK)
    os.chmod(dst, stat.S_IMODE(info.st_mode) | 0o600)
