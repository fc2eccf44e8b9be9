"""Parsed SKILL.md files and the skills built from them, kept between discoveries.

Input: lookups by path and file identity (device, inode, size, mtime_ns, ctime_ns)
from :class:`~skillbook.pipeline.discovery.skill_reader.SkillReader`, and the values
it parsed and built. Output: the value kept for exactly that identity, or None; an
entry is used only while the file is unchanged, so a cached discovery is as correct
as a fresh one. The cache also holds, for the root scanner, whole plain roots
(:mod:`skillbook.pipeline.cache.root_memo`) and the watcher's hint of one build
(:mod:`skillbook.pipeline.cache.change_hint`); misses may be answered from disk
(:mod:`skillbook.pipeline.cache.parse_store`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skillbook.model import ParsedSkillFile

if TYPE_CHECKING:
    from skillbook.pipeline.cache.change_hint import ChangeHint
    from skillbook.pipeline.cache.parse_store import ParseStore
    from skillbook.pipeline.cache.root_memo import RootRecord

__all__ = ["ParseCache"]


class ParseCache:
    """Parsed SKILL.md files, owned by the caller and reused across discoveries.

    An entry is used only while the file's (device, inode, size, mtime_ns, ctime_ns)
    are unchanged, so a cached discovery is always as correct as a fresh one; an
    unchanged tree costs only directory listings and ``stat`` calls. Given a
    :class:`~skillbook.pipeline.cache.parse_store.ParseStore`, misses are looked up on disk too
    (files parsed by an earlier process) and new entries are kept there by
    :meth:`flush`.
    """

    __slots__ = ("_built", "_entries", "disk", "hint", "hits", "misses", "roots", "store_hits")

    def __init__(self, store: ParseStore | None = None) -> None:
        self._entries: dict[str, tuple[tuple[int, ...], object]] = {}
        self._built: dict[tuple[str, ...], tuple[tuple[int, ...], object]] = {}
        #: The on-disk store behind the memory, or None.
        self.disk = store
        #: Whole plain roots as last scanned, by (source label, folder): see _root_memo.
        self.roots: dict[tuple[str, str], RootRecord] = {}
        #: What a watcher saw change, during one hinted build (see skillbook.pipeline.cache.change_hint).
        self.hint: ChangeHint | None = None
        #: Parse lookups answered from the cache / that had to read and parse.
        self.hits = 0
        self.misses = 0
        #: Of the hits, those answered from the on-disk store.
        self.store_hits = 0

    def lookup(self, path: str, identity: tuple[int, ...]) -> object | None:
        entry = self._entries.get(path)
        if entry is not None and entry[0] == identity:
            self.hits += 1
            return entry[1]
        disk = self.disk
        if disk is not None:
            found = disk.lookup(path, identity)
            if found is not None:
                self._entries[path] = (identity, found)
                self.hits += 1
                self.store_hits += 1
                return found
        self.misses += 1
        return None

    def peek(self, path: str, identity: tuple[int, ...]) -> ParsedSkillFile | None:
        """The parsed file held in memory for exactly ``identity`` (no counting, no disk)."""
        entry = self._entries.get(path)
        if entry is not None and entry[0] == identity and isinstance(entry[1], ParsedSkillFile):
            return entry[1]
        return None

    def store(self, path: str, identity: tuple[int, ...], value: object) -> None:
        self._entries[path] = (identity, value)
        if self.disk is not None and isinstance(value, ParsedSkillFile):
            self.disk.store(path, identity, value)

    def flush(self) -> None:
        """Write new entries to the on-disk store (a no-op without one)."""
        if self.disk is not None:
            self.disk.flush()

    def lookup_built(self, key: tuple[str, ...], identity: tuple[int, ...]) -> Any:
        """The skill built from a file at ``key`` (path, folder, source, real folder)."""
        entry = self._built.get(key)
        return entry[1] if entry is not None and entry[0] == identity else None

    def store_built(self, key: tuple[str, ...], identity: tuple[int, ...], value: object) -> None:
        self._built[key] = (identity, value)

    def discard(self, path: str) -> None:
        self._entries.pop(path, None)
        self.roots.clear()
        for key in [k for k in self._built if k[0] == path]:
            del self._built[key]

    def clear(self) -> None:
        self._entries.clear()
        self._built.clear()
        self.roots.clear()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)
