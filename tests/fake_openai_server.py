"""A real HTTP server on 127.0.0.1 that speaks OpenAI's chat-completions protocol.

It answers from a script instead of a model, so the agent loop can be driven through
the official ``openai`` client over a socket. Each entry of the script answers one
request: ``str`` (answer text), ``Reply(text, calls)``, a list of ``Call`` (tool
calls), ``HttpError`` (an error status), or a function of the request body returning
one of those (to answer from what the model was sent). Every request body is kept in
``server.requests``; a failing script function becomes a 400 (never retried) and lands in
``server.errors`` so the test can report it.

Streaming follows the wire format: ``data: <chunk json>\\n\\n`` lines, tool calls as
deltas (id and name first, then the JSON arguments in fragments), a final chunk with
``finish_reason``, then ``data: [DONE]``. Standard library only.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass(frozen=True)
class Call:
    """A tool call to send; ``arguments`` may be a dict or raw (possibly bad) JSON text."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def json_text(self) -> str:
        args = self.arguments
        return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)


@dataclass(frozen=True)
class Reply:
    text: str = ""
    calls: Sequence[Call] = ()
    #: Seconds to wait before each streamed piece (to test cancellation).
    delay_s: float = 0.0


@dataclass(frozen=True)
class HttpError:
    status: int
    message: str = "error"


Turn = str | Reply | list[Call] | HttpError | Callable[[dict[str, Any]], Any]


def pieces(text: str, size: int) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]


class FakeServer:
    """Base: a threaded HTTP server that pops one script entry per POST."""

    def __init__(self, script: Sequence[Turn]) -> None:
        self.script: list[Turn] = list(script)
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                server._handle(self)

            def do_GET(self) -> None:
                server._send_json(self, 404, {"error": {"message": "not found"}})

            def log_message(self, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    # ----------------------------------------------------------------- lifecycle

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ----------------------------------------------------------------- handling

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        try:
            body = json.loads(handler.rfile.read(length) or b"{}")
        except json.JSONDecodeError as exc:
            self._send_json(handler, 400, {"error": {"message": f"bad JSON: {exc}"}})
            return
        with self._lock:
            self.requests.append(body)
            self.paths.append(handler.path)
            self.headers.append({k.lower(): v for k, v in handler.headers.items()})
            turn: Any = self.script.pop(0) if self.script else None
        try:
            while callable(turn):
                turn = turn(body)
        except Exception:
            self.errors.append(traceback.format_exc())
            self._send_json(handler, 400, self.error_body(HttpError(400, "script function failed")))
            return
        if turn is None:
            self.errors.append(f"no script entry left for request {len(self.requests)}")
            self._send_json(handler, 400, self.error_body(HttpError(400, "script exhausted")))
            return
        if isinstance(turn, HttpError):
            self._send_json(handler, turn.status, self.error_body(turn))
            return
        reply = turn if isinstance(turn, Reply) else Reply(turn) if isinstance(turn, str) else None
        if reply is None:
            reply = Reply("", tuple(turn))
        # The client may go away mid-stream (a cancelled turn).
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.respond(handler, body, reply)

    def respond(self, handler: BaseHTTPRequestHandler, body: dict[str, Any], reply: Reply) -> None:
        raise NotImplementedError

    def error_body(self, error: HttpError) -> dict[str, Any]:
        return {"error": {"message": error.message, "type": "invalid_request_error"}}

    @staticmethod
    def _send_json(handler: BaseHTTPRequestHandler, status: int, obj: Any) -> None:
        data = json.dumps(obj).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    @staticmethod
    def start_sse(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Connection", "close")
        handler.end_headers()

    @staticmethod
    def sse(handler: BaseHTTPRequestHandler, data: str, event: str | None = None) -> None:
        head = f"event: {event}\n" if event else ""
        handler.wfile.write(f"{head}data: {data}\n\n".encode())
        handler.wfile.flush()


class FakeOpenAIServer(FakeServer):
    """``POST /v1/chat/completions``; ``base_url`` is what the client gets."""

    text_piece = 5
    args_piece = 7

    @property
    def base_url(self) -> str:
        return self.root + "/v1"

    def respond(self, handler: BaseHTTPRequestHandler, body: dict[str, Any], reply: Reply) -> None:
        if not handler.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(handler, 404, {"error": {"message": f"no route {handler.path}"}})
            return
        model = str(body.get("model", "fake"))
        finish = "tool_calls" if reply.calls else "stop"
        calls = [(c.id or f"call_{i}_{len(self.requests)}", c) for i, c in enumerate(reply.calls)]
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
            if calls:
                message["tool_calls"] = [
                    {
                        "id": cid,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.json_text()},
                    }
                    for cid, c in calls
                ]
            self._send_json(
                handler,
                200,
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "created": 0,
                    "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                },
            )
            return
        self.start_sse(handler)

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> None:
            self.sse(
                handler,
                json.dumps(
                    {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion.chunk",
                        "created": 0,
                        "model": model,
                        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
                    },
                    ensure_ascii=False,
                ),
            )

        chunk({"role": "assistant", "content": ""})
        for piece in pieces(reply.text, self.text_piece):
            if reply.delay_s:
                time.sleep(reply.delay_s)
            chunk({"content": piece})
        for index, (cid, c) in enumerate(calls):
            first = {"index": index, "id": cid, "type": "function"}
            chunk({"tool_calls": [{**first, "function": {"name": c.name, "arguments": ""}}]})
            for piece in pieces(c.json_text(), self.args_piece):
                chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        chunk({}, finish)
        self.sse(handler, "[DONE]")
