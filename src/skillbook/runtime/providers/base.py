"""The values an agent loop and a chat model exchange, independent of any vendor API.

Input to a model: the system prompt, the conversation as :class:`Message` values and
the tools (:class:`skillbook.runtime.tools.Tool`). Output of a model's ``stream``: an
async iterator of :data:`ModelEvent` — :class:`TextDelta` pieces of the answer,
:class:`ToolCallReady` for each complete tool call, then one :class:`Stop`.
Provider modules translate these to and from the wire formats; nothing here does I/O.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from skillbook.runtime.tools import Tool, ToolResult

Role = Literal["user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call the model asked for."""

    id: str
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    #: Why the arguments could not be read (the model sent bad JSON), else None.
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "name": self.name, "arguments": dict(self.arguments)}
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass(frozen=True, slots=True)
class Message:
    """One entry of a conversation, in the shape every provider can translate."""

    role: Role
    content: str = ""
    #: For ``assistant``: the tool calls it made.
    tool_calls: tuple[ToolCall, ...] = ()
    #: For ``tool``: the call this result answers, the tool's name, and whether it failed.
    tool_call_id: str | None = None
    name: str | None = None
    is_error: bool = False

    @classmethod
    def user(cls, text: str) -> Message:
        return cls("user", text)

    @classmethod
    def assistant(cls, text: str, calls: Sequence[ToolCall] = ()) -> Message:
        return cls("assistant", text, tuple(calls))

    @classmethod
    def tool_result(cls, call: ToolCall, result: ToolResult) -> Message:
        return cls("tool", result.text, (), call.id, call.name, result.is_error)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["toolCalls"] = [c.to_json() for c in self.tool_calls]
        if self.role == "tool":
            out["toolCallId"] = self.tool_call_id
            out["name"] = self.name
            out["isError"] = self.is_error
        return out


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the answer text, as it streams in."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallReady:
    """A tool call whose name and arguments are complete."""

    call: ToolCall


@dataclass(frozen=True, slots=True)
class Stop:
    """The end of one model response: the provider's stop reason."""

    reason: str


ModelEvent = TextDelta | ToolCallReady | Stop


@runtime_checkable
class ChatModel(Protocol):
    """A streaming chat model with tool use."""

    @property
    def name(self) -> str:
        """The model id, for display."""
        ...

    def stream(
        self, messages: Sequence[Message], tools: Sequence[Tool], system: str
    ) -> AsyncIterator[ModelEvent]: ...


def parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """Tool-call arguments from their JSON text: ``(args, None)`` or ``({}, why not)``."""
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return {}, f"the arguments are not valid JSON ({exc.msg} at position {exc.pos})"
    if not isinstance(value, dict):
        return {}, f"the arguments must be a JSON object, got {type(value).__name__}"
    return value, None


def one_line(text: str, limit: int = 500) -> str:
    """An error text on one line, cut to ``limit`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
