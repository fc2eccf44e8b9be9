"""Registry search: the selector of ``skillbook.selection`` over every visible skill.

Input: the catalog (read through :class:`~skillbook.distribution.hub.db.Database`) and a query.
Output: :class:`Hit` values, best first. Ranking is the selector's — BM25 over name,
description, headings and body, fused with the embedding models (``hybrid``, the
default) — not a ``LIKE`` query. A skill is returned when the words match (BM25 above
zero) or the fused score reaches the selector's tuned threshold, so a query no skill
serves returns nothing rather than everything.

The index is a cache, never state: before each search the process compares the
catalog generation (:class:`~skillbook.distribution.hub.hot.CatalogWatch`: read from
the database within its poll delay, at once after a local change) with the one it
indexed and rebuilds what changed (unchanged skills keep their documents and
vectors). Answers, and the JSON bodies the route made of them, are cached per
generation: a publish, hide or delete starts a new one, so no cached answer shows a
version that is no longer visible.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple, overload

from skillbook.distribution.hub import catalog
from skillbook.distribution.hub.db import Database
from skillbook.model import Skill as BookSkill
from skillbook.pipeline.parse.skill_file import parse_skill_text

if TYPE_CHECKING:
    from skillbook.distribution.hub.batching import BatchingEmbedder
    from skillbook.selection.selector import Selector

__all__ = ["Entry", "Hit", "HubSearch"]

log = logging.getLogger("skillbook.distribution.hub.search")

#: How many recent answers a process keeps (per catalog generation).
ANSWER_CACHE: Final = 512
#: A ranking that costs less CPU than this (the recent mean) may run in the event loop:
#: below it, the hop to a worker thread and back costs about as much as the ranking.
INLINE_SECONDS: Final = 0.001


@dataclass(frozen=True, slots=True)
class Entry:
    """One skill as search shows it (its latest published version)."""

    skill_id: int
    version_id: int
    slug: str
    display_name: str
    summary: str | None
    version: str
    owner: str
    created_at: int
    updated_at: int
    downloads: int
    book_skill: BookSkill


class Hit(NamedTuple):
    """One skill of an answer and its score (a tuple: made 25 times per new query)."""

    entry: Entry
    score: float


#: ``Hit(entry, score)`` from a pair, made as the named tuple makes it, in one call
#: instead of two (an answer makes 25).
_hit: Callable[[tuple[Entry, float]], Hit] = functools.partial(tuple.__new__, Hit)


class HubSearch:
    """Keeps a selector in step with the catalog generation; thread-safe."""

    def __init__(
        self,
        db: Database,
        *,
        backend: str = "hybrid",
        index_dir: Path | None = None,
        embedders: Callable[[], dict[str, Any]] | None = None,
        generation: Callable[[], int] | None = None,
    ) -> None:
        self._db = db
        self._current_generation = generation or db.generation
        self.backend = backend
        self._index_dir = index_dir
        self._make_embedders = embedders or self._default_embedders
        self._lock = threading.Lock()
        self._rank_lock = threading.Lock()
        self._generation = -1
        self._entries: tuple[Entry, ...] = ()
        self._cache: dict[tuple[int, int], Entry] = {}
        self._selector: Selector | None = None
        self._exact: dict[str, list[Entry]] = {}
        #: The current entries and their book skills' map, replaced together.
        self._skill_map: tuple[tuple[Entry, ...], dict[int, Entry]] = ((), {})
        #: The entry of each of the selector's skills by position, for those skills and entries.
        self._at: tuple[tuple[BookSkill, ...], tuple[Entry, ...], list[Entry | None]] = (
            (),
            (),
            [],
        )
        #: Each entry's encoded answer row, by ``id(entry)`` (the entry kept to check it).
        self._rows: dict[int, tuple[Entry, bytes]] = {}
        #: Answers by (generation, query, limit, exact): a new generation misses them all.
        self._answers: OrderedDict[tuple[int, str, int, bool], list[Hit]] = OrderedDict()
        #: The route's JSON bodies of those answers, by the same keys.
        self._bodies: OrderedDict[tuple[int, str, int, bool], bytes] = OrderedDict()
        self.rebuilds = 0
        #: The selector's embedding models, each able to embed concurrent queries at once.
        self._batchers: dict[str, BatchingEmbedder] = {}
        #: The recent mean CPU seconds of a ranking (None: none measured yet).
        self._rank_cost: float | None = None

    def _default_embedders(self) -> dict[str, Any]:
        from skillbook.config.file import SelectionConfig
        from skillbook.selection.options import build_embedders

        found, problems = build_embedders(SelectionConfig(), env={}, backend=self.backend)
        for d in problems:
            log.warning("%s", d.message)
        return found

    def entries(self) -> tuple[Entry, ...]:
        """Every searchable skill, refreshed from the database when the catalog changed."""
        generation = self._current_generation()
        if generation == self._generation:
            return self._entries
        with self._lock:
            if generation != self._generation:
                self._reload(generation)
            return self._entries

    def _reload(self, generation: int) -> None:
        with self._db.session() as session:
            entries = []
            for skill in catalog.live_skills(session):
                latest = catalog.latest_version(skill)
                if latest is None:
                    continue
                key = (skill.id, latest.id)
                old = self._cache.get(key)
                book_skill = (
                    old.book_skill
                    if old is not None
                    else _book_skill(skill.slug, skill.summary, latest.skill_md)
                )
                entries.append(
                    Entry(
                        skill_id=skill.id,
                        version_id=latest.id,
                        slug=skill.slug,
                        display_name=skill.display_name,
                        summary=skill.summary,
                        version=latest.version,
                        owner=skill.owner_handle,
                        created_at=skill.created_at,
                        updated_at=skill.updated_at,
                        downloads=skill.downloads,
                        book_skill=book_skill,
                    )
                )
        self._entries = tuple(entries)
        self._skill_map = (self._entries, {id(e.book_skill): e for e in entries})
        self._rows = {}
        self._cache = {(e.skill_id, e.version_id): e for e in entries}
        exact: dict[str, list[Entry]] = {}
        for e in entries:
            for name in dict.fromkeys((e.slug.casefold(), e.display_name.casefold())):
                exact.setdefault(name, []).append(e)
        self._exact = exact
        skills = [e.book_skill for e in entries]
        if self._selector is None and skills:
            from skillbook.distribution.hub.batching import BatchingEmbedder
            from skillbook.selection.selector import Selector, SelectorSettings

            embedders = self._make_embedders() if self.backend != "bm25" else {}
            self._batchers = {name: BatchingEmbedder(e) for name, e in embedders.items()}
            self._selector = Selector(
                skills,
                settings=SelectorSettings(backend=self.backend),
                embedders=dict(self._batchers),
                index_dir=self._index_dir,
            )
        elif self._selector is not None:
            with self._rank_lock:
                self._selector.update(skills)
        self._generation = generation
        self.rebuilds += 1

    def search(self, query: str, *, limit: int = 25, exact: bool = False) -> list[Hit]:
        """Skills for ``query``; ``*`` or blank lists every skill, newest first."""
        return self.search_at(query, limit=limit, exact=exact)[1]

    @staticmethod
    def answer_key(
        generation: int, query: str, limit: int, exact: bool
    ) -> tuple[int, str, int, bool]:
        return (generation, query.strip(), max(1, min(limit, 200)), exact)

    def search_at(
        self, query: str, *, limit: int = 25, exact: bool = False
    ) -> tuple[tuple[int, str, int, bool], list[Hit]]:
        """:meth:`search` and the key its answer is cached under (its generation first)."""
        entries, generation = self._entries_at()
        key = self.answer_key(generation, query, limit, exact)
        with self._lock:
            cached = self._answers.get(key)
            if cached is not None:
                self._answers.move_to_end(key)
                return key, cached
        hits = self._search(entries, key[1], key[2], exact)
        with self._lock:
            self._answers[key] = hits
            while len(self._answers) > ANSWER_CACHE:
                self._answers.popitem(last=False)
        return key, hits

    def _entries_at(self) -> tuple[tuple[Entry, ...], int]:
        with self._lock:
            known = self._entries, self._generation
        if self._current_generation() == known[1]:
            return known
        self.entries()
        with self._lock:
            # Read together: another thread may have reloaded since.
            return self._entries, self._generation

    def body(self, key: tuple[int, str, int, bool]) -> bytes | None:
        """The cached JSON body of an answer (no I/O: the event loop asks)."""
        return self._bodies.get(key)

    def keep_body(self, key: tuple[int, str, int, bool], body: bytes, *, wait: bool = True) -> None:
        """Keep an answer's body (``wait`` false: not if a reload holds the lock)."""
        if not self._lock.acquire(blocking=wait):
            return
        try:
            if key[0] != self._generation:
                return  # the catalog moved on while this answer was made
            self._bodies[key] = body
            while len(self._bodies) > ANSWER_CACHE:
                self._bodies.popitem(last=False)
        finally:
            self._lock.release()

    def quick(self, generation: int) -> bool:
        """Whether a new query in ``generation`` may be ranked in the event loop.

        Only when nothing is to be read first (the index is of that generation) and
        rankings are BM25 alone and cheap: an embedding model's query costs
        milliseconds, and a worker thread lets the loop answer others meanwhile.
        """
        cost = self._rank_cost
        selector = self._selector
        return (
            cost is not None
            and cost < INLINE_SECONDS
            and generation == self._generation
            and selector is not None
            and not selector.embedders
        )

    def search_quick(
        self, query: str, *, limit: int, exact: bool, generation: int
    ) -> tuple[tuple[int, str, int, bool], Sequence[tuple[Entry, float]]] | None:
        """:meth:`search_at`'s answer if it can answer at once, else None (ask :meth:`search_at`).

        For the event loop: it never waits for a lock (a reload holds one while it
        reads the database and rebuilds the index) and never reads the database. A
        new answer is (entry, score) pairs, the hits' values, and is not kept: the
        route keeps its body (making 25 ``Hit``s was more than their use). Their scores
        are not rounded yet (the route writes them rounded; a kept answer's are already).
        """
        if not self.quick(generation) or not self._lock.acquire(blocking=False):
            return None
        try:
            entries, known = self._entries, self._generation
            key = self.answer_key(known, query, limit, exact)
            cached = self._answers.get(key)
        finally:
            self._lock.release()
        if known != generation:
            return None
        if cached is not None:
            return key, cached
        pairs = self._pairs(entries, key[1], key[2], exact, wait=False)
        return None if pairs is None else (key, pairs)

    def row(self, entry: Entry, encode: Callable[[Entry], bytes]) -> bytes:
        """``encode(entry)``, made once per entry (an entry is one generation's)."""
        rows = self._rows
        known = rows.get(id(entry))
        if known is not None and known[0] is entry:
            return known[1]
        made = encode(entry)
        rows[id(entry)] = (entry, made)
        return made

    def rows(
        self, hits: Sequence[tuple[Entry, float]], encode: Callable[[Entry], bytes]
    ) -> list[bytes]:
        """:meth:`row` of each hit's entry (one call for an answer's rows)."""
        rows = self._rows
        out = []
        for entry, _ in hits:
            known = rows.get(id(entry))
            if known is None or known[0] is not entry:
                known = rows[id(entry)] = (entry, encode(entry))
            out.append(known[1])
        return out

    def _search(self, entries: tuple[Entry, ...], text: str, limit: int, exact: bool) -> list[Hit]:
        """The hits for ``text`` (scores rounded to 6 places, as the API shows them)."""
        return [_hit((e, round(score, 6))) for e, score in self._pairs(entries, text, limit, exact)]

    @overload
    def _pairs(
        self, entries: tuple[Entry, ...], text: str, limit: int, exact: bool
    ) -> list[tuple[Entry, float]]: ...
    @overload
    def _pairs(
        self, entries: tuple[Entry, ...], text: str, limit: int, exact: bool, *, wait: bool
    ) -> list[tuple[Entry, float]] | None: ...
    def _pairs(
        self, entries: tuple[Entry, ...], text: str, limit: int, exact: bool, *, wait: bool = True
    ) -> list[tuple[Entry, float]] | None:
        """The hits for ``text`` as (entry, score) pairs, scores not yet rounded; None when
        ``wait`` is false and another ranking runs."""
        if not text or text == "*":
            ordered = sorted(entries, key=lambda e: e.updated_at, reverse=True)
            return [(e, 1.0) for e in ordered[:limit]]
        same = self._exact.get(text.casefold(), [])
        if exact:
            return [(e, 1.0) for e in same[:limit]]
        selector = self._selector
        if wait and self._batchers and selector is not None:
            # The query's vectors first, outside the lock: searches waiting here
            # together are embedded in one model call each (hub/batching.py).
            model_text = selector.corrected(text)
            for batcher in self._batchers.values():
                batcher.prepare(model_text)
        # One ranking at a time: a reload updates the selector under the same lock, and
        # the work is CPU-bound anyway (the interpreter lock). ``rank`` rather than
        # ``select``: the candidates' parts were most of a small catalog's ranking.
        if not self._rank_lock.acquire(blocking=wait):
            return None
        try:
            if self._selector is None or not entries:
                return []
            started = time.thread_time()
            ranking = self._selector.rank(text, depth=limit)
            cost = time.thread_time() - started
            known = self._rank_cost
            self._rank_cost = cost if known is None else 0.8 * known + 0.2 * cost
        finally:
            self._rank_lock.release()
        at = self._positions(ranking.skills, entries)
        order = ranking.order
        where = list(order)
        scores: list[float] = ranking.fused[where].tolist()
        # Which of the ranked few to show: the words matched (a BM25 channel above
        # zero) or the fused score reaches the threshold (Python floats, float64).
        matched = [False] * len(where)
        for name in ("bm25", "bm25Body"):
            channel = ranking.channels.get(name)
            if channel is not None:
                matched = [
                    m or v > 0 for m, v in zip(matched, channel[where].tolist(), strict=True)
                ]
        threshold = ranking.threshold
        # An exact slug or name match ranks first, whatever the fused scores say.
        top = max(scores, default=1.0)
        hits = [(e, max(top, 1.0)) for e in same]
        seen = {e.slug for e in same}
        for i, score, words in zip(order, scores, matched, strict=True):
            if not words and not score >= threshold:
                continue
            entry = at[i]
            if entry is None or entry.slug in seen:
                continue
            hits.append((entry, score))
            if len(hits) >= limit:
                break
            seen.add(entry.slug)
        return hits[:limit]

    def _positions(
        self, skills: tuple[BookSkill, ...], entries: tuple[Entry, ...]
    ) -> list[Entry | None]:
        """The entry of each of the selector's skills by position, kept per generation
        (a lookup by ``id`` per ranked skill was a tenth of a new query's time)."""
        known = self._at
        if known[0] is skills and known[1] is entries:
            return known[2]
        by_skill = self._by_skill(entries)
        made = [by_skill.get(id(skill)) for skill in skills]
        self._at = (skills, entries, made)
        return made

    def _by_skill(self, entries: tuple[Entry, ...]) -> dict[int, Entry]:
        """The entry of each book skill; the current generation's is kept, not rebuilt."""
        known = self._skill_map
        if known[0] is entries:
            return known[1]
        return {id(e.book_skill): e for e in entries}


def _book_skill(slug: str, summary: str | None, skill_md: str) -> BookSkill:
    parsed = parse_skill_text(skill_md)
    base = Path("/registry") / slug
    return BookSkill(
        name=slug,
        description=parsed.description or summary or "",
        file_path=base / "SKILL.md",
        base_dir=base,
        source="registry",
        parsed=parsed,
    )
