"""Rate limits per client address and per token, shared through the database.

Batched counting across replicas (the default) is in test_counters.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from skillbook.distribution.hub.app import create_app
from skillbook.distribution.hub.db import Database
from skillbook.distribution.hub.http import Hub
from skillbook.distribution.hub.ratelimit import RateDecision, RateLimiter, _decision, _marks
from skillbook.distribution.hub.server_config import HubSettings, RateLimits

from .helpers import BASE, fresh_rate_window


def _client(hub_settings: HubSettings, limits: RateLimits) -> tuple[TestClient, Hub]:
    settings = HubSettings(
        database_url=hub_settings.database_url,
        blob_url=hub_settings.blob_url,
        search_backend="bm25",
        rate_limits=limits,
    )
    hub = Hub.open(settings)
    return TestClient(create_app(settings, hub=hub), base_url=BASE), hub


def test_headers_count_down_and_429_says_when_to_retry(hub_settings: HubSettings) -> None:
    client, hub = _client(hub_settings, RateLimits(read_per_ip=3))
    fresh_rate_window(5)
    with client:
        answers = [client.get("/api/v1/search", params={"q": "x"}) for _ in range(4)]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    assert [a.headers["RateLimit-Remaining"] for a in answers] == ["2", "1", "0", "0"]
    limited = answers[-1]
    assert limited.headers["RateLimit-Limit"] == limited.headers["X-RateLimit-Limit"] == "3"
    retry = int(limited.headers["Retry-After"])
    assert 1 <= retry <= 60 and limited.headers["RateLimit-Reset"] == str(retry)
    assert int(limited.headers["X-RateLimit-Reset"]) > 1_700_000_000
    assert limited.text == "Rate limit exceeded for this address"
    hub.db.close()


def test_a_token_has_its_own_budget_and_kinds_count_apart(
    hub_settings: HubSettings, token: str
) -> None:
    client, hub = _client(
        hub_settings, RateLimits(read_per_ip=1, read_per_token=2, download_per_ip=1)
    )
    auth = {"Authorization": f"Bearer {token}"}
    fresh_rate_window(5)
    with client:
        assert client.get("/api/v1/search", params={"q": "x"}).status_code == 200
        assert client.get("/api/v1/search", params={"q": "x"}).status_code == 429
        with_token = [
            client.get("/api/v1/search", params={"q": "x"}, headers=auth) for _ in range(3)
        ]
        assert [a.status_code for a in with_token] == [200, 200, 429]
        assert with_token[-1].text == "Rate limit exceeded for this token"
        # Downloads have their own counter (a 404 still counts, and still gets headers).
        missing = client.get("/api/v1/download", params={"slug": "nope"})
        assert missing.status_code == 404 and missing.headers["RateLimit-Limit"] == "1"
    hub.db.close()


def test_a_401_carries_the_rate_limit_headers_and_bad_tokens_count(
    hub_settings: HubSettings,
) -> None:
    client, hub = _client(hub_settings, RateLimits(write_per_ip=3))
    fresh_rate_window(5)
    with client:
        answers = [
            client.post("/api/v1/skills", json={}),
            client.post("/api/v1/skills", json={}, headers={"Authorization": "Bearer clh_bad"}),
            client.post("/api/v1/skills/-/upload-url", json={}, headers={"Authorization": "x"}),
            client.post("/api/v1/skills", json={}, headers={"Authorization": "Bearer clh_bad2"}),
        ]
    # Guessing tokens is limited like any anonymous write, and every answer says so.
    assert [a.status_code for a in answers] == [401, 401, 401, 429]
    assert [a.headers.get("RateLimit-Remaining") for a in answers] == ["2", "1", "0", "0"]
    assert all(a.headers["X-RateLimit-Limit"] == "3" for a in answers)
    assert answers[0].text == "Unauthorized"
    hub.db.close()


def test_two_limiters_on_one_database_share_the_count(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'rl.sqlite3'}"
    one, two = Database.open(url), Database.open(url)
    limits = RateLimits(write_per_ip=3, window_seconds=60)
    a, b = RateLimiter(one, limits), RateLimiter(two, limits)
    now = 1_800_000_000.0
    seen = [x.hit("write", "10.0.0.1", token=False, now=now) for x in (a, b, a, b)]
    assert [d.allowed if d else None for d in seen] == [True, True, True, False]
    # A new window starts from zero and sweeps the old one.
    fresh = a.hit("write", "10.0.0.1", token=False, now=now + 120)
    assert fresh is not None and fresh.allowed and fresh.remaining == 2
    assert a.hit("write", "x", token=True, now=now) is not None
    assert RateLimiter(one, RateLimits(write_per_ip=0)).hit("write", "y", token=False) is None
    one.close()
    two.close()


def test_the_raw_header_lines_say_what_the_headers_say() -> None:
    """The route appends these lines as they are (no per-name lookup): same bytes."""
    for allowed, remaining in ((True, 4), (False, 0)):
        decision = RateDecision(allowed, 10, remaining, 17, 1_800_000_017)
        expected = [(k.lower().encode(), v.encode()) for k, v in decision.headers().items()]
        assert list(decision.raw_headers()) == expected


def test_equal_requests_share_one_decision_equal_to_a_fresh_one(tmp_path: Path) -> None:
    """A decision and its header lines are made once per limit, count and reset, and
    equal what ``_decision`` makes for the request: at each count up to past the limit,
    at the edges of a second, at the end of the window and in the next one."""
    db = Database.open(f"sqlite:///{tmp_path / 'r.db'}")
    limiter = RateLimiter(db, RateLimits(window_seconds=60, write_per_ip=3), batched=True)
    start = 1_800_000_000.0
    for moment in (start, start + 0.5, start + 0.9995, start + 1, start + 59.9, start + 60):
        runs = [
            [limiter.hit("write", f"{moment}-{who}", token=False, now=moment) for _ in range(6)]
            for who in ("a", "b")
        ]
        for count, (first, second) in enumerate(zip(*runs, strict=True), start=1):
            assert first == _decision(count, 3, int(moment // 60), 60, moment)
            assert second is first
            assert first is not None and first.raw_headers() is first.raw_headers()
    db.close()


def test_the_flush_writes_each_driver_parameter_style() -> None:
    # "numeric" drivers number their placeholders (":1"): a "?" there was no valid SQL.
    assert _marks("qmark", 2) == [("?", "?", "?")] * 2
    assert _marks("pyformat", 1) == _marks("format", 1) == [("%s", "%s", "%s")]
    assert _marks("numeric", 2) == [(":1", ":2", ":3"), (":4", ":5", ":6")]
    with pytest.raises(ValueError, match="parameter style 'named' is not supported"):
        _marks("named", 1)
