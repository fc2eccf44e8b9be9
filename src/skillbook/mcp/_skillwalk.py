"""Walking and reading a skill folder without ever leaving it (spec §4.7, and races).

Input: a skill folder, its SKILL.md and the real path discovery saw. Output: a
stat-only :class:`Listing` of the servable files (SKILL.md first) and directories,
what was skipped and why, and :func:`read`, which reads one listed file's bytes
through the folder the walk saw. Symlinks that leave the folder and symlinked
sub-folders are skipped (never followed); dot-files, ``node_modules`` and anything
that is not a regular file are skipped. Each read opens the file from the skill
folder down, one component at a time with ``O_NOFOLLOW``
(:func:`skillbook.base.fs.open_contained`): a folder inside the skill can be swapped for a
symlink between the walk and the read, so the skill folder must still be the one the
walk saw (device and inode), and so must the file; on Linux the kernel's path of the
opened file must equal the path the walk checked. Capturing the bytes of a whole
folder is :mod:`skillbook.mcp._skillfiles`.
"""

from __future__ import annotations

import errno
import os
import stat as st
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from skillbook.base import fs as _fs
from skillbook.mcp._skillformat import SKILL_FILE

#: Folder names never served, besides every dot-name.
EXCLUDED_NAMES = frozenset({"node_modules"})


@dataclass(frozen=True, slots=True)
class Skipped:
    rel: str
    reason: str


#: What the walk saw of one file: (rel, real path, size, mtime_ns, inode, ctime_ns, device).
Seen = tuple[str, str, int, int, int, int, int]


@dataclass(frozen=True, slots=True)
class Listing:
    """A stat-only walk: enough to tell whether anything changed since the last read."""

    #: One :data:`Seen` per file, SKILL.md first.
    files: tuple[Seen, ...]
    directories: tuple[str, ...]
    skipped: tuple[Skipped, ...]
    missing_skill_md: str | None = None
    #: The skill folder's real path and (device, inode) as the walk saw them.
    root_real: str = ""
    root_id: tuple[int, int] | None = None


def walk(base_dir: Path, skill_file: Path, real_dir: Path | None = None) -> Listing:
    base = os.fspath(base_dir)
    root_real = _fs.try_realpath(base)
    if root_real is None:
        return Listing((), (), (), missing_skill_md="the skill folder cannot be resolved")
    # The string test settles the usual case without building Path objects per skill.
    standalone = os.fspath(skill_file) != os.path.join(base, SKILL_FILE) and (
        skill_file.name != SKILL_FILE or skill_file.parent != base_dir
    )
    if real_dir is not None and not standalone and root_real != os.fspath(real_dir):
        # Discovery checked the folder at its real path; it now resolves elsewhere.
        why = f"the skill folder now resolves to {root_real}, not {os.fspath(real_dir)}"
        return Listing((), (), (), missing_skill_md=why)
    try:
        root_info = os.stat(root_real)
    except OSError as exc:
        return Listing((), (), (), missing_skill_md=f"cannot stat: {exc.strerror or exc}")
    root_id = (root_info.st_dev, root_info.st_ino)
    if standalone:
        # A standalone Markdown skill (mixed/legacy mode) is one file; its folder is
        # the root holding other skills, which must not be served with it.
        found = _stat_file(os.fspath(skill_file), root_real)
        if isinstance(found, str):
            return Listing((), ("",), (), found, root_real, root_id)
        return Listing(((SKILL_FILE, *found),), ("",), (), None, root_real, root_id)
    files, dirs, skipped = _walk_tree(base, root_real)
    head = [f for f in files if f[0] == SKILL_FILE]
    if not head:
        missing = "no servable SKILL.md"
        return Listing((), tuple(dirs), tuple(skipped), missing, root_real, root_id)
    rest = sorted((f for f in files if f[0] != SKILL_FILE), key=lambda f: f[0])
    listed = (head[0], *rest)
    return Listing(listed, tuple(sorted(dirs)), tuple(skipped), None, root_real, root_id)


