"""Replace a folder in one step, so a crash leaves the old or the new tree, never a mix.

Input: the folder to replace (``dest``) and a complete new tree built beside it by
:func:`make_staging`. Output: ``dest`` holding the new tree, the old one removed.
Nothing here knows about skills: sync, load, the registry's installs and the
download installer all swap through it.

How: the new tree is built as ``<parent>/.<name>.tmp-XXXXXXXX``, then swapped with
``dest`` by ``renameat2(RENAME_EXCHANGE)`` (``renamex_np(RENAME_SWAP)`` on macOS,
through ctypes): one atomic step, after which the staging name holds the old tree,
which is then deleted. Where the exchange is not available the swap is two renames
(``dest`` aside as ``.<name>.old-…``, the complete tree, first renamed
``.<name>.new-…``, into place); a crash between them leaves no ``dest``, which
:func:`recover` repairs on the next run by rolling the complete new tree forward (else
the old one back). Leftovers of a crashed run are removed by :func:`recover`, each
reported.

:class:`StagedTarget` is the same swap for a change *on top of* what ``dest`` holds (a
download unpacked into a tools folder): ``dest`` is cloned beside itself (files
hard-linked, so cloning is cheap and the originals are never written), the change is
unpacked into a second staging folder and merged into the clone (refusing writes
through links already in ``dest``), and the clone is swapped in.

Callers hold a lock while they build and swap (:func:`skillbook.base.locks.folder_lock`
on the parent, or :func:`skillbook.base.locks.locked` on a lock file beside it), so two
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
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from skillbook.base.atomic import exchange as swap_paths
from skillbook.base.atomic import new_token
from skillbook.distribution import InstallError
from skillbook.distribution.progress import NoProgress, Progress

__all__ = [
    "Leftover",
    "StagedTarget",
    "make_staging",
    "recover",
    "remove_tree",
    "replace_tree",
    "staging_name",
]

_KINDS = ("tmp", "old", "new")
_SUFFIX = re.compile(r"\.(tmp|old|new)-([a-z0-9]{8})\Z")


@dataclass(frozen=True, slots=True)
class Leftover:
    """A leftover of a crashed run: what was found and what was done with it."""

    path: Path
    action: str  # "removed", "restored" (old tree back) or "completed" (new tree in place)


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


def _rejected(message: str) -> InstallError:
    return InstallError("install.archive-rejected", message)


def _clone_tree(src: Path, dst: Path, skip: frozenset[str]) -> None:
    """Recreate ``src`` at ``dst`` (made by the caller): folders copied, files
    hard-linked, links as links."""
    with os.scandir(src) as entries:
        for entry in entries:
            if entry.name in skip:
                continue
            to = dst / entry.name
            info = entry.stat(follow_symlinks=False)
            if st.S_ISLNK(info.st_mode):
                os.symlink(os.readlink(entry.path), to)
            elif st.S_ISDIR(info.st_mode):
                to.mkdir(mode=0o700)
                _clone_tree(Path(entry.path), to, frozenset())
            elif st.S_ISREG(info.st_mode):
                try:
                    os.link(entry.path, to, follow_symlinks=False)
                except OSError:
                    shutil.copy2(entry.path, to, follow_symlinks=False)
            else:
                raise _rejected(f"cannot stage {entry.path}: not a file, folder or link")
    os.chmod(dst, st.S_IMODE(os.lstat(src).st_mode))


class StagedTarget:
    """A clone of ``target`` to change, swapped in by :meth:`commit` (see the module doc).

    On entry, leftovers of a crashed run are recovered (:func:`recover`), the clone
    and the staging folder are made beside ``target``; on exit both are removed
    (after a commit the clone's name is gone already). ``skip``: top-level names of
    ``target`` not cloned (so dropped by the swap).
    """

    def __init__(self, target: Path, *, skip: frozenset[str] = frozenset()) -> None:
        self.target = target
        self.clone = staging_name(target, "tmp", new_token())
        self.staging = staging_name(target, "tmp", new_token())
        self._skip = skip

    def __enter__(self) -> StagedTarget:
        recover(self.target)
        try:
            # 0700 until the clone is complete; it then takes the target's mode.
            self.clone.mkdir(mode=0o700)
            _clone_tree(self.target, self.clone, self._skip)
            self.staging.mkdir(mode=0o700)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        for path in (self.staging, self.clone):
            # What cannot be removed now is a leftover the next run's recover() removes.
            with contextlib.suppress(OSError):
                remove_tree(path)

    def merge_staging(self, progress: Progress | None = None) -> None:
        """Move every staged file into the clone (OpenClaw's merge, onto the clone)."""
        self._merge_dir(self.staging, "", progress or NoProgress())

    def _merge_dir(self, source: Path, rel: str, progress: Progress) -> None:
        with os.scandir(source) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in entries:
            child_rel = f"{rel}/{entry.name}" if rel else entry.name
            info = entry.stat(follow_symlinks=False)
            dest = self.clone / child_rel
            if st.S_ISLNK(info.st_mode):
                raise _rejected(f"archive entry traverses symlink in destination: {child_rel}")
            self.check_path(child_rel)
            if st.S_ISDIR(info.st_mode):
                if dest.exists() and not dest.is_dir():
                    raise _rejected(f"archive entry conflicts with an existing file: {child_rel}")
                dest.mkdir(exist_ok=True)
                self._merge_dir(Path(entry.path), child_rel, progress)
                os.chmod(dest, st.S_IMODE(info.st_mode))
            elif st.S_ISREG(info.st_mode):
                if dest.is_dir():
                    raise _rejected(f"archive entry conflicts with an existing folder: {child_rel}")
                # A rename replaces the clone's hard link; the target's file is untouched.
                os.replace(entry.path, dest)
                progress.advance(1)
            else:
                raise _rejected(f"archive staging contains unsupported entry: {child_rel}")

    def check_path(self, rel: str, shown: str | None = None) -> None:
        """Refuse a relative path that goes through (or ends at) a symlink in the clone
        (i.e. one already in the target); the message names ``shown`` (default ``rel``).
        """
        current = self.clone
        for part in rel.split("/"):
            current = current / part
            try:
                info = os.lstat(current)
            except FileNotFoundError:
                return
            if st.S_ISLNK(info.st_mode):
                raise _rejected(f"archive entry traverses symlink in destination: {shown or rel}")

    def commit(self) -> None:
        """Swap the clone in (:func:`replace_tree`); the old tree is removed, or left for
        the next run's :func:`recover` when it cannot be."""
        replace_tree(self.clone, self.target, on_cleanup_error=lambda _path, _exc: None)
