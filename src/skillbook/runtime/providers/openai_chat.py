"""A :class:`ChatModel` over the OpenAI chat-completions API, streamed, with tool calls.

Input: skillbook :class:`Message` values, tools and a system prompt. Output: the
events of :mod:`skillbook.runtime.providers.base`. Speaks the wire protocol every
OpenAI-compatible server implements (OpenAI, Ollama, vLLM, llama.cpp, LM Studio,
OpenRouter), through the official ``openai`` package, imported when a model is made.

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

from skillbook.runtime import ModelError, ModelNotConfigured
from skillbook.runtime.providers.base import (
    Message,
    ModelEvent,
    Stop,
    TextDelta,
    ToolCall,
    ToolCallReady,
    one_line,
    parse_arguments,
)

if TYPE_CHECKING:
    from skillbook.runtime.tools import Tool

INSTALL_HINT = 'the openai package is not installed: pip install "skillbook[openai]"'


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
        if client is None:
            try:
                import openai
            except ImportError as exc:
                raise ModelNotConfigured(INSTALL_HINT, code="missing-package") from exc
            client = openai.AsyncOpenAI(api_key=api_key, base_url=base_url)
        self.client = client

    @property
    def name(self) -> str:
        return self.model

    def _request(
        self, messages: Sequence[Message], tools: Sequence[Tool], system: str
    ) -> dict[str, Any]:
        from skillbook.runtime.tools import openai_tool_spec

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

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[Tool], system: str
    ) -> AsyncIterator[ModelEvent]:
        api_error = _api_error()
        request = self._request(messages, tools, system)
        where = self.base_url or "api.openai.com"
        try:
            stream = await self.client.chat.completions.create(**request)
        except api_error as exc:
            raise ModelError(f"{where}: {one_line(str(exc))}") from exc
        partials: dict[int, _Partial] = {}
        finish: str | None = None
        try:
            async for chunk in stream:
                for choice in chunk.choices or ():
                    delta = choice.delta
                    if delta is not None and delta.content:
                        yield TextDelta(delta.content)
                    for piece in (delta.tool_calls if delta is not None else None) or ():
                        _merge(partials, piece)
                    finish = choice.finish_reason or finish
        except api_error as exc:
            raise ModelError(f"{where}: {one_line(str(exc))}") from exc
        finally:
            await stream.close()
        for n, index in enumerate(sorted(partials)):
            part = partials[index]
            args, error = parse_arguments(part.arguments)
            yield ToolCallReady(ToolCall(part.id or f"call_{n}", part.name, args, error))
        yield Stop(finish or ("tool_calls" if partials else "stop"))


def _api_error() -> type[Exception]:
    try:
        import openai
    except ImportError:  # an injected client without the package: nothing to translate
        return _NoError
    return openai.APIError


class _NoError(Exception):
    pass


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
