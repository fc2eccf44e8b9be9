"""Replace a folder in one step, so a crash leaves the old or the new tree, never a mix.

Input: the folder to replace (``dest``) and a complete new tree built beside it by
:func:`make_staging`. Output: ``dest`` holding the new tree, the old one removed.
Nothing here knows about skills; sync and load both use it.

How: the new tree is built as ``<parent>/.<name>.tmp-XXXXXXXX``, then swapped with
``dest`` by ``renameat2(RENAME_EXCHANGE)`` (Linux, through ctypes): one atomic step,
after which the staging name holds the old tree, which is then deleted. Where the
exchange is not available the swap is two renames (``dest`` aside as
``.<name>.old-…``, the complete tree, first renamed ``.<name>.new-…``, into place);
a crash between them leaves no ``dest``, which :func:`recover` repairs on the next
run by rolling the complete new tree forward (else the old one back). Leftovers of a
crashed run are removed by :func:`recover`, each reported.

Callers hold :func:`folder_lock` on the parent while they build and swap, so two
processes never work on one ``dest`` at once, and a leftover seen under the lock is
known to be dead.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import stat as st
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from skillbook.base.atomic import exchange as swap_paths
from skillbook.base.atomic import new_token
from skillbook.distribution.sync import SyncBusy

_KINDS = ("tmp", "old", "new")
_SUFFIX = re.compile(r"\.(tmp|old|new)-([a-z0-9]{8})\Z")


class FolderBusy(SyncBusy):
    """Another process holds the lock on the folder (only with ``wait=False``)."""


@dataclass(frozen=True, slots=True)
class Leftover:
    """A leftover of a crashed run: what was found and what was done with it."""

    path: Path
    action: str  # "removed", "restored" (old tree back) or "completed" (new tree in place)


@contextlib.contextmanager
def folder_lock(folder: Path, *, wait: bool = True) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``folder`` itself (no lock file is left behind).

    The kernel drops the lock when the process dies, even by ``kill -9``. Raises
    :class:`FolderBusy` when ``wait`` is false and another process holds it.
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


def staging_name(dest: Path, kind: str, token: str) -> Path:
    return dest.with_name(f".{dest.name}.{kind}-{token}")


def make_staging(dest: Path) -> Path:
    """A new, empty folder beside ``dest`` named ``.<name>.tmp-XXXXXXXX``.

    Made with the umask's permissions (not ``mkdtemp``'s 0700), so the swapped-in
    tree is readable by whoever could read the old one.
    """
    for _ in range(100):
        path = staging_name(dest, "tmp", new_token())
        try:
            os.mkdir(path, 0o777)
        except FileExistsError:
            continue
        return path
    raise FileExistsError(errno.EEXIST, "no free staging name", str(dest))


def replace_tree(
    staging: Path,
    dest: Path,
    *,
    exchange: bool = True,
    on_cleanup_error: Callable[[Path, OSError], None] | None = None,
    workers: int = 1,
) -> str:
    """Put the tree at ``staging`` at ``dest`` and delete what was there.

    Returns how: ``"rename"`` (nothing was there), ``"exchange"`` (atomic swap) or
    ``"two-step"`` (the fallback). ``exchange=False`` forces the fallback (tests).
    Once the new tree is in place, a failure to delete the old one is passed to
    ``on_cleanup_error`` (the old tree stays as a leftover for :func:`recover`);
    without it, the error is raised. ``workers`` threads delete the old tree.
    """
    if not os.path.lexists(dest):
        os.rename(staging, dest)
        return "rename"
    if exchange and swap_paths(staging, dest):
        how, old = "exchange", staging
    else:
        token = _SUFFIX.search(staging.name)
        suffix = token.group(2) if token else new_token()
        complete = staging_name(dest, "new", suffix)
        old = staging_name(dest, "old", suffix)
        os.rename(staging, complete)
        os.rename(dest, old)
        os.rename(complete, dest)
        how = "two-step"
    try:
        remove_tree(old, workers=workers)
    except OSError as exc:
        if on_cleanup_error is None:
            raise
        on_cleanup_error(old, exc)
    return how


def recover(dest: Path) -> list[Leftover]:
    """Repair and remove what a crashed run left beside ``dest``; call under the lock."""
    found: dict[str, list[Path]] = {kind: [] for kind in _KINDS}
    prefix = f".{dest.name}."
    try:
        names = os.listdir(dest.parent)
    except FileNotFoundError:
        return []
    for name in sorted(names):
        match = _SUFFIX.search(name)
        if name.startswith(prefix) and match and name == prefix + match.group(0)[1:]:
            found[match.group(1)].append(dest.parent / name)
    done: list[Leftover] = []
    if not os.path.lexists(dest):
        # Crashed between the two renames of the fallback: finish or undo the swap.
        if found["new"]:
            chosen, action = found["new"].pop(), "completed"
        elif found["old"]:
            chosen, action = found["old"].pop(), "restored"
        else:
            chosen, action = None, ""
        if chosen is not None:
            os.rename(chosen, dest)
            done.append(Leftover(chosen, action))
    for kind in _KINDS:
        for path in found[kind]:
            remove_tree(path)
            done.append(Leftover(path, "removed"))
    return done


def remove_tree(path: str | os.PathLike[str], *, workers: int = 1) -> None:
    """Delete a file, a link (never its target) or a folder tree; absent is fine.

    A tree with read-only folders (a copy of read-only sources, or a tree another tool
    made) is made owner-writable first, without following links. With ``workers`` > 1
    the top-level entries are deleted in parallel (deleting waits on the disk).
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not st.S_ISDIR(info.st_mode):
        os.unlink(path)
        return
    try:
        _remove_folder(path, workers)
    except PermissionError:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            _make_owner_writable(fd)
        finally:
            os.close(fd)
        _remove_folder(path, workers)


def _remove_folder(path: str | os.PathLike[str], workers: int) -> None:
    if workers <= 1:
        shutil.rmtree(path)
        return
    with os.scandir(path) as listing:
        children = [entry.path for entry in listing]
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(remove_tree, children))
    os.rmdir(path)


def _make_owner_writable(fd: int) -> None:
    os.fchmod(fd, st.S_IMODE(os.fstat(fd).st_mode) | st.S_IRWXU)
    with os.scandir(fd) as listing:
        folders = [e.name for e in listing if e.is_dir(follow_symlinks=False)]
    for name in folders:
        mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
        # By name first: a folder without r/x for its owner cannot be opened yet.
        os.chmod(name, st.S_IMODE(mode) | st.S_IRWXU, dir_fd=fd)
        sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
        try:
            _make_owner_writable(sub)
        finally:
            os.close(sub)
