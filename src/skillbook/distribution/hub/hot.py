"""What keeps the registry's hot paths (downloads, repeated searches) off the database.

Input: the process's :class:`~skillbook.distribution.hub.db.Database` and the settings'
``flush_seconds``, ``catalog_poll_seconds`` and ``blob_cache_bytes``. Output:

- :class:`CatalogWatch`: the catalog generation, read from the database at most once
  per ``catalog_poll_seconds`` and at once after this process committed a change, so
  answers cached per generation (resolved downloads, search bodies) never outlive a
  hide, delete or publish here, nor by more than the poll delay on another replica;
- :class:`BlobCache`: the bytes of small blobs by key (content-addressed, so an entry
  never goes stale), least recently used out first;
- :class:`ResolvedDownloads`: which archive a download URL names, per generation;
- :class:`DownloadCounter` and :class:`Flusher`: download counts kept in memory and
  added to the database in one transaction every ``flush_seconds`` (the download
  counts alone sooner, after :data:`FLUSH_BATCH` downloads; all on shutdown); replicas
  add to the same rows, so their counts add up within that delay. With
  ``flush_seconds`` 0 every download is counted in its request, as a registry without
  batching would.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Final, cast

from sqlalchemy import Table, bindparam, update

from skillbook.distribution.hub.db import Database
from skillbook.distribution.hub.models import Skill

__all__ = [
    "FLUSH_BATCH",
    "BlobCache",
    "CatalogWatch",
    "DownloadCounter",
    "Flusher",
    "Resolved",
    "ResolvedDownloads",
]

log = logging.getLogger("skillbook.distribution.hub")

#: Pending downloads that wake the flusher before its interval is up.
FLUSH_BATCH: Final = 1000
#: Blobs larger than this are not kept in memory (they are streamed from the store).
BLOB_CACHE_ITEM: Final = 1024 * 1024
#: Resolved download URLs one process remembers (per generation; a new one drops them).
RESOLVED_ENTRIES: Final = 8192


class CatalogWatch:
    """The catalog generation, re-read when older than the poll delay or after a local change.

    Once a server answers requests (:meth:`start`), a daemon thread re-reads it four
    times per poll delay, so the event loop finds it fresh and answers from memory; the
    delay bounds how stale it can be either way.
    """

    def __init__(self, db: Database, poll_seconds: float) -> None:
        self._db = db
        self._poll = poll_seconds
        self._lock = threading.Lock()
        self._generation = -1
        self._read_at = -math.inf
        #: Bumped by every local change: a read that started before it is not trusted.
        self._epoch = 0
        self._thread: threading.Thread | None = None
        self._stopped = threading.Event()
        db.on_catalog_change(self.expire)

    def expire(self) -> None:
        with self._lock:
            self._epoch += 1
            self._read_at = -math.inf

    def fresh(self) -> int | None:
        """The generation if it was read within the poll delay, else None (no I/O)."""
        if time.monotonic() - self._read_at < self._poll:
            return self._generation
        return None

    def current(self) -> int:
        """The generation, read from the database when :meth:`fresh` has none (blocking)."""
        known = self.fresh()
        return known if known is not None else self.refresh()

    def refresh(self) -> int:
        with self._lock:
            epoch = self._epoch
        # The moment before the read: a change committed elsewhere after it shows within
        # the poll delay counted from here, never later.
        started = time.monotonic()
        generation = self._db.generation()
        with self._lock:
            if epoch == self._epoch:
                self._generation, self._read_at = generation, started
        return generation

    def start(self) -> None:
        """Keep the generation fresh from a daemon thread (idempotent; no-op at delay 0)."""
        if self._thread is not None or self._poll <= 0 or self._stopped.is_set():
            return
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._poll_forever, name="skillbook-hub-generation", daemon=True
                )
                self._thread.start()

    def _poll_forever(self) -> None:
        while not self._stopped.wait(self._poll / 4):
            try:
                self.refresh()
            except Exception as exc:  # the next request reads it itself, and reports
                log.warning("registry: reading the catalog generation failed: %s", exc)

    def stop(self) -> None:
        self._stopped.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=10)


class BlobCache:
    """Small blobs' bytes by key, bounded by total size (keys are content hashes)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[str, bytes] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> bytes | None:
        with self._lock:
            data = self._items.get(key)
            if data is not None:
                self._items.move_to_end(key)
            return data

    def put(self, key: str, data: bytes) -> None:
        if len(data) > min(BLOB_CACHE_ITEM, self.max_bytes):
            return
        with self._lock:
            if key in self._items:
                return
            self._items[key] = data
            self._size += len(data)
            while self._size > self.max_bytes:
                _, dropped = self._items.popitem(last=False)
                self._size -= len(dropped)


