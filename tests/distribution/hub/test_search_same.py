"""The registry's search answers as it did when it ranked through ``Selector.select``.

Issue 22 made a new query cheaper (``Selector.rank``: no candidate parts, the
entries' map kept per generation, the JSON rows encoded once per generation). These
tests hold the hits and the bytes of the answer to what the ``select``-based search
gave, for a set of queries, one at a time and from eight threads at once.
"""

from __future__ import annotations

import dataclasses
import json
import random
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from skillbook.distribution.hub import shapes
from skillbook.distribution.hub.app import create_app
from skillbook.distribution.hub.blobs import open_blob_store
from skillbook.distribution.hub.db import Database
from skillbook.distribution.hub.publish import publish_version
from skillbook.distribution.hub.search import Entry, Hit, HubSearch
from skillbook.distribution.hub.server_config import HubSettings
from skillbook.distribution.hub.tokens import authenticate, create_token
from skillbook.selection.selector import Selector

from .conftest import GENEROUS
from .helpers import BASE

WORDS = [
    "pdf",
    "merge",
    "split",
    "weather",
    "forecast",
    "git",
    "branch",
    "deploy",
    "docker",
    "image",
    "resize",
    "translate",
    "invoice",
    "email",
    "calendar",
    "slack",
    "notes",
    "search",
    "database",
    "backup",
    "csv",
    "chart",
    "markdown",
    "lint",
]


def _skill_md(slug: str, words: list[str], body: list[str], extra: str = "") -> bytes:
    return (
        f"---\nname: {slug}\ndescription: {' '.join(words)} helper.\n{extra}---\n"
        f"# {slug}\n\n## {words[0]} {words[1]}\n\n{' '.join(body)}\n"
    ).encode()


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Database, HubSettings]]:
    root = tmp_path_factory.mktemp("same")
    settings = HubSettings(
        database_url=f"sqlite:///{root / 'metadata.sqlite3'}",
        blob_url=str(root / "blobs"),
        search_backend="bm25",
        rate_limits=GENEROUS,
    )
    db = Database.open(settings.database_url)
    store = open_blob_store(settings.blob_url)
    with db.session() as session:
        token = create_token(session, "alice")
    with db.session() as session:
        caller = authenticate(session, token)
    assert caller is not None
    rng = random.Random(22)
    for i in range(40):
        words = rng.sample(WORDS, 4)
        extra = ""
        if i == 3:  # a boost: the phrase ranks it whatever BM25 says
            extra = "metadata:\n  openclaw:\n    triggers:\n      any: [split the bill]\n"
        if i == 4:  # a veto: never ranked for a request naming the weather
            extra = "metadata:\n  openclaw:\n    triggers:\n      none: [weather]\n"
        md = _skill_md(f"{words[0]}-{words[1]}-{i}", words, rng.choices(WORDS, k=60), extra)
        publish_version(
            db,
            store,
            settings,
            caller,
            {"slug": f"{words[0]}-{words[1]}-{i}", "version": "1.0.0"},
            direct={"SKILL.md": md},
        )
    yield db, settings
    db.close()


def _queries(db: Database) -> list[tuple[str, int]]:
    rng = random.Random(7)
    search = HubSearch(db, backend="bm25")
    names = [e.slug for e in search.entries()][:5]
    texts = [
        *(" ".join(rng.sample(WORDS, 2)) for _ in range(40)),
        *WORDS[:8],
        *names,  # exact slugs rank first
        "split the bill please",
        "weather forecast today",
        "the and of",  # stop words only
        "qqqzzz xyzzy",
        "prévisions météo",
        "PDF",
    ]
    return [(t, (25, 1, 5, 200)[n % 4]) for n, t in enumerate(texts)]


def _reference(search: HubSearch, text: str, limit: int) -> list[Hit]:
    """The search as it ranked before issue 22: ``select`` and its candidates' parts."""
    entries = search.entries()
    key = search.answer_key(0, text, limit, False)
    text, limit = key[1], key[2]
    same = [e for e in entries if text.casefold() in (e.slug.casefold(), e.display_name.casefold())]
    selector = search._selector
    assert selector is not None
    selection = Selector.select(selector, text, top_k=limit, depth=limit)
    by_skill: dict[int, Entry] = {id(e.book_skill): e for e in entries}
    top = max((c.score for c in selection.ranked), default=1.0)
    hits = [Hit(e, round(max(top, 1.0), 6)) for e in same]
    seen = {h.entry.slug for h in hits}
    for c in selection.ranked:
        entry = by_skill.get(id(c.skill))
        if entry is None or entry.slug in seen:
            continue
        lexical = c.parts.get("bm25", 0.0) > 0 or c.parts.get("bm25Body", 0.0) > 0
        if lexical or c.score >= selection.threshold:
            hits.append(Hit(entry, round(c.score, 6)))
            seen.add(entry.slug)
    return hits[:limit]


