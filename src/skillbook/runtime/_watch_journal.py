"""The watcher's record of what it reported, so a rebuild can look at only those paths.

Input: every batch a :class:`~skillbook.runtime.watch.SkillsWatcher` fires, with the
version its bump produced, and every (re)arming of the OS watches. Output: the
changes between two versions, or None when they may be incomplete: older entries
were dropped to bound memory, or the watches were re-armed (events between two
``watchfiles`` calls, or after a stop, are not seen).
"""

from __future__ import annotations

import threading
from collections import deque

from skillbook.runtime._watch_parts import Change

__all__ = ["MAX_JOURNAL_CHANGES", "ChangeJournal"]

#: Changes kept; a session further behind than this rebuilds with a full stat walk.
MAX_JOURNAL_CHANGES = 20_000


class ChangeJournal:
    """Batches by version, bounded; thread-safe (the watcher writes, sessions read)."""

    def __init__(self, limit: int = MAX_JOURNAL_CHANGES) -> None:
        #: Held by the watcher across its version bump and :meth:`record`, so a reader
        #: that saw a version also sees its batch.
        self.lock = threading.RLock()
        self._limit = max(1, limit)
        self._batches: deque[tuple[int, tuple[Change, ...]]] = deque()
        self._size = 0
        #: Versions at or below this one may have lost changes.
        self._floor = 0
        #: Counts (re)armings: changes may have gone unseen between two of them.
        self.epoch = 0

    def record(self, version: int, batch: tuple[Change, ...]) -> None:
        with self.lock:
            self._batches.append((version, batch))
            self._size += len(batch)
            while self._size > self._limit and self._batches:
                dropped, old = self._batches.popleft()
                self._size -= len(old)
                self._floor = max(self._floor, dropped)

    def rearmed(self) -> None:
        with self.lock:
            self.epoch += 1

    def since(self, after: int, upto: int) -> list[Change] | None:
        """The changes bumped at versions in (``after``, ``upto``], oldest first; None
        when some may be missing."""
        with self.lock:
            if after < self._floor:
                return None
            return [c for v, batch in self._batches if after < v <= upto for c in batch]
