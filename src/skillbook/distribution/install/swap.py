"""Change a folder so that a crash leaves it either as it was or as it will be.

Input: a target folder. :class:`StagedTarget` makes a *clone* next to it (files
hard-linked, so cloning is cheap and the originals are never written), lets the
caller extract into a fresh *staging* folder, merges the staged tree into the clone
(refusing writes through symlinks already in the target), and then swaps clone and
target in one ``renameat2(RENAME_EXCHANGE)`` (``renamex_np(RENAME_SWAP)`` on macOS).
Where the kernel cannot exchange, two renames are used and :func:`recover` puts the
old folder back after a crash between them. Output: the new tree in place; the old
one is removed. A ``kill -9`` at any moment leaves the old tree or the new one, plus
hidden ``.<name>.sb-*`` leftovers that the next run removes.

The caller holds a lock for the target (see :func:`locked`): two installs into the
same folder at once would otherwise each swap in a tree without the other's files.
"""

from __future__ import annotations

import os
import shutil
import stat
import uuid
from pathlib import Path
from typing import Final

from skillbook.base.atomic import exchange as swap_paths
from skillbook.distribution.install import InstallError
from skillbook.distribution.install.progress import NoProgress, Progress

__all__ = ["StagedTarget", "exchange", "recover"]

_MARK: Final = ".sb-"


def _rejected(message: str) -> InstallError:
    return InstallError("install.archive-rejected", message)


def exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically; False when the platform, the file system or the call
    cannot (the two-rename fallback then reports what is wrong)."""
    try:
        return swap_paths(a, b)
    except OSError:
        return False


def _siblings(target: Path) -> list[Path]:
    prefix = f".{target.name}{_MARK}"
    try:
        return [p for p in target.parent.iterdir() if p.name.startswith(prefix)]
    except FileNotFoundError:
        return []


def _remove(path: Path) -> None:
    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path, ignore_errors=True)


def recover(target: Path) -> None:
    """Undo what a crash left: restore ``target`` from a half-done two-rename swap,
    then remove every clone, staging folder and old tree of earlier runs.
    """
    leftovers = _siblings(target)
    olds = [p for p in leftovers if p.name.startswith(f".{target.name}{_MARK}old-")]
    if olds and not os.path.lexists(target):
        os.rename(max(olds, key=lambda p: p.stat().st_mtime), target)
    for path in _siblings(target):
        _remove(path)


def _clone_tree(src: Path, dst: Path, skip: frozenset[str]) -> None:
    """Recreate ``src`` at ``dst``: folders copied, files hard-linked, links as links."""
    dst.mkdir(mode=0o700)
    with os.scandir(src) as entries:
        for entry in entries:
            if entry.name in skip:
                continue
            to = dst / entry.name
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                os.symlink(os.readlink(entry.path), to)
            elif stat.S_ISDIR(st.st_mode):
                _clone_tree(Path(entry.path), to, frozenset())
            elif stat.S_ISREG(st.st_mode):
                try:
                    os.link(entry.path, to, follow_symlinks=False)
                except OSError:
                    shutil.copy2(entry.path, to, follow_symlinks=False)
            else:
                raise _rejected(f"cannot stage {entry.path}: not a file, folder or link")
    os.chmod(dst, stat.S_IMODE(os.lstat(src).st_mode))


class StagedTarget:
    """A clone of ``target`` to change, swapped in by :meth:`commit` (see the module doc)."""

    def __init__(self, target: Path, *, skip: frozenset[str] = frozenset()) -> None:
        self.target = target
        token = uuid.uuid4().hex[:12]
        self.clone = target.parent / f".{target.name}{_MARK}next-{token}"
        self.staging = target.parent / f".{target.name}{_MARK}stage-{token}"
        self._skip = skip
        self._committed = False

    def __enter__(self) -> StagedTarget:
        recover(self.target)
        try:
            _clone_tree(self.target, self.clone, self._skip)
            self.staging.mkdir(mode=0o700)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        _remove(self.staging)
        _remove(self.clone)

    def merge_staging(self, progress: Progress | None = None) -> None:
        """Move every staged file into the clone (OpenClaw's merge, onto the clone)."""
        self._merge_dir(self.staging, "", progress or NoProgress())

    def _merge_dir(self, source: Path, rel: str, progress: Progress) -> None:
        with os.scandir(source) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in entries:
            child_rel = f"{rel}/{entry.name}" if rel else entry.name
            st = entry.stat(follow_symlinks=False)
            dest = self.clone / child_rel
            if stat.S_ISLNK(st.st_mode):
                raise _rejected(f"archive entry traverses symlink in destination: {child_rel}")
            self.check_path(child_rel)
            if stat.S_ISDIR(st.st_mode):
                if dest.exists() and not dest.is_dir():
                    raise _rejected(f"archive entry conflicts with an existing file: {child_rel}")
                dest.mkdir(exist_ok=True)
                self._merge_dir(Path(entry.path), child_rel, progress)
                os.chmod(dest, stat.S_IMODE(st.st_mode))
            elif stat.S_ISREG(st.st_mode):
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
                st = os.lstat(current)
            except FileNotFoundError:
                return
            if stat.S_ISLNK(st.st_mode):
                raise _rejected(f"archive entry traverses symlink in destination: {shown or rel}")

    def commit(self) -> None:
        """Swap the clone in; the old tree (now at the clone's name) is removed."""
        if not os.path.lexists(self.target):
            os.rename(self.clone, self.target)
        elif not exchange(self.clone, self.target):
            old = self.target.parent / f".{self.target.name}{_MARK}old-{uuid.uuid4().hex[:12]}"
            os.rename(self.target, old)
            # A crash here leaves no target; recover() renames `old` back.
            os.rename(self.clone, self.target)
            _remove(old)
        self._committed = True
        _remove(self.clone)
