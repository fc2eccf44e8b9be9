"""A :class:`ChatModel` over Anthropic's messages API, streamed, with tool use.

Input: skillbook :class:`Message` values, tools and a system prompt. Output: the
events of :mod:`skillbook.runtime.providers.base`. Uses the official ``anthropic``
package (imported when a model is made) with ``stream=True`` and reads the raw
server-sent events: ``content_block_start`` opens a text or ``tool_use`` block,
``content_block_delta`` carries ``text_delta`` or ``input_json_delta`` pieces,
``content_block_stop`` closes it (a tool call is emitted there), ``message_delta``
holds the stop reason.

Tool results travel as ``tool_result`` blocks in a user message; consecutive
messages of one role are merged, since the API expects user and assistant turns to
alternate.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

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

INSTALL_HINT = 'the anthropic package is not installed: pip install "skillbook[anthropic]"'
#: The messages API requires a cap on the answer length.
DEFAULT_MAX_TOKENS: Final = 4096


def anthropic_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The ``messages`` array of a messages-API request (the system prompt goes apart)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        role, blocks = _blocks(m)
        if not blocks:
            continue  # an empty assistant turn is refused by the API
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


def _blocks(m: Message) -> tuple[str, list[dict[str, Any]]]:
    if m.role == "tool":
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": m.tool_call_id,
            "content": m.content,
        }
        if m.is_error:
            block["is_error"] = True
        return "user", [block]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
    if m.role == "assistant":
        blocks.extend(
            {"type": "tool_use", "id": c.id, "name": c.name, "input": dict(c.arguments)}
            for c in m.tool_calls
        )
    return m.role, blocks


@dataclass(slots=True)
class _Block:
    id: str
    name: str
    json: str = ""
    start_input: Any = None


class AnthropicModel:
    """``model`` on Anthropic's API (or a compatible ``base_url``, without ``/v1``)."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: Any | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.max_tokens = max_tokens
        self.temperature = temperature
        if client is None:
            try:
                import anthropic
            except ImportError as exc:
                raise ModelNotConfigured(INSTALL_HINT, code="missing-package") from exc
            client = anthropic.AsyncAnthropic(api_key=api_key, base_url=base_url)
        self.client = client

    @property
    def name(self) -> str:
        return self.model

    def _request(
        self, messages: Sequence[Message], tools: Sequence[Tool], system: str
    ) -> dict[str, Any]:
        from skillbook.runtime.tools import anthropic_tool_spec

        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": anthropic_messages(messages),
            "stream": True,
        }
        if system:
            request["system"] = system
        if tools:
            request["tools"] = [anthropic_tool_spec(t) for t in tools]
        if self.temperature is not None:
            request["temperature"] = self.temperature
        return request

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[Tool], system: str
    ) -> AsyncIterator[ModelEvent]:
        api_error = _api_error()
        request = self._request(messages, tools, system)
        where = self.base_url or "api.anthropic.com"
        try:
            stream = await self.client.messages.create(**request)
        except api_error as exc:
            raise ModelError(f"{where}: {one_line(str(exc))}") from exc
        blocks: dict[int, _Block] = {}
        stop: str | None = None
        try:
            async for event in stream:
                kind = getattr(event, "type", None)
                if kind == "content_block_start":
                    cb = event.content_block
                    if getattr(cb, "type", None) == "tool_use":
                        blocks[event.index] = _Block(cb.id, cb.name, "", cb.input)
                    elif getattr(cb, "type", None) == "text" and cb.text:
                        yield TextDelta(cb.text)
                elif kind == "content_block_delta":
                    delta = event.delta
                    if delta.type == "text_delta" and delta.text:
                        yield TextDelta(delta.text)
                    elif delta.type == "input_json_delta" and event.index in blocks:
                        blocks[event.index].json += delta.partial_json
                elif kind == "content_block_stop" and event.index in blocks:
                    yield ToolCallReady(_finish(blocks.pop(event.index)))
                elif kind == "message_delta":
                    stop = event.delta.stop_reason or stop
        except api_error as exc:
            raise ModelError(f"{where}: {one_line(str(exc))}") from exc
        finally:
            await stream.close()
        for index in sorted(blocks):  # a stream cut before content_block_stop
            yield ToolCallReady(_finish(blocks[index]))
        yield Stop(stop or "end_turn")


def _finish(block: _Block) -> ToolCall:
    if block.json:
        args, error = parse_arguments(block.json)
    elif isinstance(block.start_input, dict):
        args, error = dict(block.start_input), None
    else:
        args, error = {}, None
    return ToolCall(block.id, block.name, args, error)


def _api_error() -> type[Exception]:
    try:
        import anthropic
    except ImportError:  # an injected client without the package: nothing to translate
        return _NoError
    return anthropic.APIError


class _NoError(Exception):
    pass
