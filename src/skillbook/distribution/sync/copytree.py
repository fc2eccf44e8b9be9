"""Copy one skill folder the way OpenClaw's sandbox sync does (Node's ``fs.cp``).

Input: the skill's folder, a new destination path, the link policy. Output: the copy
on disk and a :class:`CopyReport` of the links it wrote or dropped; a failure raises
:class:`CopyError` with a Node-style message, and the caller removes the partial copy.

What OpenClaw's ``fsp.cp(baseDir, dest, {recursive, force, filter})`` does, kept:
any entry named ``.git`` or ``node_modules`` is skipped at every depth; symbolic
links are recreated, never followed, with a relative target made absolute against
the link's folder (Node's default ``verbatimSymlinks: false``), so a skill folder
that is itself a symlink becomes a symlink; file modes are kept; FIFOs and sockets
fail the copy.

Hardened, because the source may be hostile or change underneath: every folder and
file is opened relative to its parent's descriptor with ``O_NOFOLLOW`` and checked
to be the inode that was listed, so swapping a file for a symlink mid-copy can never
copy a host file into the sandbox; device files are refused (Node would read them);
set-id bits are dropped and copied folders stay writable by their owner.

``links="sandbox"`` (skillbook only) makes a copy that works inside a sandbox: a
symlinked skill folder is copied as a real folder, a relative link that stays inside
the skill keeps its target as written, and a link that is absolute or leaves the skill
is left out (reported), since it could only point at a host path.
"""

from __future__ import annotations

import errno
import os
import posixpath
import shutil
import stat as st
from dataclasses import dataclass, field

from skillbook.base.fs import climbs_out
from skillbook.distribution.sync import SyncError

#: Entry names skipped at any depth (OpenClaw's filter).
EXCLUDED_NAMES = frozenset({".git", "node_modules"})
#: Link policies: OpenClaw's (Node ``fs.cp``) and the sandbox-friendly one.
LINK_POLICIES = ("openclaw", "sandbox")

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW
_CHUNK = 1 << 20


class CopyError(SyncError):
    """The copy of one skill failed; ``str()`` is the message after ``…to sandbox: ``."""


@dataclass(slots=True)
class CopyReport:
    """What one skill copy wrote besides plain files and folders."""

    #: (path inside the skill, target) of links written with an absolute host target.
    host_links: list[tuple[str, str]] = field(default_factory=list)
    #: (path inside the skill, target) of links left out (``links="sandbox"``).
    dropped_links: list[tuple[str, str]] = field(default_factory=list)
    files: int = 0
    bytes: int = 0


def copy_skill(
    src: str,
    dest: str,
    *,
    links: str = "openclaw",
    real_src: str | None = None,
    shown_dest: str | None = None,
) -> CopyReport:
    """Copy the skill folder ``src`` to the new path ``dest``; raises :class:`CopyError`.

    ``real_src`` is the folder's real path (used by ``links="sandbox"`` to copy a
    symlinked skill as a folder); ``shown_dest`` is the path named in error messages
    (the final place, when ``dest`` is a staging copy).
    """
    if links not in LINK_POLICIES:
        raise ValueError(f"links must be one of {LINK_POLICIES}, got {links!r}")
    copier = _Copier(links, shown_dest or dest)
    try:
        copier.top(src, dest, real_src)
    except OSError as exc:
        raise CopyError(_node_message(exc)) from exc
    return copier.report