def _walk_tree(base: str, root_real: str) -> tuple[list[Seen], list[str], list[Skipped]]:
    files: list[Seen] = []
    dirs: list[str] = [""]
    skipped: list[Skipped] = []
    stack: list[tuple[str, str]] = [(base, "")]
    while stack:
        directory, rel_dir = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            skipped.append(Skipped(rel_dir or ".", f"cannot list: {exc.strerror or exc}"))
            continue
        subdirs: list[tuple[str, str]] = []
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if entry.name.startswith(".") or entry.name in EXCLUDED_NAMES:
                continue
            try:
                is_link = entry.is_symlink()
                if is_link:
                    real = _fs.try_realpath(entry.path)
                    if real is None or not _fs.is_path_inside(root_real, real):
                        skipped.append(Skipped(rel, "symlink points outside the skill folder"))
                        continue
                    if os.path.isdir(real):
                        skipped.append(Skipped(rel, "symlinked folder (not followed)"))
                        continue
                if entry.is_dir(follow_symlinks=False):
                    dirs.append(rel)
                    subdirs.append((entry.path, rel))
                    continue
            except OSError as exc:
                skipped.append(Skipped(rel, f"cannot stat: {exc.strerror or exc}"))
                continue
            if is_link:
                found = _stat_file(entry.path, root_real)
            else:
                # Walked folders are never links, so a plain entry's real path is known:
                # no realpath walk per file (the read re-checks every component).
                found = _stat_plain(root_real + os.sep + rel.replace("/", os.sep))
            if isinstance(found, str):
                skipped.append(Skipped(rel, found))
            else:
                files.append((rel, *found))
        stack.extend(reversed(subdirs))
    return files, dirs, skipped


def _stat_file(path: str, root_real: str) -> tuple[str, int, int, int, int, int] | str:
    """(real, size, mtime_ns, inode, ctime_ns, device) of a regular file inside the root,
    or why not."""
    real = _fs.try_realpath(path)
    if real is None or not _fs.is_path_inside(root_real, real):
        return "resolves outside the skill folder"
    return _regular_file(real, os.stat)


def _stat_plain(real: str) -> tuple[str, int, int, int, int, int] | str:
    """:func:`_stat_file` for a path known to be real and inside the root."""
    return _regular_file(real, os.lstat)


def _regular_file(
    real: str, stat: Callable[[str], os.stat_result]
) -> tuple[str, int, int, int, int, int] | str:
    try:
        info = stat(real)
    except OSError as exc:
        return f"cannot stat: {exc.strerror or exc}"
    if not st.S_ISREG(info.st_mode):
        return "not a regular file"
    return real, info.st_size, info.st_mtime_ns, info.st_ino, info.st_ctime_ns, info.st_dev


def read(listing: Listing, seen: Seen, budget: int) -> bytes | str:
    """The bytes of one walked file, opened through the folder the walk saw."""
    real, ino, dev = seen[1], seen[4], seen[6]
    try:
        fd = _fs.open_contained(real, listing.root_real, anchor_identity=listing.root_id)
    except _fs.PathChanged:
        return "changed while it was read (a folder on its path was replaced)"
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            return "changed while it was read (a folder on its path became a symlink)"
        return f"cannot open: {exc.strerror or exc}"
    try:
        info = os.fstat(fd)
        if not st.S_ISREG(info.st_mode):
            return "not a regular file"
        if (info.st_dev, info.st_ino) != (dev, ino):
            return "changed while it was read (another file is at its path)"
        data = _fs.read_at_most(fd, budget + 1)
        if len(data) > budget:
            # Grown past the limit since the walk: never serve a cut-off file.
            return f"larger than the {budget} bytes left under the per-skill limit"
        return data
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    finally:
        os.close(fd)


def unchanged_identity(seen: Seen, size: int) -> tuple[int, ...] | None:
    """The walk's identity of a file (device, inode, size, mtime, ctime) if the file
    still has it after being read, so the bytes read are the ones it names."""
    try:
        now = os.stat(seen[1])
    except OSError:
        return None
    identity = (seen[6], seen[4], seen[2], seen[3], seen[5])
    after = (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns, now.st_ctime_ns)
    return identity if after == identity and size == seen[2] else None
