"""A :class:`ChatModel` that plays back a script: for tests and demos, no network.

Input: a list of turns, one per model call. A turn is answer text (``str``), a
:class:`ToolCall` or a sequence of them, a :class:`ScriptedTurn` (text and calls), an
exception instance (raised, to simulate a failing API), or a function that receives
the :class:`ScriptedRequest` and returns one of those (to answer from what the
model was sent). Output: the same events a real provider streams, text cut into
small pieces. Every request is recorded in :attr:`ScriptedModel.requests`.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from skillbook.runtime import ModelError
from skillbook.runtime.providers.base import (
    Message,
    ModelEvent,
    Stop,
    TextDelta,
    ToolCall,
    ToolCallReady,
)

if TYPE_CHECKING:
    from skillbook.runtime.tools import Tool

DEFAULT_CHUNK_CHARS: Final = 8


@dataclass(frozen=True, slots=True)
class ScriptedTurn:
    """One model response: optional text, then optional tool calls."""

    text: str = ""
    calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True, slots=True)
class ScriptedRequest:
    """What the model was sent on one call."""

    messages: tuple[Message, ...]
    tools: tuple[str, ...]
    system: str
    #: The tools' declared schemas by name.
    schemas: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def last(self) -> Message:
        return self.messages[-1]


Turn: TypeAlias = (
    "str | ToolCall | Sequence[ToolCall] | ScriptedTurn | BaseException "
    "| Callable[[ScriptedRequest], Turn]"
)


def call(name: str, id: str | None = None, /, **arguments: Any) -> ToolCall:
    """A :class:`ToolCall` for scripts: ``call("exec", command="ls")``."""
    return ToolCall(id or "", name, arguments)


class ScriptedModel:
    """Plays ``turns`` in order; raises :class:`ModelError` when the script runs out."""

    def __init__(
        self,
        turns: Iterable[Turn],
        *,
        name: str = "scripted",
        chunk_chars: int = DEFAULT_CHUNK_CHARS,
        delay_s: float = 0.0,
    ) -> None:
        self._turns = list(turns)
        self._name = name
        self.chunk_chars = max(1, chunk_chars)
        #: Pause before each text piece (lets tests cancel a turn mid-stream).
        self.delay_s = delay_s
        self.requests: list[ScriptedRequest] = []
        self._ids = itertools.count(1)

    @property
    def name(self) -> str:
        return self._name

    @property
    def remaining(self) -> int:
        return len(self._turns)

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[Tool], system: str
    ) -> AsyncIterator[ModelEvent]:
        request = ScriptedRequest(
            tuple(messages),
            tuple(t.name for t in tools),
            system,
            {t.name: t.schema for t in tools},
        )
        self.requests.append(request)
        if not self._turns:
            raise ModelError(f"scripted model: no turn left for request {len(self.requests)}")
        turn = _normalize(self._turns.pop(0), request)
        for start in range(0, len(turn.text), self.chunk_chars):
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
            yield TextDelta(turn.text[start : start + self.chunk_chars])
        for c in turn.calls:
            yield ToolCallReady(c if c.id else ToolCall(f"call_{next(self._ids)}", *_rest(c)))
        yield Stop("tool_calls" if turn.calls else "stop")


def _rest(c: ToolCall) -> tuple[str, Mapping[str, Any], str | None]:
    return c.name, c.arguments, c.error


def _normalize(turn: Turn, request: ScriptedRequest) -> ScriptedTurn:
    for _ in range(100):  # a function may return another function; not forever
        if isinstance(turn, BaseException):
            raise turn
        if isinstance(turn, ScriptedTurn):
            return turn
        if isinstance(turn, str):
            return ScriptedTurn(turn)
        if isinstance(turn, ToolCall):
            return ScriptedTurn("", (turn,))
        if callable(turn):
            turn = turn(request)
            continue
        return ScriptedTurn("", tuple(turn))
    raise ModelError("scripted model: a turn function kept returning functions")
