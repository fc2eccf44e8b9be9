"""Immutable archives, caches per catalog generation, and counts flushed in batches.

Archives carry a strong ETag and are answered 304 to a client that has them; a URL
that names the version is ``immutable``. Cached answers (resolved downloads, search
bodies) follow every publish, hide and delete: at once in the process that made it,
within the poll delay on another replica. Download and rate-limit counts reach the
shared database in batches, and replicas' counts add up once flushed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import event, select
from sqlalchemy.exc import OperationalError
from starlette.testclient import TestClient

from skillbook.distribution.hub import catalog, ratelimit
from skillbook.distribution.hub.app import create_app
from skillbook.distribution.hub.db import Database
from skillbook.distribution.hub.http import Hub
from skillbook.distribution.hub.models import RateCounter, Skill
from skillbook.distribution.hub.ratelimit import RateLimiter
from skillbook.distribution.hub.routes_read import IMMUTABLE, REVALIDATE
from skillbook.distribution.hub.server import Listen, uvicorn_options
from skillbook.distribution.hub.server_config import HubSettings, RateLimits

from .helpers import BASE, eventually, make_skill, publish
from .processes import Postgres, unavailable

DOWNLOAD = "/api/v1/download"


def _downloads(db: Database, slug: str) -> int:
    with db.session() as session:
        return int(session.execute(select(Skill.downloads).where(Skill.slug == slug)).scalar_one())


@pytest.fixture
def published(client: TestClient, token: str, tmp_path: Path) -> str:
    folder = make_skill(tmp_path / "weather", "weather", "Forecasts for any city.")
    publish(client, token, folder)
    return "weather"


def test_a_named_version_is_immutable_with_a_strong_etag_and_304(
    client: TestClient, hub: Hub, published: str
) -> None:
    first = client.get(DOWNLOAD, params={"slug": published, "version": "1.0.0"})
    assert first.status_code == 200
    etag = first.headers["ETag"]
    assert etag.startswith('"') and not etag.startswith("W/")
    assert first.headers["Cache-Control"] == IMMUTABLE
    # A second request is answered from memory: same bytes, same headers.
    again = client.get(DOWNLOAD, params={"slug": published, "version": "1.0.0"})
    assert again.content == first.content and again.headers["ETag"] == etag
    assert again.headers["Content-Disposition"] == 'attachment; filename="weather-1.0.0.zip"'
    for header in (etag, f"W/{etag}", f'"other", {etag}', "*"):
        cached = client.get(
            DOWNLOAD,
            params={"slug": published, "version": "1.0.0"},
            headers={"If-None-Match": header},
        )
        assert cached.status_code == 304 and cached.content == b"", header
        assert cached.headers["ETag"] == etag and cached.headers["Cache-Control"] == IMMUTABLE
    stale = client.get(
        DOWNLOAD, params={"slug": published, "version": "1.0.0"}, headers={"If-None-Match": '"x"'}
    )
    assert stale.status_code == 200 and stale.content == first.content
    # "Latest" can move: same ETag, but caches must ask again.
    latest = client.get(DOWNLOAD, params={"slug": published})
    assert latest.headers["ETag"] == etag and latest.headers["Cache-Control"] == REVALIDATE
    hub.flush()
    # Bytes sent are downloads; a 304 sent none.
    assert _downloads(hub.db, published) == 4


def test_a_file_of_a_named_version_is_immutable_too(client: TestClient, published: str) -> None:
    params = {"path": "SKILL.md", "version": "1.0.0"}
    raw = client.get(f"/api/v1/skills/{published}/file", params=params)
    assert raw.status_code == 200 and raw.headers["Cache-Control"] == IMMUTABLE
    etag = raw.headers["ETag"]
    cached = client.get(
        f"/api/v1/skills/{published}/file", params=params, headers={"If-None-Match": etag}
    )
    assert cached.status_code == 304 and cached.content == b""


def test_cached_answers_follow_hide_delete_and_publish_at_once(
    client: TestClient, hub: Hub, token: str, tmp_path: Path, published: str
) -> None:
    def slugs() -> list[str]:
        return [
            r["slug"]
            for r in client.get("/api/v1/search", params={"q": "forecasts"}).json()["results"]
        ]

    def download(version: str) -> int:
        return client.get(DOWNLOAD, params={"slug": published, "version": version}).status_code

    assert slugs() == slugs() == ["weather"]  # the second answer is the cached body
    assert download("1.0.0") == download("1.0.0") == 200
    folder = make_skill(tmp_path / "weather", "weather", "Forecasts for any city, v2.")
    publish(client, token, folder, version="2.0.0")
    rows = client.get("/api/v1/search", params={"q": "forecasts"}).json()["results"]
    assert [r["version"] for r in rows] == ["2.0.0"]
    with hub.db.session() as session:
        catalog.hold_version(session, published, "1.0.0", actor="root", reason="review")
    assert download("1.0.0") == 423
    with hub.db.session() as session:
        catalog.delete_skill(session, published, None, actor="root", reason="gone")
    assert slugs() == []
    assert download("2.0.0") == 404


def test_another_replica_follows_a_change_within_its_poll_delay(
    client: TestClient, hub: Hub, published: str
) -> None:
    settings = dataclasses.replace(hub.settings, catalog_poll_seconds=0.05)
    other = Hub.open(settings, migrate=False)
    try:
        with TestClient(create_app(settings, hub=other), base_url=BASE) as replica:
            params = {"slug": published, "version": "1.0.0"}
            assert replica.get(DOWNLOAD, params=params).status_code == 200
            assert replica.get("/api/v1/search", params={"q": "forecasts"}).json()["results"]
            # The change is made by another process's connection (this hub's own).
            with hub.db.session() as session:
                catalog.delete_skill(session, published, None, actor="root", reason="gone")
            eventually(
                lambda: replica.get(DOWNLOAD, params=params).status_code == 404,
                "the replica stops serving a deleted skill",
            )
            found = replica.get("/api/v1/search", params={"q": "forecasts"}).json()["results"]
            assert found == []
    finally:
        other.close()


@pytest.fixture
def replicas(hub_settings: HubSettings) -> Iterator[tuple[Hub, Hub]]:
    settings = dataclasses.replace(hub_settings, flush_seconds=0.05)
    one, two = Hub.open(settings), Hub.open(settings, migrate=False)
    yield one, two
    one.close()
    two.close()


def test_two_replicas_download_counts_add_up_after_the_flush_delay(
    replicas: tuple[Hub, Hub], token: str, tmp_path: Path
) -> None:
    one = replicas[0]
    clients = [TestClient(create_app(h.settings, hub=h), base_url=BASE) for h in replicas]
    with clients[0] as a, clients[1] as b:
        folder = make_skill(tmp_path / "weather", "weather", "Forecasts for any city.")
        publish(a, token, folder)
        for i in range(10):
            answer = (a, b)[i % 2].get(DOWNLOAD, params={"slug": "weather", "version": "1.0.0"})
            assert answer.status_code == 200
        eventually(lambda: _downloads(one.db, "weather") == 10, "both replicas' counts flushed")
        stats = b.get("/api/v1/skills/weather").json()["skill"]["stats"]
        assert stats["downloads"] == 10


def test_shutdown_flushes_what_is_pending(
    hub_settings: HubSettings, token: str, tmp_path: Path
) -> None:
    settings = dataclasses.replace(hub_settings, flush_seconds=3600)
    hub = Hub.open(settings)
    with TestClient(create_app(settings, hub=hub), base_url=BASE) as client:
        publish(client, token, make_skill(tmp_path / "weather", "weather", "Forecasts."))
        for _ in range(3):
            client.get(DOWNLOAD, params={"slug": "weather", "version": "1.0.0"})
        assert hub.downloads.pending() == 3
        assert _downloads(hub.db, "weather") == 0
    # Leaving the client ran the app's shutdown.
    assert _downloads(hub.db, "weather") == 3
    hub.close()


def test_unbatched_downloads_are_counted_in_their_request(
    hub_settings: HubSettings, token: str, tmp_path: Path
) -> None:
    settings = dataclasses.replace(hub_settings, flush_seconds=0)
    hub = Hub.open(settings)
    with TestClient(create_app(settings, hub=hub), base_url=BASE) as client:
        publish(client, token, make_skill(tmp_path / "weather", "weather", "Forecasts."))
        client.get(DOWNLOAD, params={"slug": "weather", "version": "1.0.0"})
        assert _downloads(hub.db, "weather") == 1
    hub.close()


def _limiters_share_counts_once_flushed(url: str) -> None:
    one, two = Database.open(url), Database.open(url, migrate_schema=False)
    limits = RateLimits(read_per_ip=10, window_seconds=60)
    a, b = RateLimiter(one, limits, batched=True), RateLimiter(two, limits, batched=True)
    now = 1_800_000_000.0

    def hit(limiter: RateLimiter) -> int:
        decision = limiter.hit("read", "10.0.0.1", token=False, now=now)
        assert decision is not None
        return decision.remaining if decision.allowed else -1

    assert [hit(a) for _ in range(6)] == [9, 8, 7, 6, 5, 4]
    assert a.flush(now) == 1
    # Until it flushes, b counts only its own requests (the stated delay) ...
    assert [hit(b) for _ in range(4)] == [9, 8, 7, 6]
    b.flush(now)
    # ... then it knows all ten: the eleventh request is refused.
    assert hit(b) == -1
    # a learns the total at its first flush after a request of its own: it allows one
    # more within the delay, then refuses too.
    assert hit(a) == 3
    a.flush(now)
    assert hit(a) == -1
    # A new window starts from zero, and the flush sweeps windows nobody reads.
    assert a.hit("read", "10.0.0.1", token=False, now=now + 120) is not None
    a.flush(now + 120)
    with one.session() as session:
        assert set(session.execute(select(RateCounter.window)).scalars()) == {
            int((now + 120) // 60)
        }
    one.close()
    two.close()


def _many_keys_are_flushed_in_chunks(url: str, *, statements: tuple[int, int]) -> None:
    """Counts of 700 keys flushed with ``statements`` (inserts, selects) and shared."""
    one, two = Database.open(url), Database.open(url)
    limits = RateLimits(read_per_ip=3, window_seconds=60)
    a, b = RateLimiter(one, limits, batched=True), RateLimiter(two, limits, batched=True)
    now = 1_800_000_000.0
    subjects = [f"10.1.{i // 256}.{i % 256}" for i in range(700)]
    sent: list[str] = []
    event.listen(one.engine, "before_cursor_execute", lambda *args: sent.append(args[2]))
    for subject in subjects * 2:
        a.hit("read", subject, token=False, now=now)
    assert a.flush(now) == 700
    inserts = sum(1 for sql in sent if sql.startswith("INSERT"))
    assert (inserts, sum(1 for sql in sent if sql.startswith("SELECT"))) == statements
    for subject in subjects:
        a.hit("read", subject, token=False, now=now)
        b.hit("read", subject, token=False, now=now)
    a.flush(now)
    b.flush(now)
    # Each key counted 2 + 1 by a and 1 by b: both know 4 > 3 after their flush.
    for limiter in (a, b):
        refused = [limiter.hit("read", s, token=False, now=now) for s in subjects]
        assert all(d is not None and not d.allowed for d in refused)
    one.close()
    two.close()


def test_batched_rate_limits_count_together_once_flushed(tmp_path: Path) -> None:
    _limiters_share_counts_once_flushed(f"sqlite:///{tmp_path / 'rl.sqlite3'}")
    # SQLite: every key in one statement that adds the counts and one that reads the
    # totals back as a single row (a statement returning a row per key handed the GIL
    # to the event loop and back once per key).
    _many_keys_are_flushed_in_chunks(f"sqlite:///{tmp_path / 'many.sqlite3'}", statements=(1, 1))


def test_sqlite_without_json_functions_flushes_in_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A build of SQLite without its JSON functions fails the one-statement flush at
    # once; the limiter then adds each chunk of 300 keys with an upsert that returns
    # the totals, as on PostgreSQL, and counts the same.
    monkeypatch.setattr(ratelimit, "_SQLITE_ADD", "SELECT json_function_this_build_lacks(?)")
    _limiters_share_counts_once_flushed(f"sqlite:///{tmp_path / 'rl.sqlite3'}")
    _many_keys_are_flushed_in_chunks(f"sqlite:///{tmp_path / 'many.sqlite3'}", statements=(3, 1))


def test_a_failing_flush_keeps_its_counts_for_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Any other database error is not taken for missing JSON functions: it reaches
    # the flusher, and the counts stay pending for the next flush.
    db = Database.open(f"sqlite:///{tmp_path / 'rl.sqlite3'}")
    limiter = RateLimiter(db, RateLimits(read_per_ip=10, window_seconds=60), batched=True)
    now = 1_800_000_000.0
    for _ in range(3):
        limiter.hit("read", "10.0.0.9", token=False, now=now)
    with monkeypatch.context() as patch:
        patch.setattr(ratelimit, "_SQLITE_ADD", "INSERT INTO no_such_table VALUES (?)")
        with pytest.raises(OperationalError, match="no_such_table"):
            limiter.flush(now)
    assert limiter.flush(now) == 1
    with db.session() as session:
        assert session.execute(select(RateCounter.count)).scalar_one() == 3
    db.close()


@pytest.mark.subprocess
def test_batched_rate_limits_count_together_on_postgresql() -> None:
    # The flush is one multi-row upsert per chunk; PostgreSQL spells it the same way.
    try:
        pg = Postgres()
    except FileNotFoundError as exc:
        unavailable(str(exc))
    try:
        _limiters_share_counts_once_flushed(pg.url)
        _many_keys_are_flushed_in_chunks(pg.url, statements=(3, 0))
    finally:
        pg.stop()


def test_the_access_log_is_opt_in() -> None:
    # A line per request cost about an eighth of a cached download (py-spy, issue 22).
    assert uvicorn_options(Listen())["access_log"] is False
    assert uvicorn_options(Listen(access_log=True))["access_log"] is True
