"""Client transports that refuse an oversized answer before it is buffered.

The MCP SDK reads a whole JSON-RPC message into memory before anyone can look at it,
so a server that answers ``resources/read`` for a 70-byte file with 60 MB would be
held in memory in full before the size check. These transports count the bytes as
they arrive instead: a ``resources/read`` the client announced with
:meth:`ResponseCaps.expect` may take at most :func:`wire_limit` of the size the
manifest declares, every other message at most :data:`DEFAULT_MAX_MESSAGE_BYTES`.

- streamable HTTP (:func:`capped_http_client`): an ``httpx2`` client whose transport
  wraps each response body; over the cap (or a ``Content-Length`` over it) the body
  fails as a stream error, which the SDK turns into an error answer for that request
  only. Compressed bodies are refused (``Accept-Encoding: identity`` is sent), since
  their decoded size is not what was counted.
- stdio (:func:`capped_stdio_client`): the server process's output is split into lines
  here; a line longer than the cap of the requests in flight ends the connection.

Which request tripped a cap is recorded in :attr:`ResponseCaps.tripped`, so the client
can report it as the lie it is. Only :mod:`skillbook.mcp.client` uses this module.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import IO, TYPE_CHECKING, Any, Final

import httpx2

from skillbook.runtime.process_group import kill_group

if TYPE_CHECKING:
    from mcp.client._transport import TransportStreams

_log = logging.getLogger("skillbook.mcp")

#: The largest answer other than a capped ``resources/read`` (a ``skills/list`` page of
#: 100 skills with 512 files each is about 8 MB).
DEFAULT_MAX_MESSAGE_BYTES: Final = 32 * 1024 * 1024
#: JSON spends at most 6 bytes on one byte of a file (``\\u00XX``); base64 spends 4/3.
WIRE_BYTES_PER_BYTE: Final = 6
#: Room for the envelope: URI, MIME type, JSON-RPC and SSE framing, notifications.
ENVELOPE_BYTES: Final = 64 * 1024
#: How long a stdio server may take to exit after its stdin closes.
STDIO_EXIT_GRACE_S: Final = 2.0
_CHUNK: Final = 65536


def wire_limit(size: int) -> int:
    """The most bytes an honest answer for a file of ``size`` bytes can take."""
    return size * WIRE_BYTES_PER_BYTE + ENVELOPE_BYTES


class ResponseCaps:
    """The byte caps of the requests one client sends (shared with its transport)."""

    def __init__(self, default: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        self.default = default
        self._by_uri: dict[str, int] = {}
        #: JSON-RPC id -> (cap, uri) of requests sent and not yet answered (stdio).
        self._pending: dict[Any, tuple[int, str | None]] = {}
        #: URI (or method) -> bytes seen when the answer was cut off.
        self.tripped: dict[str, int] = {}
        #: 401 or 403 when the HTTP server refused a request for want of authorization
        #: (the SDK keeps only a generic error), so the client can say what to set.
        self.auth_refused: int | None = None

    def expect(self, uri: str, size: int) -> None:
        """The next ``resources/read`` of ``uri`` is for a file of ``size`` bytes."""
        self._by_uri[uri] = wire_limit(size)

    def forget(self, uri: str) -> None:
        self._by_uri.pop(uri, None)

    def for_request(self, message: Mapping[str, Any]) -> tuple[int, str | None]:
        """``(cap, uri)`` for one outgoing JSON-RPC message."""
        params = message.get("params")
        if message.get("method") == "resources/read" and isinstance(params, Mapping):
            uri = params.get("uri")
            if isinstance(uri, str):
                return self._by_uri.get(uri, self.default), uri
        return self.default, None

    # -- stdio: one stream, so the cap is that of the requests in flight

    def sent(self, message: Mapping[str, Any]) -> None:
        if "id" in message and "method" in message:
            self._pending[message["id"]] = self.for_request(message)

    def answered(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            return
        if isinstance(message, Mapping) and "method" not in message:
            self._pending.pop(message.get("id"), None)

    def line_cap(self) -> int:
        return max((cap for cap, _ in self._pending.values()), default=self.default)

    def trip_pending(self, seen: int) -> None:
        for _cap, uri in self._pending.values():
            self.tripped[uri or "message"] = seen
        if not self._pending:
            self.tripped["message"] = seen


# --------------------------------------------------------------------------- HTTP


class AnswerTooLarge(httpx2.StreamError):
    """A response body passed its cap: refused before it was read in full."""


class _CappedStream(httpx2.AsyncByteStream):
    def __init__(
        self, inner: httpx2.AsyncByteStream, cap: int, key: str, caps: ResponseCaps, refuse: str
    ) -> None:
        self.inner, self.cap, self.key, self.caps, self.refuse = inner, cap, key, caps, refuse

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self.refuse:
            self.caps.tripped[self.key] = 0
            raise AnswerTooLarge(self.refuse)
        seen = 0
        async for chunk in self.inner:
            seen += len(chunk)
            if seen > self.cap:
                self.caps.tripped[self.key] = seen
                raise AnswerTooLarge(f"the answer passed {self.cap} bytes; not read further")
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class _CappedTransport(httpx2.AsyncBaseTransport):
    def __init__(self, inner: httpx2.AsyncBaseTransport, caps: ResponseCaps) -> None:
        self.inner, self.caps = inner, caps

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        cap, uri = self.caps.default, None
        if request.method == "POST":
            try:
                message = json.loads(request.content)
            except ValueError:
                message = None
            if isinstance(message, Mapping):
                cap, uri = self.caps.for_request(message)
        response = await self.inner.handle_async_request(request)
        if response.status_code in (401, 403):
            self.caps.auth_refused = response.status_code
        refuse = ""
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            refuse = f"a {encoding}-encoded answer (its decoded size cannot be capped)"
        length = response.headers.get("content-length", "")
        if not refuse and length.isdigit() and int(length) > cap:
            refuse = f"the answer declares {length} bytes, over the cap of {cap}"
        stream = response.stream
        assert isinstance(stream, httpx2.AsyncByteStream)
        response.stream = _CappedStream(stream, cap, uri or "message", self.caps, refuse)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def capped_http_client(
    caps: ResponseCaps, *, headers: Mapping[str, str] | None = None
) -> httpx2.AsyncClient:
    """An HTTP client with the SDK's MCP timeouts and every response body counted;
    ``headers`` go with every request (``Authorization`` for a token-protected server)."""
    from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

    return httpx2.AsyncClient(
        timeout=httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT),
        headers={**(headers or {}), "Accept-Encoding": "identity"},
        transport=_CappedTransport(httpx2.AsyncHTTPTransport(), caps),
    )


# --------------------------------------------------------------------------- stdio


@asynccontextmanager
async def capped_stdio_client(
    command: tuple[str, ...],
    *,
    env: Mapping[str, str],
    cwd: str | None,
    errlog: IO[str],
    caps: ResponseCaps,
) -> AsyncIterator[TransportStreams]:
    """Start a stdio server (its own process group) and frame its lines with a cap.

    The server gets the SDK's minimal safe environment plus ``env``. On exit its stdin
    is closed; after :data:`STDIO_EXIT_GRACE_S` its process group is killed.
    """
    import anyio
    import mcp_types as types
    from mcp.client.stdio import get_default_environment
    from mcp.shared.message import SessionMessage

    process = await anyio.open_process(
        list(command),
        env={**get_default_environment(), **env},
        cwd=cwd,
        stderr=errlog,
        start_new_session=True,
    )
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def reader() -> None:
        assert process.stdout is not None
        buffer = bytearray()
        async with read_writer:
            try:
                while True:
                    try:
                        chunk = await process.stdout.receive(_CHUNK)
                    except (anyio.EndOfStream, anyio.ClosedResourceError, OSError):
                        return
                    start = 0
                    while (end := chunk.find(b"\n", start)) >= 0:
                        buffer += chunk[start:end]
                        line, buffer = bytes(buffer), bytearray()
                        start = end + 1
                        if not line.strip():
                            continue
                        caps.answered(line)
                        try:
                            parsed: SessionMessage | Exception = SessionMessage(
                                types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                            )
                        except ValueError as exc:
                            parsed = exc
                        await read_writer.send(parsed)
                    buffer += chunk[start:]
                    if len(buffer) > caps.line_cap():
                        # Refused before it is buffered in full: the connection ends, and
                        # the server's next write fails instead of filling the pipe.
                        caps.trip_pending(len(buffer))
                        _log.warning("MCP stdio server sent an answer over its cap; closing")
                        with contextlib.suppress(OSError, anyio.BrokenResourceError):
                            await process.stdout.aclose()
                        return
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return

    async def writer() -> None:
        assert process.stdin is not None
        async with write_reader:
            try:
                async for message in write_reader:
                    data = message.message.model_dump(by_alias=True, exclude_unset=True)
                    caps.sent(data)
                    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
                    await process.stdin.send(text.encode("utf-8") + b"\n")
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                await read_writer.aclose()

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await write_stream.aclose()
                await read_stream.aclose()
                if process.stdin is not None:
                    with contextlib.suppress(OSError, anyio.BrokenResourceError):
                        await process.stdin.aclose()
                with anyio.move_on_after(STDIO_EXIT_GRACE_S):
                    await process.wait()
                if os.name == "posix":
                    kill_group(process.pid)  # the server, or what it left behind
                with anyio.move_on_after(STDIO_EXIT_GRACE_S):
                    await process.aclose()  # its pipes and its transport
            tg.cancel_scope.cancel()