def _plain(hits: list[Hit]) -> list[tuple[str, float]]:
    return [(h.entry.slug, h.score) for h in hits]


@pytest.mark.parametrize("backend", ["bm25", "hybrid"])
def test_hits_are_those_select_gave_one_at_a_time_and_eight_at_once(
    catalog: tuple[Database, HubSettings], backend: str
) -> None:
    db, _ = catalog
    queries = _queries(db)
    reference = HubSearch(db, backend=backend)
    expected = {q: _plain(_reference(reference, *q)) for q in queries}
    assert any(len(v) > 3 for v in expected.values()) and any(not v for v in expected.values())
    one = HubSearch(db, backend=backend)
    assert {q: _plain(one.search(q[0], limit=q[1])) for q in queries} == expected
    # Eight threads on a search that has answered nothing yet: every answer is new.
    many = HubSearch(db, backend=backend)
    many.entries()
    got: dict[tuple[str, int], list[tuple[str, float]]] = {}
    failed: list[BaseException] = []

    def worker(mine: list[tuple[str, int]]) -> None:
        try:
            for q in mine:
                got[q] = _plain(many.search(q[0], limit=q[1]))
        except BaseException as exc:  # reported below, not lost in the thread
            failed.append(exc)

    threads = [threading.Thread(target=worker, args=(queries[i::8],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failed == []
    if backend == "bm25":
        assert got == expected
    else:
        # Queries that met were embedded in one model call (hub/batching.py): a vector
        # of a batch may differ from its lone value in the last bits of a float32.
        assert got.keys() == expected.keys()
        selector = many._selector
        assert selector is not None
        for q, hits in got.items():
            _close(hits, expected[q], selector.rank(q[0], depth=1).threshold)


def _close(
    got: list[tuple[str, float]], expected: list[tuple[str, float]], threshold: float
) -> None:
    """The same skills with the same scores within float32 rounding; a skill on one
    side only is at a cut (the other side's last score or the threshold)."""
    mine, theirs = dict(got), dict(expected)
    for slug in mine.keys() & theirs.keys():
        assert abs(mine[slug] - theirs[slug]) <= 1e-5, slug
    for one, other in ((mine, theirs), (theirs, mine)):
        cut = min(other.values(), default=0.0)
        for slug in one.keys() - other.keys():
            assert min(abs(one[slug] - cut), abs(one[slug] - threshold)) <= 1e-5, slug


def test_search_ranks_without_building_candidates(
    catalog: tuple[Database, HubSettings], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, _ = catalog

    def refused(*args: object, **kwargs: object) -> object:
        raise AssertionError("the registry's search built a Selection")

    monkeypatch.setattr(Selector, "select", refused)
    hits = HubSearch(db, backend="bm25").search("pdf merge")
    assert hits and all(h.score > 0 for h in hits)


def test_the_answer_bytes_are_those_json_gave(catalog: tuple[Database, HubSettings]) -> None:
    db, settings = catalog
    from skillbook.distribution.hub.http import Hub

    hub = Hub.open(settings)
    try:
        with TestClient(create_app(settings, hub=hub), base_url=BASE) as client:
            for text, limit in _queries(db):
                got = client.get("/api/v1/search", params={"q": text, "limit": str(limit)})
                hits = hub.search.search(text, limit=limit)
                rows = [shapes.search_row(h.entry, h.score) for h in hits]
                expected = json.dumps(
                    {"results": rows}, ensure_ascii=False, allow_nan=False, separators=(",", ":")
                ).encode()
                assert got.status_code == 200 and got.content == expected, text
                assert got.headers["content-type"] == "application/json"
                assert got.headers["content-length"] == str(len(expected))
    finally:
        hub.close()


def test_a_cheap_new_query_is_ranked_in_the_event_loop(
    catalog: tuple[Database, HubSettings], monkeypatch: pytest.MonkeyPatch
) -> None:
    """BM25 alone and cheap: no worker thread; costly, or not measured yet: one."""
    from skillbook.distribution.hub import http
    from skillbook.distribution.hub.http import Hub

    # A generation read stays fresh all test long: a late poll would send a query to
    # a thread (to read the database first) and say nothing about the ranking's place.
    settings = dataclasses.replace(catalog[1], catalog_poll_seconds=3600)

    hops: list[str] = []
    original = http.run_in_threadpool  # type: ignore[attr-defined]

    async def counting(func: Any, *args: Any) -> Any:
        hops.append(getattr(func, "__name__", "?"))
        return await original(func, *args)

    monkeypatch.setattr(http, "run_in_threadpool", counting)
    hub = Hub.open(settings)
    try:
        with TestClient(create_app(settings, hub=hub), base_url=BASE) as client:

            def ask(text: str) -> list[str]:
                hops.clear()
                answer = client.get("/api/v1/search", params={"q": text})
                assert answer.status_code == 200
                assert answer.json() == json.loads(
                    json.dumps(
                        {
                            "results": [
                                shapes.search_row(h.entry, h.score) for h in hub.search.search(text)
                            ]
                        }
                    )
                )
                return list(hops)

            assert ask("pdf merge") == ["search"]  # the first: nothing measured yet
            hub.search._rank_cost = 0.0  # as a BM25 ranking of a few skills measures
            assert ask("merge split") == []
            hub.search._rank_cost = 1.0  # as an embedding model's query would
            assert ask("docker image") == ["search"]
            assert not hub.search.quick(hub.search._generation + 1)  # a reload first
            # The loop never waits: a reload (or another ranking) holding a lock sends the
            # query to a thread instead.
            hub.search._rank_cost = 0.0
            now = hub.search._generation
            for lock in (hub.search._lock, hub.search._rank_lock):
                with lock:
                    assert (
                        hub.search.search_quick("git", limit=5, exact=False, generation=now) is None
                    )
            found = hub.search.search_quick("git", limit=5, exact=False, generation=now)
            assert found is not None
            # The pairs' scores as ranked; the hits' (and the answer's) rounded.
            rounded = [(e, round(score, 6)) for e, score in found[1]]
            assert rounded == hub.search.search("git", limit=5)
    finally:
        hub.close()


# ------------------------------------------------------------ generated queries
# Issue 22's fourth pass: a new BM25 query scores each word's kept scores, ranks
# without the parts it does not need, makes no ``Hit`` on the fast route and writes
# its scores in fewer steps. Generated queries hold all of it to the ``select``-based
# answer and to the bytes the JSON encoder gives.


def _typo(word: str, at: int) -> str:
    at %= max(1, len(word))
    return word[:at] + word[at + 1 :] if len(word) > 3 else word + "q"


_texts = st.one_of(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join),
    st.lists(
        st.builds(_typo, st.sampled_from(WORDS), st.integers(0, 20)), min_size=1, max_size=3
    ).map(" ".join),
    st.builds(  # the benchmark's new queries: two words and a number no skill has
        lambda a, b, n: f"{a} {b} {n}",
        st.sampled_from(WORDS),
        st.sampled_from(WORDS),
        st.integers(0, 10**9),
    ),
    st.sampled_from(
        ["*", "", "   ", " * ", "the and of", "split the bill", "weather", "prévisions météo"]
    ),
    st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=24),
)


def _expected(search: HubSearch, text: str, limit: int, exact: bool) -> list[tuple[str, float]]:
    key = search.answer_key(0, text, limit, exact)
    text, limit = key[1], key[2]
    entries = search.entries()
    if not text or text == "*":
        newest = sorted(entries, key=lambda e: e.updated_at, reverse=True)
        return [(e.slug, 1.0) for e in newest[:limit]]
    if exact:
        same = [
            e for e in entries if text.casefold() in {e.slug.casefold(), e.display_name.casefold()}
        ]
        return [(e.slug, 1.0) for e in same[:limit]]
    return _plain(_reference(search, text, limit))


@pytest.fixture(scope="module")
def served(
    catalog: tuple[Database, HubSettings],
) -> Iterator[tuple[Any, TestClient, HubSearch]]:
    from skillbook.distribution.hub.http import Hub

    # The generation stays fresh all the module long: new queries take the fast route.
    settings = dataclasses.replace(catalog[1], catalog_poll_seconds=3600)
    hub = Hub.open(settings)
    try:
        with TestClient(create_app(settings, hub=hub), base_url=BASE) as client:
            assert client.get("/api/v1/search", params={"q": "warm"}).status_code == 200
            yield hub, client, HubSearch(catalog[0], backend="bm25")
    finally:
        hub.close()


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_texts, limit=st.sampled_from([1, 5, 25, 200]), exact=st.booleans())
def test_generated_queries_get_the_hits_and_bytes_they_got(
    served: tuple[Any, TestClient, HubSearch], text: str, limit: int, exact: bool
) -> None:
    hub, client, reference = served
    # Through the route first: a new query, ranked in the event loop; then its kept body.
    hub.search._rank_cost = 0.0
    params = {"q": text, "limit": str(limit), **({"mode": "exact"} if exact else {})}
    answers = [client.get("/api/v1/search", params=params) for _ in range(2)]
    hits = hub.search.search(text, limit=limit, exact=exact)
    assert _plain(hits) == _expected(reference, text, limit, exact)
    rows = [shapes.search_row(h.entry, h.score) for h in hits]
    body = json.dumps(
        {"results": rows}, ensure_ascii=False, allow_nan=False, separators=(",", ":")
    ).encode()
    for got in answers:
        assert got.status_code == 200 and got.content == body, text


def test_a_new_query_on_the_fast_route_makes_no_hit_and_no_query_params(
    served: tuple[Any, TestClient, HubSearch], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the fourth pass removed from a new query's path stays removed."""
    from starlette import datastructures

    from skillbook.distribution.hub import search as search_module

    hub, client, _ = served
    expected = [(h.entry.slug, h.score) for h in hub.search.search("docker backup 77", limit=5)]

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("built on the fast route")

    monkeypatch.setattr(datastructures.QueryParams, "__init__", refused)
    monkeypatch.setattr(search_module, "Hit", refused)
    hub.search._rank_cost = 0.0
    got = client.get("/api/v1/search", params={"q": "docker backup 78", "limit": "5"})
    assert got.status_code == 200
    assert [(r["slug"], r["score"]) for r in got.json()["results"]] == expected


@settings(max_examples=2000, deadline=None)
@given(
    score=st.one_of(
        st.floats(allow_nan=False, allow_infinity=False),
        st.floats(-2.0, 2.0),
        st.floats(-2.0, 2.0, width=32),
        st.floats(-1e-3, 1e-3),
        st.integers(-(10**8), 10**8).map(lambda m: m / 1e6),  # already rounded
        st.integers(-(10**9), 10**9).map(lambda m: (m + 0.5) / 1e6),  # near a tie
    )
)
def test_a_score_is_written_as_the_json_encoder_writes_it_rounded(score: float) -> None:
    from skillbook.distribution.hub.routes_read import _score_json

    assert _score_json(score) == json.dumps(round(score, 6)).encode()


def test_a_search_answered_ahead_of_the_stack_is_the_stacks_answer(
    catalog: tuple[Database, HubSettings], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Headers, counts, refusals and errors as the route gives them through Starlette's stack."""
    from starlette.applications import Starlette

    from skillbook.distribution.hub import app as app_module
    from skillbook.distribution.hub.http import Hub, answer_from_memory
    from skillbook.distribution.hub.server_config import RateLimits

    # No flush meanwhile: each side counts alone, from its own address.
    settings = dataclasses.replace(
        catalog[1],
        catalog_poll_seconds=3600,
        flush_seconds=3600,
        rate_limits=RateLimits(read_per_ip=9),
    )
    moments = {"ratelimit-reset", "x-ratelimit-reset", "retry-after"}  # the clock's
    answered: list[int] = []
    original = answer_from_memory

    def counting(*args: Any) -> Any:
        found = original(*args)
        answered.append(found is not None)
        return found

    monkeypatch.setattr(app_module, "answer_from_memory", counting)
    requests = [
        {"q": "pdf merge"},  # a thread: nothing ranked yet
        {"q": "pdf merge"},  # the kept body
        {"q": "docker backup 5", "limit": "3"},  # a new query, ranked at once
        {"q": "*", "limit": "2"},
        {"q": "", "mode": "exact"},
        {"q": "weather", "limit": "x"},  # 400, from the stack
        {"q": "split", "mode": "exact"},
        {"q": "pdf merge"},
        {"q": "lint 9"},
        {"q": "pdf merge"},  # the tenth: refused
        {"q": "git"},  # refused too
    ]
    seen: dict[str, list[tuple[int, bytes, list[tuple[str, str]]]]] = {}
    for n, side in enumerate(("ahead", "stack")):
        hub = Hub.open(settings)
        try:
            app = create_app(settings, hub=hub)

            async def stack(scope: Any, receive: Any, send: Any, app: Any = app) -> None:
                await Starlette.__call__(app, scope, receive, send)

            with TestClient(
                app if side == "ahead" else stack, base_url=BASE, client=(f"10.9.9.{n}", 4000)
            ) as client:
                got = []
                for i, params in enumerate(requests):
                    if i == 1:
                        hub.search._rank_cost = 0.0  # as a BM25 ranking measures
                    answer = client.get("/api/v1/search", params=params)
                    headers = [
                        (k, "-" if k in moments else v) for k, v in answer.headers.multi_items()
                    ]
                    got.append((answer.status_code, answer.content, headers))
                seen[side] = got
        finally:
            hub.close()
    assert seen["ahead"] == seen["stack"]
    statuses = [status for status, _, _ in seen["ahead"]]
    assert statuses[5] == 400 and statuses[9:] == [429, 429] and statuses.count(200) == 8
    # Answered ahead: the kept body, new queries, lists, exact names, the refusal.
    assert answered.count(True) >= 6
