"""Repeated 2026-07-28 read requests answered from kept SDK response bytes (``_answers``).

Against a stand-in ASGI application that counts its calls: what is kept, for which
requests, with which ``id``, and when it is dropped. The byte-identity with the real
SDK over real HTTP is in ``test_answers_http.py``.
"""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from typing import Any

import anyio
import pytest

from skillbook.mcp._answers import CachedAnswers

Message = MutableMapping[str, Any]
PATH = "/mcp"
MODERN = b"2026-07-28"


class StandIn:
    """An ASGI app answering like the SDK's JSON mode: ``200`` with the request's id."""

    def __init__(self) -> None:
        self.calls = 0
        self.bodies: list[bytes] = []
        self.status = 200
        self.content_type = b"application/json"
        self.error = False
        self.chunks = 1

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        self.calls += 1
        raw = b""
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.bodies.append(raw)
        request = json.loads(raw)
        outcome = (
            {"error": {"code": -32602, "message": "no"}}
            if self.error
            else {"result": {"call": self.calls, "method": request["method"]}}
        )
        body = json.dumps(
            {"jsonrpc": "2.0", "id": request.get("id"), **outcome}, separators=(",", ":")
        ).encode()
        headers = [
            (b"content-length", str(len(body)).encode()),
            (b"content-type", self.content_type),
        ]
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        if self.chunks == 1:
            await send({"type": "http.response.body", "body": body})
        else:
            await send({"type": "http.response.body", "body": body[:5], "more_body": True})
            await send({"type": "http.response.body", "body": body[5:]})


class States:
    def __init__(self) -> None:
        self.current = object()

    async def __call__(self) -> object:
        return self.current


def request(
    ident: object = 1,
    method: str = "resources/read",
    uri: str = "skill://alpha/SKILL.md",
    *,
    version: bytes | None = MODERN,
    extra: list[tuple[bytes, bytes]] | None = None,
    path: str = PATH,
) -> tuple[MutableMapping[str, Any], bytes]:
    body = {"jsonrpc": "2.0", "id": ident, "method": method, "params": {"uri": uri}}
    raw = json.dumps(body).encode()
    headers = [(b"host", b"127.0.0.1:9"), (b"content-length", str(len(raw)).encode())]
    if version is not None:
        headers.append((b"mcp-protocol-version", version))
    scope = {"type": "http", "method": "POST", "path": path, "headers": headers + (extra or [])}
    return scope, raw


def call(
    app: CachedAnswers, scope: MutableMapping[str, Any], raw: bytes
) -> tuple[int, dict[bytes, bytes], bytes]:
    sent: list[Message] = []

    async def main() -> None:
        pieces = [raw[:3], raw[3:]]

        async def receive() -> Message:
            if pieces:
                chunk = pieces.pop(0)
                return {"type": "http.request", "body": chunk, "more_body": bool(pieces)}
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            sent.append(message)

        await app(scope, receive, send)

    anyio.run(main)
    start, *bodies = sent
    headers = dict(start["headers"])
    return start["status"], headers, b"".join(m.get("body", b"") for m in bodies)


@pytest.fixture
def stand_in() -> StandIn:
    return StandIn()


@pytest.fixture
def states() -> States:
    return States()


@pytest.fixture
def app(stand_in: StandIn, states: States) -> CachedAnswers:
    return CachedAnswers(stand_in, states, path=PATH)


def test_a_repeated_request_is_answered_from_the_kept_bytes_with_its_own_id(
    app: CachedAnswers, stand_in: StandIn
) -> None:
    status, _, first = call(app, *request(1))
    assert status == 200
    assert stand_in.bodies == [request(1)[1]]  # the SDK got the body as sent
    for ident in (2, "two", 'ü"', 10**30):
        status, headers, again = call(app, *request(ident))
        assert status == 200
        expected = first.replace(b'"id":1,', b'"id":' + json.dumps(ident).encode() + b",", 1)
        assert again == expected
        assert headers[b"content-length"] == str(len(again)).encode()
        assert headers[b"content-type"] == b"application/json"
    assert stand_in.calls == 1
    assert (app.hits, app.misses) == (4, 1)


def test_another_resource_or_other_headers_go_to_the_sdk(
    app: CachedAnswers, stand_in: StandIn
) -> None:
    call(app, *request(1))
    call(app, *request(1, uri="skill://beta/SKILL.md"))
    call(app, *request(1, extra=[(b"origin", b"http://127.0.0.1:9")]))
    call(app, *request(1, method="skills/list"))
    assert stand_in.calls == 4
    call(app, *request(5, uri="skill://beta/SKILL.md"))
    assert stand_in.calls == 4


def test_a_new_served_state_drops_every_kept_answer(
    app: CachedAnswers, stand_in: StandIn, states: States
) -> None:
    call(app, *request(1))
    states.current = object()
    _, _, body = call(app, *request(2))
    assert stand_in.calls == 2
    assert b'"call":2' in body
    call(app, *request(3))
    assert stand_in.calls == 2


@pytest.mark.parametrize(
    "change",
    ["status", "content_type", "error", "chunks"],
)
def test_only_a_complete_json_result_is_kept(
    app: CachedAnswers, stand_in: StandIn, change: str
) -> None:
    if change == "status":
        stand_in.status = 400
    elif change == "content_type":
        stand_in.content_type = b"text/event-stream"
    elif change == "error":
        stand_in.error = True
    else:
        stand_in.chunks = 2
    first = call(app, *request(1))
    second = call(app, *request(1))
    assert stand_in.calls == 2
    assert first[2] == second[2].replace(b'"call":2', b'"call":1')


@pytest.mark.parametrize(
    "scope_and_body",
    [
        request(1, method="tools/call"),
        request(1, method="subscriptions/listen"),
        request(1, version=None),  # handshake era: sessions, not single exchanges
        request(1, version=b"2025-11-25"),
        request(1.0),
        request(True),
        request(None),
        request(1, path="/other"),
    ],
    ids=[
        "tools-call",
        "listen",
        "no-version",
        "handshake-era",
        "float-id",
        "bool-id",
        "null-id",
        "path",
    ],
)
def test_other_requests_always_go_to_the_sdk(
    app: CachedAnswers, stand_in: StandIn, scope_and_body: tuple[MutableMapping[str, Any], bytes]
) -> None:
    call(app, *scope_and_body)
    call(app, *scope_and_body)
    assert stand_in.calls == 2
    assert app.hits == 0


def test_a_body_that_is_not_json_goes_to_the_sdk(app: CachedAnswers, stand_in: StandIn) -> None:
    scope, _ = request(1)
    with pytest.raises(json.JSONDecodeError):
        call(app, scope, b"{not json")  # the stand-in's own parse fails: it was called
    assert stand_in.calls == 1


def test_kept_answers_are_bounded_oldest_first(stand_in: StandIn, states: States) -> None:
    app = CachedAnswers(stand_in, states, path=PATH, max_answers=2)
    for uri in ("skill://a/SKILL.md", "skill://b/SKILL.md", "skill://c/SKILL.md"):
        call(app, *request(1, uri=uri))
    call(app, *request(2, uri="skill://c/SKILL.md"))
    call(app, *request(2, uri="skill://b/SKILL.md"))
    assert stand_in.calls == 3
    call(app, *request(2, uri="skill://a/SKILL.md"))  # the oldest went first
    assert stand_in.calls == 4
    tiny = CachedAnswers(StandIn(), states, path=PATH, max_bytes=10)
    call(tiny, *request(1))
    call(tiny, *request(2))
    assert tiny.hits == 0
