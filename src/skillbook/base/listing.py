"""Directory listings as OpenClaw reads them.

Input: a folder path (``str``). Output: a :class:`Listing` of its candidate child
folders in Node's ``readdir`` (byte) order, with what OpenClaw skips silently kept for
diagnostics (:func:`list_child_dirs`), or the real child folders in ``localeCompare``
order (:func:`list_real_subdirs_locale`). Never raises on an unreadable folder: the
listing carries the error. A listing also names the entries whose kind the folder's
own ``stat`` does not vouch for (:attr:`Listing.followed`), for callers that record
what a result depends on.
"""

from __future__ import annotations

import errno
import operator
import os
import sys
from dataclasses import dataclass

from skillbook.base.js import locale_compare_key

#: Names a directory listing never offers as candidates (besides ``.``-prefixed ones).
IGNORED_DIR_NAMES = frozenset({"node_modules"})


def byte_order_key(name: str) -> bytes:
    """Node's ``readdir`` order: libuv sorts entries with ``strcmp`` on the raw bytes."""
    return os.fsencode(name)


_FS_ENCODING = sys.getfilesystemencoding()
_FS_ERRORS = sys.getfilesystemencodeerrors()


def _entry_order_key(entry: os.DirEntry[str]) -> bytes:
    # byte_order_key(entry.name) in one call: os.fsencode of a str is this encode.
    return entry.name.encode(_FS_ENCODING, _FS_ERRORS)


@dataclass(frozen=True, slots=True)
class Listing:
    """One directory read the way OpenClaw's ``listChildDirectories`` reads it.

    ``dirs`` are candidate names in readdir (byte) order, symlinks to directories
    included; the other fields are what OpenClaw skips silently, kept for diagnostics.
    """

    dirs: tuple[str, ...] = ()
    linked: frozenset[str] = frozenset()  # names in ``dirs`` that are symlinks
    hidden_dirs: tuple[str, ...] = ()
    broken_links: tuple[str, ...] = ()
    md_files: tuple[str, ...] = ()
    error: str | None = None
    #: Symlinks that resolve to themselves (``a -> a``, ``a <-> b``).
    looped_links: tuple[str, ...] = ()
    #: Every entry whose kind came through a symbolic link, or could not be read: a
    #: folder's entries and their kinds are unchanged while its stat is, but for these.
    followed: tuple[str, ...] = ()


_NAME = operator.attrgetter("name")


def list_child_dirs(directory: str) -> Listing:
    try:
        with os.scandir(directory) as it:
            entries = list(it)
    except OSError as exc:
        return Listing(error=exc.strerror or str(exc))
    # UTF-8 keeps code-point order, so names sort as their bytes do, except names
    # holding undecodable bytes (surrogate escapes): only those need the byte key.
    if all(e.name.isascii() for e in entries):
        entries.sort(key=_NAME)
    else:
        entries.sort(key=_entry_order_key)
    dirs: list[str] = []
    linked: set[str] = set()
    hidden: list[str] = []
    broken: list[str] = []
    looped: list[str] = []
    md_files: list[str] = []
    followed: list[str] = []
    for entry in entries:
        name = entry.name
        try:
            is_link = entry.is_symlink()
            if is_link:
                followed.append(name)  # where it points is not in the folder's stat
            is_dir = entry.is_dir(follow_symlinks=True)
        except OSError as exc:
            if not followed or followed[-1] != name:
                followed.append(name)
            if exc.errno == errno.ELOOP:
                looped.append(name)
                continue
            is_link, is_dir = False, False
        if is_link and not is_dir and not os.path.exists(entry.path):
            broken.append(name)
            continue
        if name.startswith("."):
            if is_dir:
                hidden.append(name)
            continue
        if name in IGNORED_DIR_NAMES:
            continue
        if is_dir:
            dirs.append(name)
            if is_link:
                linked.add(name)
        elif name.lower().endswith(".md"):
            md_files.append(name)
    return Listing(
        dirs=tuple(dirs),
        linked=frozenset(linked),
        hidden_dirs=tuple(hidden),
        broken_links=tuple(broken),
        md_files=tuple(md_files),
        looped_links=tuple(looped),
        followed=tuple(followed),
    )


def list_real_subdirs_locale(directory: str) -> list[str]:
    """``listCandidateSkillDirs``: real (non-link) child dirs, full paths, localeCompare order."""
    try:
        with os.scandir(directory) as it:
            paths = [
                e.path
                for e in it
                if not e.name.startswith(".")
                and e.name not in IGNORED_DIR_NAMES
                and e.is_dir(follow_symlinks=False)
            ]
    except OSError:
        return []
    return sorted(paths, key=locale_compare_key)
