"""A whole root's scan result, reused while nothing it depended on changed.

Input: the outcome of one full scan of a root whose layout is *plain* (every
candidate is a real folder with a regular SKILL.md that loaded as one skill; no
links, groups, nested ``skills/`` root, hidden, broken or standalone entries), and
later the root's fresh listing. Output: the same skills and diagnostics, when the
listing is equal and every SKILL.md still has the ``lstat`` it had: mode, device,
inode, size, mtime, ctime and link count. That is all a plain scan reads besides the
files' bytes, and the bytes cannot change without the ctime changing.

So an unchanged root costs one directory listing and one ``lstat`` per skill — the
floor of noticing a change at all — and hands back the very same :class:`Skill`
objects, which lets the status and catalog memos answer without work. Anything not
plain is scanned in full every time (its files still come from the parse cache).

The listing itself is skipped while the folder's own ``stat`` (device, inode, mtime,
ctime) is unchanged: adding, removing, renaming or replacing an entry changes the
folder's mtime, and a plain root has no symlinks whose targets could change behind
it (git's untracked cache relies on the same rule). As for files, a folder changed
within :data:`~skillbook.pipeline.cache.footprint.RACY_NS` of the scan is not trusted this way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from skillbook.base.listing import Listing
from skillbook.diagnostics import Diagnostic
from skillbook.model import Skill
from skillbook.pipeline.cache.footprint import RACY_NS, changed_files

__all__ = ["RootRecord", "file_identity", "folder_state"]

#: (mode, device, inode, size, mtime_ns, ctime_ns, links) of one SKILL.md.
Identity = tuple[int, int, int, int, int, int, int]
#: (device, inode, mtime_ns, ctime_ns) of a folder, or None when it cannot be read.
FolderState = tuple[int, int, int, int] | None
_SKILL_MD = os.sep + "SKILL.md"


def file_identity(s: os.stat_result) -> Identity:
    return (s.st_mode, s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns, s.st_nlink)


def folder_state(path: str) -> FolderState:
    try:
        s = os.stat(path)
    except OSError:
        return None
    return (s.st_dev, s.st_ino, s.st_mtime_ns, s.st_ctime_ns)


@dataclass(frozen=True, slots=True)
class RootRecord:
    """One plain root as last scanned (see the module docstring)."""

    #: Everything else the scan depended on: label, folder, its real path, options.
    key: tuple[object, ...]
    listing: Listing
    #: The SKILL.md paths checked, in scan order, and their identities.
    files: tuple[str, ...]
    identities: tuple[Identity, ...]
    skills: tuple[Skill, ...]
    #: What loading each file reported, aligned with ``files``.
    diagnostics: tuple[tuple[Diagnostic, ...], ...]
    #: The folder's state before it was listed, and when that was (time.time_ns()).
    folder: FolderState = None
    scanned_at: int = 0
    #: ``files`` by path to position, made on first use by :meth:`hinted`.
    positions: dict[str, int] | None = None

    def listing_unchanged(self, key: tuple[object, ...], folder: FolderState) -> bool:
        """Whether the folder's entries are the ones listed, without listing it."""
        return (
            folder is not None
            and folder == self.folder
            and key == self.key
            and folder[3] < self.scanned_at - RACY_NS
        )

    def changed(self, key: tuple[object, ...], listing: Listing | None) -> list[int] | None:
        """The positions of the SKILL.md files whose ``lstat`` changed, or None when the
        record does not apply at all (other options, another listing, a file gone).
        ``listing`` None: the caller knows the folder's entries are unchanged."""
        if key != self.key or (listing is not None and listing != self.listing):
            return None
        try:
            return changed_files(self.files, self.identities)
        except OSError:
            return None

    def hinted(self, key: tuple[object, ...], base_dir: str, paths: list[str]) -> list[int] | None:
        """The positions of the SKILL.md files among ``paths`` (what a watcher saw change
        inside ``base_dir``), without looking at any other file; None when the folder's
        entries may have changed (an entry directly inside it was reported) or a path is
        one this record cannot place."""
        if key != self.key:
            return None
        positions = self.positions
        if positions is None:
            positions = {path: index for index, path in enumerate(self.files)}
            # A cache on a frozen value: derived from ``files`` alone, kept by replace().
            object.__setattr__(self, "positions", positions)
        prefix = base_dir + os.sep
        out: set[int] = set()
        for path in paths:
            rel = path[len(prefix) :] if path.startswith(prefix) else None
            if rel is None or os.sep not in rel:
                return None
            index = positions.get(path)
            if index is not None:
                out.add(index)
            elif prefix + rel.split(os.sep, 1)[0] + _SKILL_MD not in positions:
                return None
            # Else a file deeper inside a skill folder: a plain scan never reads it.
        return sorted(out)

    def still_valid(self, key: tuple[object, ...], listing: Listing | None) -> bool:
        """Whether a scan now would read exactly what this one read."""
        return self.changed(key, listing) == []
