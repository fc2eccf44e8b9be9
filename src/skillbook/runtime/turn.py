"""What one request to the agent produces: its events as they happen, and its result.

Output of :class:`~skillbook.runtime.agent.Agent`: while a turn runs, :data:`AgentEvent`
values (text as it streams, each tool call started, finished or declined, the turn's
end) for user interfaces and recorders; when it ends, a :class:`TurnResult` (a model
turn) or an :class:`InvokeResult` (one user message: a turn, or a command dispatched
without the model). Plain values: the agent loop and the
:class:`~skillbook.runtime.recording.TurnRecorder` seam both stand on this module.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from skillbook.pipeline.commands.invocation import Invocation
from skillbook.runtime.approval import DECLINED_RESULT
from skillbook.runtime.providers.base import Message, TextDelta, ToolCall
from skillbook.runtime.tools import ToolResult

__all__ = [
    "AgentEvent",
    "EventHandler",
    "InvokeResult",
    "ToolDeclined",
    "ToolFinished",
    "ToolRun",
    "ToolStarted",
    "TurnEnded",
    "TurnResult",
]


@dataclass(frozen=True, slots=True)
class ToolRun:
    """A tool call and what it returned; ``skill`` is the skill it read or ran as."""

    call: ToolCall
    result: ToolResult
    skill: str | None = None
    #: The call never ran: the user declined it or the exec policy refused it.
    declined: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            **self.call.to_json(),
            "skill": self.skill,
            "isError": self.result.is_error,
            "declined": self.declined,
            "result": self.result.text,
        }


@dataclass(frozen=True, slots=True)
class TurnResult:
    final_text: str
    #: Model calls made.
    steps: int
    tool_calls: tuple[ToolRun, ...]
    #: The whole conversation after the turn: pass it as the next turn's history.
    messages: tuple[Message, ...]
    #: ``answer`` (the model answered) or ``max-steps``.
    stop: str = "answer"
    #: What the agent added to the model's text (the step-limit note), else "".
    note: str = ""


@dataclass(frozen=True, slots=True)
class InvokeResult:
    """One :meth:`Agent.invoke`: the reply text and how it came about."""

    text: str
    invocation: Invocation | None = None
    #: True when a command ran without the model (``command-dispatch: tool`` or
    #: ``commandExec``).
    dispatched: bool = False
    is_error: bool = False
    turn: TurnResult | None = None
    tool_run: ToolRun | None = None

    @property
    def messages(self) -> tuple[Message, ...]:
        return self.turn.messages if self.turn is not None else ()


@dataclass(frozen=True, slots=True)
class ToolStarted:
    """A tool call is about to run; ``target`` is the path read or the command run."""

    call: ToolCall
    skill: str | None
    target: str


@dataclass(frozen=True, slots=True)
class ToolFinished:
    call: ToolCall
    result: ToolResult


@dataclass(frozen=True, slots=True)
class ToolDeclined:
    """A model's ``exec`` call did not run (no start/finish events): the user declined
    it (``asked``), or the policy refused it with no one to ask."""

    call: ToolCall
    skill: str | None
    target: str
    #: The tool error the model got.
    message: str = DECLINED_RESULT
    asked: bool = True


@dataclass(frozen=True, slots=True)
class TurnEnded:
    result: TurnResult


AgentEvent = TextDelta | ToolStarted | ToolFinished | ToolDeclined | TurnEnded
EventHandler = Callable[[AgentEvent], "Awaitable[None] | None"]
