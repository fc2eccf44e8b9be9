"""A real HTTP server on 127.0.0.1 that speaks Anthropic's messages protocol (streamed).

The script and recording work as in :mod:`fake_openai_server` (same ``Reply``,
``Call``, ``HttpError``). A streamed answer is the event sequence the API sends:
``message_start``; per content block ``content_block_start``, deltas
(``text_delta`` for text, ``input_json_delta`` fragments for a ``tool_use`` block's
input) and ``content_block_stop``; ``message_delta`` with the stop reason;
``message_stop``. Each is written as ``event: <type>\\ndata: <json>\\n\\n``.
"""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from fake_openai_server import Call, FakeServer, HttpError, Reply, Turn, pieces

__all__ = ["Call", "FakeAnthropicServer", "HttpError", "Reply", "Turn"]


class FakeAnthropicServer(FakeServer):
    """``POST /v1/messages``; ``base_url`` (without ``/v1``) is what the client gets."""

    text_piece = 5
    args_piece = 7

    @property
    def base_url(self) -> str:
        return self.root

    def error_body(self, error: HttpError) -> dict[str, Any]:
        return {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": error.message},
        }

    def respond(self, handler: BaseHTTPRequestHandler, body: dict[str, Any], reply: Reply) -> None:
        if handler.path.split("?")[0].rstrip("/") != "/v1/messages":
            self._send_json(
                handler, 404, self.error_body(HttpError(404, f"no route {handler.path}"))
            )
            return
        model = str(body.get("model", "fake"))
        stop = "tool_use" if reply.calls else "end_turn"
        calls = [(c.id or f"toolu_{i}_{len(self.requests)}", c) for i, c in enumerate(reply.calls)]
        if not body.get("stream"):
            content: list[dict[str, Any]] = (
                [{"type": "text", "text": reply.text}] if reply.text else []
            )
            content += [
                {"type": "tool_use", "id": cid, "name": c.name, "input": json.loads(c.json_text())}
                for cid, c in calls
            ]
            self._send_json(handler, 200, self._message(model, content, stop))
            return
        self.start_sse(handler)

        def event(kind: str, **data: Any) -> None:
            self.sse(handler, json.dumps({"type": kind, **data}, ensure_ascii=False), event=kind)

        event("message_start", message=self._message(model, [], None))
        event("ping")
        index = 0
        if reply.text:
            event("content_block_start", index=index, content_block={"type": "text", "text": ""})
            for piece in pieces(reply.text, self.text_piece):
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                event(
                    "content_block_delta",
                    index=index,
                    delta={"type": "text_delta", "text": piece},
                )
            event("content_block_stop", index=index)
            index += 1
        for cid, c in calls:
            event(
                "content_block_start",
                index=index,
                content_block={"type": "tool_use", "id": cid, "name": c.name, "input": {}},
            )
            for piece in pieces(c.json_text(), self.args_piece):
                event(
                    "content_block_delta",
                    index=index,
                    delta={"type": "input_json_delta", "partial_json": piece},
                )
            event("content_block_stop", index=index)
            index += 1
        event(
            "message_delta",
            delta={"stop_reason": stop, "stop_sequence": None},
            usage={"output_tokens": 10},
        )
        event("message_stop")

    @staticmethod
    def _message(model: str, content: list[dict[str, Any]], stop: str | None) -> dict[str, Any]:
        return {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 0},
        }