#: ``(skill id, slug, version, archive key)`` of a published version a download URL names.
Resolved = tuple[int, str, str, str]


class ResolvedDownloads:
    """Download URLs resolved to archives, valid for the generation they were read at."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, ...], tuple[int, Resolved]] = {}

    def get(self, generation: int, key: tuple[str, ...]) -> Resolved | None:
        found = self._items.get(key)
        return found[1] if found is not None and found[0] == generation else None

    def put(self, generation: int, key: tuple[str, ...], value: Resolved) -> None:
        if len(self._items) >= RESOLVED_ENTRIES:
            # Rare (that many distinct URLs in one generation): start again.
            self._items = {}
        self._items[key] = (generation, value)


class DownloadCounter:
    """Downloads per skill, added to the database in batches (or at once when unbatched)."""

    def __init__(
        self, db: Database, *, batched: bool, wake: Callable[[Callable[[], object]], None]
    ) -> None:
        self._db = db
        self.batched = batched
        self._wake = wake
        self._pending: dict[int, int] = {}
        self._count = 0
        self._lock = threading.Lock()

    def add(self, skill_id: int) -> None:
        with self._lock:
            self._pending[skill_id] = self._pending.get(skill_id, 0) + 1
            self._count += 1
            full = self._count >= FLUSH_BATCH
        if not self.batched:
            self.flush()
        elif full:
            self._wake(self.flush)

    def pending(self) -> int:
        with self._lock:
            return self._count

    def flush(self) -> int:
        """Add what is pending to the database in one transaction; returns how many."""
        with self._lock:
            taken, self._pending, self._count = self._pending, {}, 0
        if not taken:
            return 0
        try:
            # One statement run for every skill (executemany), in one transaction.
            skills = cast(Table, Skill.__table__)
            stmt = (
                update(skills)
                .where(skills.c.id == bindparam("skill_id"))
                .values(downloads=skills.c.downloads + bindparam("n"))
            )
            with self._db.engine.begin() as conn:
                conn.execute(stmt, [{"skill_id": k, "n": n} for k, n in sorted(taken.items())])
        except Exception:
            # Kept for the next flush rather than lost (the database may be back by then).
            with self._lock:
                for skill_id, n in taken.items():
                    self._pending[skill_id] = self._pending.get(skill_id, 0) + n
                    self._count += n
            raise
        return sum(taken.values())


class Flusher:
    """A daemon thread that runs the flush jobs every ``interval`` seconds, and one job
    sooner when that job asks (:meth:`wake`).

    A job that wakes the thread early runs alone: the download counter asks after
    :data:`FLUSH_BATCH` downloads, which under load came four times a second, and the
    rate limiter, flushed with it, wrote each client's counter four times a second
    instead of once (measured 2026-11-29: the default limits cost 72 µs of a download's
    316 in the server, most of it those writes).
    """

    def __init__(self, interval: float, jobs: list[Callable[[], object]]) -> None:
        self.interval = interval
        self.jobs = jobs
        self._event = threading.Event()
        self._stopped = False
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        #: Jobs that asked to run before the interval is up.
        self._asked: list[Callable[[], object]] = []

    def ensure_started(self) -> None:
        if self._thread is not None or self._stopped or self.interval <= 0:
            return
        with self._lock:
            if self._thread is None and not self._stopped:
                self._thread = threading.Thread(
                    target=self._run, name="skillbook-hub-flush", daemon=True
                )
                self._thread.start()

    def wake(self, job: Callable[[], object] | None = None) -> None:
        """Run ``job`` soon (every job when None) rather than at the end of the interval."""
        wanted = self.flush if job is None else job
        with self._lock:
            if wanted not in self._asked:
                self._asked.append(wanted)
        self._event.set()

    def flush(self) -> None:
        for job in self.jobs:
            _run_job(job)

    def _run(self) -> None:
        due = time.monotonic() + self.interval
        while not self._stopped:
            self._event.wait(max(0.0, due - time.monotonic()))
            self._event.clear()
            with self._lock:
                asked, self._asked = self._asked, []
            if time.monotonic() >= due:
                self.flush()
                due = time.monotonic() + self.interval
            else:
                for job in asked:
                    _run_job(job)

    def stop(self) -> None:
        """Stop the thread and flush what is left (shutdown)."""
        with self._lock:
            self._stopped = True
            thread, self._thread = self._thread, None
        self._event.set()
        if thread is not None:
            thread.join(timeout=30)
        self.flush()

    def restart(self) -> None:
        """Allow a stopped flusher to run again (an app started twice, as tests do)."""
        with self._lock:
            self._stopped = False


def _run_job(job: Callable[[], object]) -> None:
    try:
        job()
    except Exception as exc:  # a database hiccup must not end the thread
        log.warning("registry: flushing counters failed (kept for later): %s", exc)
