"""The registry's HTTP behaviour (clawhub-api.md §7): 429 with ``Retry-After`` and the
rate-limit headers honoured with a visible message, 5xx retried, slow answers timed
out, 404s, the token only for the registry itself."""

from __future__ import annotations

import email.utils
import io
import re

import httpx
import pytest

from distribution.registry.clawhub_server import ClawHub, Failure
from distribution.registry.conftest import DEMO_V1, FAST, Said
from skillbook.distribution.http import RetryPolicy, rate_note, retry_after
from skillbook.distribution.registry import (
    RegistryError,
    RegistryNotFound,
    RegistryUnavailable,
    api,
)
from skillbook.distribution.registry.client import RegistryClient
from skillbook.distribution.registry.endpoint import Endpoint


def client(
    hub: ClawHub, said: Said, *, token: str | None = None, retry: RetryPolicy = FAST
) -> RegistryClient:
    return RegistryClient(Endpoint(hub.url, token=token), retry=retry, on_wait=said)


def test_429_with_retry_after_is_waited_out_and_said(hub: ClawHub, said: Said) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    limited = Failure(
        429,
        {
            "Retry-After": "1",
            "RateLimit-Limit": "120",
            "RateLimit-Remaining": "0",
            "RateLimit-Reset": "1",
        },
        b"Rate limit exceeded",
    )
    hub.state.fail("/api/v1/skills/demo", limited)
    slept: list[float] = []
    with RegistryClient(Endpoint(hub.url), retry=FAST, on_wait=said, sleep=slept.append) as c:
        detail = api.fetch_detail(c, "demo")
    assert detail.latest_version == "1.0.0"
    assert slept == [1.0]
    host = hub.url.split("://")[1]
    assert said == [
        f"{host}: rate limited (remaining: 0/120, reset in 1s); retrying in 1.0s (attempt 2 of 3)"
    ]


def test_a_real_wait_happens(hub: ClawHub, said: Said) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    hub.state.fail("/api/v1/skills/demo", Failure(429, {"Retry-After": "1"}, b"slow down"))
    with client(hub, said) as c:
        assert api.fetch_detail(c, "demo").slug == "demo"
    assert len(hub.state.requests) == 2


def test_a_wait_longer_than_allowed_fails_with_when_to_retry(hub: ClawHub, said: Said) -> None:
    hub.state.fail(
        "/api/v1/search",
        Failure(
            429,
            {"Retry-After": "3600", "X-RateLimit-Limit": "120", "X-RateLimit-Remaining": "0"},
            b"Rate limit exceeded",
        ),
    )
    with client(hub, said) as c, pytest.raises(RegistryUnavailable) as info:
        api.search(c, "x")
    assert info.value.code == "registry.rate-limited"
    assert info.value.retry_after == 3600
    assert str(info.value) == (
        f"/api/v1/search on {hub.url} failed (429): Rate limit exceeded "
        "(retry in 3600s, remaining: 0/120)"
    )
    assert said == [] and len(hub.state.requests) == 1


def test_5xx_is_retried_with_backoff_then_reported(hub: ClawHub, said: Said) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    hub.state.fail("/api/v1/skills/demo", Failure(503, body=b"busy"), Failure(502, body=b"busy"))
    with client(hub, said) as c:
        assert api.fetch_detail(c, "demo").slug == "demo"
    assert len(said) == 2 and "HTTP 503" in said[0] and "attempt 2 of 3" in said[0]
    hub.state.fail("/api/v1/search", *[Failure(500, body=b"boom")] * 3)
    with client(hub, said) as c, pytest.raises(RegistryUnavailable) as info:
        api.search(c, "demo")
    assert str(info.value) == f"/api/v1/search on {hub.url} failed (500): boom"
    assert info.value.code == "registry.server-error"


