"""``exec`` that asks first: a runtime tool whose model calls go through the approval.

Input: an ``exec`` tool (skillbook's :class:`~skillbook.runtime.tools.ExecTool`, or any
tool of that name), an :class:`~skillbook.runtime.approval.ExecPolicy` and an approver
or none. Output: a :class:`GatedTool` with the same name, description and schema whose
``run``/``arun`` first ask :func:`~skillbook.runtime.approval.decide` (sync:
:func:`~skillbook.runtime.approval.decide_sync`) and, when the command may not run,
return the refusal as a tool error the model sees, without running anything.

This is what the framework adapters hand their framework instead of a bare ``exec``,
so a model driven by the OpenAI Agents SDK, PydanticAI or LangChain gets the safe
default of skillbook's own :class:`~skillbook.runtime.agent.Agent`: nothing runs
without the user's approval or a policy that allows it. A command the user typed
(a slash command) is not the model's: slash-command dispatch runs :attr:`GatedTool.inner`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skillbook.runtime.approval import (
    REFUSED_NO_APPROVER_RESULT,
    Approver,
    Decision,
    ExecPolicy,
    decide,
    decide_sync,
)
from skillbook.runtime.providers.base import ToolCall
from skillbook.runtime.tools import ExecTool, Tool, ToolResult

if TYPE_CHECKING:
    from skillbook.config.file import Config
    from skillbook.model import Skill

__all__ = ["ExecGate", "GatedTool", "gate_exec", "is_exec", "ungated"]

_log = logging.getLogger("skillbook.agent")


@dataclass(frozen=True, slots=True)
class ExecGate:
    """Who decides whether a model's command runs: ``policy``, then ``approve``.

    Frameworks run a step's tool calls concurrently (LangChain's sync tools on a thread
    pool); the approver is asked about one command at a time, so questions never overlap.
    """

    policy: ExecPolicy
    #: The skills a call may run as (``skill`` names one; its allowlist applies).
    skills: tuple[Skill, ...] = ()
    approve: Approver | None = None
    _thread_lock: threading.Lock = field(
        default_factory=threading.Lock, init=False, repr=False, compare=False
    )
    #: One lock per event loop (an asyncio lock belongs to the loop that first used it).
    _loop_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = field(
        default_factory=weakref.WeakKeyDictionary, init=False, repr=False, compare=False
    )

    def _call(self, args: Mapping[str, Any], call_id: str | None) -> ToolCall:
        return ToolCall(call_id or "", ExecTool.name, dict(args))

    async def adecide(self, args: Mapping[str, Any], *, call_id: str | None = None) -> Decision:
        call = self._call(args, call_id)
        loop = asyncio.get_running_loop()
        lock = self._loop_locks.setdefault(loop, asyncio.Lock())
        async with lock:
            return await decide(
                self.policy, call, self.skills, self.approve, unasked=REFUSED_NO_APPROVER_RESULT
            )

    def decide(self, args: Mapping[str, Any], *, call_id: str | None = None) -> Decision:
        call = self._call(args, call_id)
        with self._thread_lock:
            return decide_sync(
                self.policy, call, self.skills, self.approve, unasked=REFUSED_NO_APPROVER_RESULT
            )


class GatedTool:
    """An ``exec`` tool whose calls are decided by an :class:`ExecGate` before they run."""

    def __init__(self, inner: Tool, gate: ExecGate) -> None:
        #: The tool that runs an approved command (and a user's slash command, unasked).
        self.inner = inner
        self.gate = gate

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def description(self) -> str:
        return self.inner.description

    @property
    def schema(self) -> dict[str, Any]:
        return self.inner.schema

    def run(self, args: Mapping[str, Any], *, call_id: str | None = None) -> ToolResult:
        if _has_command(args):
            decision = self.gate.decide(args, call_id=call_id)
            if not decision.run:
                return _refused(decision)
        return self.inner.run(args)

    async def arun(self, args: Mapping[str, Any], *, call_id: str | None = None) -> ToolResult:
        if _has_command(args):
            decision = await self.gate.adecide(args, call_id=call_id)
            if not decision.run:
                return _refused(decision)
        return await self.inner.arun(args)


def _has_command(args: Mapping[str, Any]) -> bool:
    # Without a command string nothing can run: the tool itself reports the bad call.
    return isinstance(args, Mapping) and isinstance(args.get("command"), str)


def _refused(decision: Decision) -> ToolResult:
    _log.info("exec not run (%s): %s", decision.reason, decision.message)
    return ToolResult(decision.message, is_error=True)


def is_exec(tool: Tool) -> bool:
    """Whether ``tool`` runs commands: skillbook's ``exec`` or any tool of that name."""
    return isinstance(tool, ExecTool | GatedTool) or tool.name == ExecTool.name


def gate_exec(
    tool: Tool,
    *,
    exec_policy: ExecPolicy | None = None,
    approve: Approver | None = None,
    config: Config | None = None,
    skills: Iterable[Skill] | None = None,
) -> Tool:
    """``tool`` gated when it runs commands (:func:`is_exec`), else ``tool`` unchanged.

    ``exec_policy`` defaults to ``skills.exec`` of ``config`` (an ``ExecTool``'s own
    config when ``config`` is None); ``skills`` to the ``ExecTool``'s skills. A tool
    gated already is returned as it is.
    """
    if isinstance(tool, GatedTool) or not is_exec(tool):
        return tool
    if config is None and isinstance(tool, ExecTool):
        config = tool.config
    if skills is None:
        skills = tool.skills if isinstance(tool, ExecTool) else ()
    if exec_policy is None:
        exec_policy = ExecPolicy.from_config(config) if config is not None else ExecPolicy()
    return GatedTool(tool, ExecGate(exec_policy, tuple(skills), approve))


def ungated(tool: Tool) -> Tool:
    """The tool a user's own slash command runs: a gated tool's inner one."""
    return tool.inner if isinstance(tool, GatedTool) else tool
