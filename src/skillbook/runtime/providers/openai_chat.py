"""A :class:`ChatModel` over the OpenAI chat-completions API, streamed, with tool calls.

Input: skillbook :class:`Message` values, tools and a system prompt. Output: the
events of :mod:`skillbook.runtime.providers.base`. Speaks the wire protocol every
OpenAI-compatible server implements (OpenAI, Ollama, vLLM, llama.cpp, LM Studio,
OpenRouter), through the official ``openai`` package, imported when a model is made.

The plumbing both vendors share (the SDK's client and errors, closing the stream) is
:mod:`skillbook.runtime.providers.vendor`; this module is the wire format.

Streamed tool calls arrive in pieces keyed by ``index``: the first piece carries the
id and name, later ones fragments of the JSON arguments. Servers differ (some send a
whole call in one piece, some repeat the id, a few omit the index), so the pieces are
assembled leniently and the calls emitted once the stream ends.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skillbook.runtime.providers.base import (
    Message,
    ModelEvent,
    Stop,
    TextDelta,
    ToolCall,
    ToolCallReady,
    parse_arguments,
)
from skillbook.runtime.providers.vendor import Vendor, stream_events

if TYPE_CHECKING:
    from skillbook.runtime.tools import Tool

OPENAI = Vendor("openai", "AsyncOpenAI", "api.openai.com")


def openai_tool_spec(tool: Tool) -> dict[str, Any]:
    """A tool as chat completions declares it: ``{"type": "function", "function": {name,
    description, parameters}}``."""
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.schema},
    }


def openai_messages(system: str, messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The ``messages`` array of a chat-completions request."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for m in messages:
        if m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
        elif m.role == "assistant" and m.tool_calls:
            out.append(
                {
                    "role": "assistant",
                    # Some servers refuse "" next to tool calls; null is the documented value.
                    "content": m.content or None,
                    "tool_calls": [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {
                                "name": c.name,
                                "arguments": json.dumps(dict(c.arguments), ensure_ascii=False),
                            },
                        }
                        for c in m.tool_calls
                    ],
                }
            )
        else:
            out.append({"role": m.role, "content": m.content})
    return out


@dataclass(slots=True)
class _Partial:
    id: str = ""
    name: str = ""
    arguments: str = ""


class OpenAIChatModel:
    """``model`` on an OpenAI-compatible endpoint (``base_url`` ends in ``/v1``)."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: Any | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.client = (
            client if client is not None else OPENAI.client(api_key=api_key, base_url=base_url)
        )

    @property
    def name(self) -> str:
        return self.model

    def _request(
        self, messages: Sequence[Message], tools: Sequence[Tool], system: str
    ) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.model,
            "messages": openai_messages(system, messages),
            "stream": True,
        }
        if tools:  # an empty list is refused by some servers
            request["tools"] = [openai_tool_spec(t) for t in tools]
        if self.max_tokens is not None:
            request["max_tokens"] = self.max_tokens
        if self.temperature is not None:
            request["temperature"] = self.temperature
        return request

    def stream(
        self, messages: Sequence[Message], tools: Sequence[Tool], system: str
    ) -> AsyncIterator[ModelEvent]:
        # The request is built and sent when the caller starts iterating.
        return stream_events(
            OPENAI,
            self.base_url,
            lambda: self.client.chat.completions.create(**self._request(messages, tools, system)),
            _events,
        )


async def _events(stream: Any) -> AsyncIterator[ModelEvent]:
    """Text as it streams; the tool calls, assembled from their pieces, at the end."""
    partials: dict[int, _Partial] = {}
    finish: str | None = None
    async for chunk in stream:
        for choice in chunk.choices or ():
            delta = choice.delta
            if delta is not None and delta.content:
                yield TextDelta(delta.content)
            for piece in (delta.tool_calls if delta is not None else None) or ():
                _merge(partials, piece)
            finish = choice.finish_reason or finish
    for n, index in enumerate(sorted(partials)):
        part = partials[index]
        args, error = parse_arguments(part.arguments)
        yield ToolCallReady(ToolCall(part.id or f"call_{n}", part.name, args, error))
    yield Stop(finish or ("tool_calls" if partials else "stop"))


def _merge(partials: dict[int, _Partial], piece: Any) -> None:
    index = piece.index
    if index is None:  # some servers leave it out: match by id, else a new call
        index = next(
            (i for i, p in partials.items() if piece.id and p.id == piece.id), len(partials)
        )
    part = partials.setdefault(index, _Partial())
    if piece.id:
        part.id = piece.id
    fn = piece.function
    if fn is None:
        return
    if fn.name and not part.name:
        part.name = fn.name
    elif fn.name and fn.name != part.name:
        part.name += fn.name
    if fn.arguments:
        part.arguments += fn.arguments