def test_other_4xx_fail_at_once(hub: ClawHub, said: Said) -> None:
    hub.state.fail("/api/v1/search", Failure(403, body=b"forbidden"))
    with client(hub, said) as c, pytest.raises(RegistryError) as info:
        api.search(c, "x")
    assert info.value.code == "registry.http-error" and info.value.status == 403
    assert said == []


def test_slow_answers_time_out_and_are_retried(hub: ClawHub, said: Said) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    hub.state.delay["/api/v1/search"] = 1.0
    quick = RetryPolicy(attempts=2, base_delay=0.01, max_delay=0.01, timeout=0.2)
    with client(hub, said, retry=quick) as c, pytest.raises(RegistryUnavailable) as info:
        api.search(c, "demo")
    assert str(info.value) == f"/api/v1/search on {hub.url} failed: timed out"
    assert len(said) == 1 and "timed out" in said[0]


def test_malformed_json_and_404(hub: ClawHub, said: Said) -> None:
    hub.state.fail("/api/v1/search", Failure(200, body=b"<html>"))
    with client(hub, said) as c:
        with pytest.raises(RegistryError, match="returned malformed JSON"):
            api.search(c, "x")
        with pytest.raises(
            RegistryNotFound, match=re.escape(f'Skill "nope" not found on {hub.url}.')
        ):
            api.fetch_detail(c, "nope")


def test_search_sends_star_for_an_empty_query_and_limit_only_when_given(
    hub: ClawHub, said: Said
) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1, summary="Says hello")
    with client(hub, said) as c:
        raw, hits = api.search(c, "  ")
        api.search(c, "demo", limit=5)
    assert [r["query"] for r in hub.state.requests] == [{"q": "*"}, {"q": "demo", "limit": "5"}]
    assert [h.line() for h in hits] == ["demo v1.0.0  Demo  Says hello"]
    assert raw["results"][0]["ownerHandle"] == "bar-owner"


def test_the_token_goes_to_the_registry_only(hub: ClawHub, said: Said) -> None:
    hub.state.publish("demo", "1.0.0", DEMO_V1)
    other = ClawHub()
    try:
        other.state.static["/x.zip"] = b"zip"
        with client(hub, said, token="clh_secret") as c:
            api.fetch_detail(c, "demo")
            with io.BytesIO() as sink:
                c.download(f"{other.url}/x.zip", None, sink, label="x")
        assert hub.state.requests[0]["headers"]["Authorization"] == "Bearer clh_secret"
        assert "Authorization" not in other.state.requests[0]["headers"]
    finally:
        other.close()


def test_a_base_path_prefix_is_kept(hub: ClawHub, said: Said) -> None:
    with (
        RegistryClient(Endpoint(hub.url + "/mirror"), retry=FAST) as c,
        pytest.raises(RegistryError),
    ):
        api.search(c, "x")
    assert hub.state.requests[0]["path"] == "/mirror/api/v1/search"


def test_retry_after_forms() -> None:
    now = 1_800_000_000.0
    assert retry_after(httpx.Headers({"Retry-After": "7"}), now=now) == 7
    assert retry_after(httpx.Headers({"Retry-After": "0"}), now=now) == 1
    assert retry_after(httpx.Headers({"Retry-After": str(int(now) + 30)}), now=now) == 30
    date = email.utils.formatdate(now + 20, usegmt=True)
    assert retry_after(httpx.Headers({"Retry-After": date}), now=now) == pytest.approx(20, abs=1)
    assert retry_after(httpx.Headers({"Retry-After": "soon"}), now=now) is None
    assert (
        rate_note(httpx.Headers({"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "3"}))
        == "remaining: 3/60"
    )


def test_downloads_over_the_limit_are_refused(hub: ClawHub, said: Said) -> None:
    hub.state.static["/big.zip"] = b"x" * 5000
    with client(hub, said) as c, io.BytesIO() as sink, pytest.raises(RegistryError) as info:
        c.download("/big.zip", None, sink, label="big", max_bytes=1000)
    assert info.value.code == "registry.download-too-large"
