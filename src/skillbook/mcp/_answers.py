"""Repeated 2026-07-28 read requests answered from the bytes the SDK sent last time.

Input: the ASGI application that serves ``/mcp`` (the SDK's streamable-HTTP manager)
and the served state's accessor (:meth:`SkillServer.state`). Output: an ASGI
application that answers exactly as that application does, cheaper.

A 2026-07-28 request stands alone (no session, no handshake), and the answer to a
read-only method is a function of the request (its headers but ``Content-Length``,
its JSON body but the ``id``) and of the served state. So the first request of one
shape goes through the SDK unchanged (its checks, its validation, its serialiser)
and, when the SDK answered ``200 application/json`` with a result for that ``id``,
the exact response bytes are kept with the request's ``id`` cut out. The next
request of the same shape while the same :class:`~skillbook.mcp._catalog.ServedState`
is served gets those bytes with its own ``id`` put back: what the SDK would have
sent, without its pydantic validation, middleware and JSON encoding (about 1 ms of
CPU per answer on a page of 100 skills). A new state drops every kept answer, so a
change is never answered from old bytes. Errors, other methods, handshake-era
requests and anything unusual always go to the SDK.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any, Final

from mcp_types.version import MODERN_PROTOCOL_VERSIONS

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

#: Methods whose answer depends only on the request and the served state.
CACHED_METHODS: Final = frozenset(
    {
        "skills/list",
        "skills/get",
        "resources/read",
        "resources/list",
        "resources/directory/read",
        "prompts/list",
    }
)
#: Bounds of the kept answers (the oldest go first); a state change empties them.
DEFAULT_MAX_ANSWERS: Final = 20_000
DEFAULT_MAX_BYTES: Final = 64 * 1024 * 1024
_VERSION_HEADER: Final = b"mcp-protocol-version"
_LENGTH_HEADER: Final = b"content-length"
_JSON: Final = b"application/json"

Key = tuple[tuple[tuple[bytes, bytes], ...], str]


@dataclass(frozen=True, slots=True)
class _Answer:
    status: int
    #: Response headers; the ``Content-Length`` value is recomputed per answer.
    headers: tuple[tuple[bytes, bytes], ...]
    head: bytes
    tail: bytes

    def body(self, ident: int | str) -> bytes:
        return self.head + json.dumps(ident).encode() + self.tail

    def start(self, body: bytes) -> Message:
        length = str(len(body)).encode()
        headers = [(k, length if k == _LENGTH_HEADER else v) for k, v in self.headers]
        return {"type": "http.response.start", "status": self.status, "headers": headers}


class CachedAnswers:
    """ASGI middleware in front of the SDK's ``/mcp`` endpoint (see the module).

    ``state``: the server's served state as its handlers see it (a new object when
    anything served changed)."""

    def __init__(
        self,
        app: Callable[[Scope, Receive, Send], Awaitable[None]],
        state: Callable[[], Awaitable[object]],
        *,
        path: str,
        max_answers: int = DEFAULT_MAX_ANSWERS,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        self.app, self.state, self.path = app, state, path
        self.max_answers, self.max_bytes = max_answers, max_bytes
        self._state: object = None
        self._answers: dict[Key, _Answer] = {}
        self._bytes = 0
        #: Answers given from kept bytes, and requests that went to the SDK (counted
        #: only for cacheable requests): what tests and benchmarks look at.
        self.hits = 0
        self.misses = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._eligible(scope):
            await self.app(scope, receive, send)
            return
        body, complete = await _read_body(receive)
        replay = _replaying(body, receive)
        if not complete:
            await self.app(scope, replay, send)
            return
        ident, key = _request_key(scope, body)
        if key is None or ident is None:
            await self.app(scope, replay, send)
            return
        state = await self.state()
        if state is not self._state:
            self._state, self._answers, self._bytes = state, {}, 0
        answer = self._answers.get(key)
        if answer is not None:
            self.hits += 1
            out = answer.body(ident)
            await send(answer.start(out))
            await send({"type": "http.response.body", "body": out})
            return
        self.misses += 1
        captured: list[Message] = []

        async def capture(message: Message) -> None:
            captured.append(message)
            await send(message)

        await self.app(scope, replay, capture)
        if await self.state() is state:
            self._keep(key, ident, captured)

    def _eligible(self, scope: Scope) -> bool:
        if scope["type"] != "http" or scope.get("method") != "POST":
            return False
        if scope.get("path") != self.path or scope.get("root_path"):
            return False
        for name, value in scope.get("headers", ()):
            if name == _VERSION_HEADER:
                return bytes(value).decode("latin-1") in MODERN_PROTOCOL_VERSIONS
        return False

    def _keep(self, key: Key, ident: int | str, messages: list[Message]) -> None:
        answer = _answer_of(ident, messages)
        if answer is None:
            return
        size = len(answer.head) + len(answer.tail)
        if size > self.max_bytes:
            return
        while self._answers and (
            len(self._answers) >= self.max_answers or self._bytes + size > self.max_bytes
        ):
            oldest = next(iter(self._answers))
            gone = self._answers.pop(oldest)
            self._bytes -= len(gone.head) + len(gone.tail)
        self._answers[key] = answer
        self._bytes += size


async def _read_body(receive: Receive) -> tuple[bytes, bool]:
    """The request body, and False when the client went away before sending it all."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), False
        chunks.append(bytes(message.get("body", b"")))
        if not message.get("more_body", False):
            return b"".join(chunks), True


def _replaying(body: bytes, receive: Receive) -> Receive:
    """``receive`` for the SDK: the body read already, then the client's own events."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _request_key(scope: Scope, body: bytes) -> tuple[int | str | None, Key | None]:
    """The request's ``id`` and what its answer depends on; None when not cacheable."""
    try:
        decoded = json.loads(body)
    except (ValueError, RecursionError):
        return None, None
    if not isinstance(decoded, dict) or decoded.get("method") not in CACHED_METHODS:
        return None, None
    ident = decoded.pop("id", None)
    # The SDK takes a strict int or a str as the id; anything else is its to answer.
    if type(ident) is not int and type(ident) is not str:
        return None, None
    headers = tuple(
        (bytes(k), bytes(v)) for k, v in scope.get("headers", ()) if k != _LENGTH_HEADER
    )
    return ident, (headers, json.dumps(decoded, sort_keys=True))


def _answer_of(ident: int | str, messages: list[Message]) -> _Answer | None:
    """The kept form of one SDK response: a complete ``200`` JSON result for ``ident``."""
    if len(messages) != 2:
        return None
    start, end = messages
    if start.get("type") != "http.response.start" or start.get("status") != 200:
        return None
    if end.get("type") != "http.response.body" or end.get("more_body", False):
        return None
    headers = tuple((bytes(k), bytes(v)) for k, v in start.get("headers", ()))
    if dict(headers).get(b"content-type") != _JSON:
        return None
    body = bytes(end.get("body", b""))
    head = b'{"jsonrpc":"2.0","id":'
    marker = head + json.dumps(ident).encode() + b',"result":'
    if not body.startswith(marker):
        return None
    return _Answer(200, headers, head, body[len(marker) - len(b',"result":') :])
