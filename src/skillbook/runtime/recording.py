"""The hook through which an :class:`~skillbook.runtime.agent.Agent` reports a session.

The recorder seam: the agent calls a :class:`TurnRecorder` and shows it a
:class:`RecordedAgent`; both are protocols, so this module imports neither the agent
loop nor the experience engine, only the turn's values (:mod:`skillbook.runtime.turn`).

Input: what happens in one :meth:`Agent.invoke` or :meth:`Agent.run_turn` call (the
request, every agent event, each approval the user gave or refused, the result or the
exception that ended it). Output: calls on a :class:`TurnRecorder`, which may write
them anywhere; :class:`skillbook.experience.recorder.SessionRecorder` writes them as a
session file. The runtime knows only this protocol, never the experience engine.

A recorder that raises never stops a turn: its exception is logged and the turn goes on.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from skillbook.pipeline.book import SkillBook
    from skillbook.runtime.providers.base import ChatModel, ToolCall
    from skillbook.runtime.tools import Tool
    from skillbook.runtime.turn import AgentEvent, InvokeResult, TurnResult

__all__ = ["RecordedAgent", "TurnRecorder", "notify", "recording_approver"]

_log = logging.getLogger("skillbook.agent")


class RecordedAgent(Protocol):
    """What a recorder may read of the agent running a request (an ``Agent`` is one)."""

    @property
    def book(self) -> SkillBook:
        """The skill book the request runs over."""
        ...

    @property
    def model(self) -> ChatModel | None:
        """The chat model, None when only commands run."""
        ...

    @property
    def tools(self) -> tuple[Tool, ...]:
        """The tools the model may call."""
        ...


@runtime_checkable
class TurnRecorder(Protocol):
    """Receives one request at a time, from :meth:`begin` to :meth:`end`."""

    def begin(self, text: str, agent: RecordedAgent) -> None:
        """A request starts: the text the user sent, and the agent that runs it."""
        ...

    def event(self, event: AgentEvent) -> None:
        """Every event the agent emits while the request runs."""
        ...

    def approval(self, call: ToolCall, approved: bool) -> None:
        """The user was asked about ``call`` and said yes (``approved``) or no."""
        ...

    def end(self, result: InvokeResult | TurnResult | None, error: BaseException | None) -> None:
        """The request ended with ``result``, or with ``error`` (cancelled, model failure)."""
        ...


def notify(recorder: TurnRecorder | None, method: str, *args: Any) -> None:
    """Call ``recorder.<method>(*args)``; a failing recorder is logged, never raised."""
    if recorder is None:
        return
    try:
        getattr(recorder, method)(*args)
    except Exception as exc:  # recording must never break the turn it records
        _log.warning("the session recorder failed in %s", method, exc_info=exc)


def recording_approver(
    approve: Callable[[ToolCall], Awaitable[bool] | bool], recorder: TurnRecorder
) -> Callable[[ToolCall], Awaitable[bool]]:
    """``approve`` that also tells ``recorder`` what the user answered."""

    async def asked(call: ToolCall) -> bool:
        try:
            outcome = approve(call)
            if inspect.isawaitable(outcome):
                outcome = await outcome
        except BaseException:
            notify(recorder, "approval", call, False)
            raise
        notify(recorder, "approval", call, outcome is True)
        return outcome is True

    return asked