class _Copier:
    def __init__(self, links: str, shown_root: str) -> None:
        self.links = links
        self.shown_root = shown_root
        self.report = CopyReport()

    def shown(self, rel: str) -> str:
        return os.path.join(self.shown_root, rel) if rel else self.shown_root

    def top(self, src: str, dest: str, real_src: str | None) -> None:
        info = _lstat(src)
        if st.S_ISLNK(info.st_mode) and self.links == "openclaw":
            self.link_openclaw(src, os.readlink(src), dest, "")
            return
        opened = real_src if st.S_ISLNK(info.st_mode) and real_src else src
        flags = _DIR_FLAGS if st.S_ISLNK(info.st_mode) else _DIR_FLAGS | os.O_NOFOLLOW
        fd = _open(opened, flags, "opendir")
        try:
            self.folder(fd, os.fstat(fd), src, dest, "")
        finally:
            os.close(fd)

    def folder(self, fd: int, info: os.stat_result, src: str, dest: str, rel: str) -> None:
        os.mkdir(dest, 0o700)
        with os.scandir(fd) as listing:
            entries = list(listing)
        for entry in entries:
            name = entry.name
            if name in EXCLUDED_NAMES:
                continue
            child_rel = f"{rel}/{name}" if rel else name
            child_src = os.path.join(src, name)
            child_dest = os.path.join(dest, name)
            child = os.stat(name, dir_fd=fd, follow_symlinks=False)
            mode = child.st_mode
            if st.S_ISLNK(mode):
                target = os.readlink(name, dir_fd=fd)
                if self.links == "openclaw":
                    self.link_openclaw(child_src, target, child_dest, child_rel)
                else:
                    self.link_sandbox(target, child_dest, child_rel)
            elif st.S_ISDIR(mode):
                sub = _open(name, _DIR_FLAGS | os.O_NOFOLLOW, "opendir", dir_fd=fd, shown=child_src)
                try:
                    _same(os.fstat(sub), child, child_src)
                    self.folder(sub, child, child_src, child_dest, child_rel)
                finally:
                    os.close(sub)
            elif st.S_ISREG(mode):
                self.file(fd, name, child, child_src, child_dest)
            else:
                raise CopyError(_special_message(mode, self.shown(child_rel)))
        # Set last (as Node does), so a read-only folder can still be filled; the
        # owner keeps write access so the copy can always be replaced or removed.
        os.chmod(dest, (st.S_IMODE(info.st_mode) & 0o777) | st.S_IRWXU)

    def file(self, dir_fd: int, name: str, info: os.stat_result, src: str, dest: str) -> None:
        fd = _open(name, _FILE_FLAGS, "open", dir_fd=dir_fd, shown=src)
        try:
            _same(os.fstat(fd), info, src)
            out = os.open(dest, _NEW_FILE_FLAGS, 0o600)
            try:
                with (
                    open(fd, "rb", buffering=0, closefd=False) as reader,
                    open(out, "wb", closefd=False) as writer,
                ):
                    shutil.copyfileobj(reader, writer, _CHUNK)
                os.fchmod(out, st.S_IMODE(info.st_mode) & 0o777)
            finally:
                os.close(out)
        finally:
            os.close(fd)
        self.report.files += 1
        self.report.bytes += info.st_size

    def link_openclaw(self, src: str, target: str, dest: str, rel: str) -> None:
        # Node's fs.cp: path.resolve(dirname(src), target) unless already absolute.
        resolved = target if os.path.isabs(target) else _resolve(os.path.dirname(src), target)
        os.symlink(resolved, dest)
        self.report.host_links.append((rel, resolved))

    def link_sandbox(self, target: str, dest: str, rel: str) -> None:
        if os.path.isabs(target) or climbs_out(posixpath.join(posixpath.dirname(rel), target)):
            self.report.dropped_links.append((rel, target))
            return
        os.symlink(target, dest)


def _resolve(base: str, target: str) -> str:
    joined = os.path.normpath(os.path.join(base, target))
    if joined.startswith("//") and not joined.startswith("///"):
        joined = joined[1:]
    return joined


def _lstat(path: str) -> os.stat_result:
    try:
        return os.lstat(path)
    except OSError as exc:
        raise CopyError(_node_message(exc, "lstat", path)) from exc


def _open(
    path: str, flags: int, op: str, *, dir_fd: int | None = None, shown: str | None = None
) -> int:
    try:
        return os.open(path, flags, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(path, dir_fd):
            # O_NOFOLLOW refused it: the entry listed as a file or folder is a link now.
            raise CopyError(
                f"{shown or path} was replaced by a symbolic link during the copy"
            ) from exc
        raise CopyError(_node_message(exc, op, shown or path)) from exc


def _is_link(path: str, dir_fd: int | None) -> bool:
    try:
        return st.S_ISLNK(os.stat(path, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _same(opened: os.stat_result, listed: os.stat_result, path: str) -> None:
    if (opened.st_dev, opened.st_ino) != (listed.st_dev, listed.st_ino):
        raise CopyError(f"{path} changed during the copy")


def _special_message(mode: int, shown: str) -> str:
    if st.S_ISFIFO(mode):
        kind = "a FIFO pipe"
    elif st.S_ISSOCK(mode):
        kind = "a socket file"
    elif st.S_ISCHR(mode) or st.S_ISBLK(mode):
        # Node's fs.cp would read the device; a skill never needs one.
        kind = "a device file"
    else:
        kind = "an unknown file type"
    return f"Cannot copy {kind}: cp returned EINVAL (cannot copy {kind}: {shown}) {shown}"


def _node_message(exc: OSError, op: str | None = None, path: str | None = None) -> str:
    """``EACCES: permission denied, open '/x'``: the shape of Node's errors."""
    code = errno.errorcode.get(exc.errno or 0, "EUNKNOWN")
    text = (exc.strerror or str(exc)).lower()
    where = path if path is not None else exc.filename
    syscall = op or "copy"
    return f"{code}: {text}, {syscall} '{where}'" if where else f"{code}: {text}"
