"""Recording what an agent does, as a session file: the runtime's ``TurnRecorder``.

Input: the calls an :class:`~skillbook.runtime.agent.Agent` makes on its recorder
(``Agent(..., recorder=SessionRecorder(store))``). Output: ``<state dir>/sessions/<id>.jsonl``
(:mod:`skillbook.experience.record` describes the lines), rewritten atomically after
each tool call and at the end, and :attr:`SessionRecorder.last`, the finished record.

Every secret skillbook knows of is redacted, by one
:class:`~skillbook.experience.redaction.Redactor` (its module lists them: configured
``apiKey`` values and secret ``env`` values of every skill entry, the environment's
sensitive variables such as ``OPENAI_API_KEY``, registry tokens, the model's key) plus
the secret variables of each skill's environment a command ran with (what ``ExecTool``
redacts from its output). Every string of the session is redacted, however the value got
there: the request, the model's text, arguments (a key the model typed) and results (a
key a command printed). Only the names of secret variables are kept, so a replay can ask
the environment for them.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from skillbook.experience.hints import builtin_hints, tool_hints
from skillbook.experience.record import (
    Clock,
    Outcome,
    SessionRecord,
    Step,
    ToolEntry,
    iso,
    utc_now,
)
from skillbook.experience.redaction import (
    Redactor,
    known_secrets,
    model_secrets,
)
from skillbook.experience.store import SessionStore, new_session_id
from skillbook.runtime.env import is_sensitive
from skillbook.runtime.tools import ExecTool, ToolResult
from skillbook.runtime.turn import (
    InvokeResult,
    ToolDeclined,
    ToolFinished,
    ToolStarted,
    TurnEnded,
    TurnResult,
)

if TYPE_CHECKING:
    from skillbook.runtime._proc import Plan
    from skillbook.runtime.providers.base import ToolCall
    from skillbook.runtime.recording import RecordedAgent
    from skillbook.runtime.turn import AgentEvent

__all__ = ["SessionRecorder"]

_log = logging.getLogger("skillbook.experience")


class SessionRecorder:
    """Writes each request of an agent as a session; see the module docstring.

    ``on_end`` is called with each finished record (after it is saved); ``conversation``
    links the requests of one chat. ``keep`` and ``max_age_days`` prune old sessions
    after each save (``None``: keep all). ``secrets`` are more values to redact, beyond
    those :func:`~skillbook.experience.redaction.known_secrets` finds.
    """

    def __init__(
        self,
        store: SessionStore,
        *,
        conversation: str | None = None,
        keep: int | None = None,
        max_age_days: int | None = None,
        on_end: Callable[[SessionRecord], object] | None = None,
        clock: Clock = utc_now,
        secrets: Iterable[str] = (),
    ) -> None:
        self.store = store
        self.secrets = tuple(secrets)
        self.conversation = conversation
        self.keep = keep
        self.max_age_days = max_age_days
        self.on_end = on_end
        self.clock = clock
        #: The last finished session, redacted as saved.
        self.last: SessionRecord | None = None
        self._record: SessionRecord | None = None
        self._agent: RecordedAgent | None = None
        self._tools: dict[str, ToolEntry] = {}
        self._clocks: dict[str, float] = {}
        self._skill_of: dict[str, str | None] = {}
        self._approvals: dict[str, bool] = {}
        self._redactor = Redactor()

    # ------------------------------------------------------------------ TurnRecorder

    def begin(self, text: str, agent: RecordedAgent) -> None:
        book = agent.book
        now = self.clock()
        self._agent = agent
        self._tools, self._clocks, self._approvals, self._skill_of = {}, {}, {}, {}
        self._redactor = _redactor_for(agent, self.secrets)
        self._record = SessionRecord(
            id=new_session_id(now),
            started=iso(now),
            request=text,
            workspace=str(book.workspace) if book.workspace is not None else None,
            agent=book.agent,
            mode=str(book.mode),
            model=agent.model.name if agent.model is not None else None,
            conversation=self.conversation,
        )
        self._save()

    def event(self, event: AgentEvent) -> None:
        if self._record is None:
            return
        if isinstance(event, ToolStarted):
            self._clocks[event.call.id] = time.monotonic()
            self._skill_of[event.call.id] = event.skill
        elif isinstance(event, ToolFinished):
            self._finished(event)
            self._save()
        elif isinstance(event, ToolDeclined):
            self._tools[event.call.id] = ToolEntry(
                call_id=event.call.id,
                name=event.call.name,
                arguments=dict(event.call.arguments),
                skill=event.skill,
                result=event.message,
                is_error=True,
                declined=True,
                approved=self._approvals.get(event.call.id),
            )
            self._note_skill(event.skill)
            self._save()
        elif isinstance(event, TurnEnded):
            self._steps_from(event.result)

    def approval(self, call: ToolCall, approved: bool) -> None:
        self._approvals[call.id] = approved
        entry = self._tools.get(call.id)
        if entry is not None:
            self._tools[call.id] = replace(entry, approved=approved)

    def end(self, result: InvokeResult | TurnResult | None, error: BaseException | None) -> None:
        if self._record is None:
            return
        ended = iso(self.clock())
        turn = result.turn if isinstance(result, InvokeResult) else result
        if isinstance(turn, TurnResult):
            self._steps_from(turn)
            outcome = Outcome(turn.stop, turn.final_text, None, ended)
        elif isinstance(result, InvokeResult):
            message = result.text if result.is_error else None
            outcome = Outcome("dispatched", result.text, message, ended)
        elif error is not None and not isinstance(error, Exception):
            outcome = Outcome("cancelled", "", type(error).__name__, ended)
        else:
            outcome = Outcome("error", "", f"{type(error).__name__}: {error}", ended)
        self._record = replace(self._record, outcome=outcome)
        record = self._save()
        self._record = None
        self.last = record
        if self.keep is not None or self.max_age_days is not None:
            self.store.prune(
                keep=self.keep if self.keep is not None else 1 << 30,
                max_age_days=self.max_age_days if self.max_age_days is not None else 1 << 20,
                now=self.clock(),
            )
        if self.on_end is not None:
            self.on_end(record)

    # ------------------------------------------------------------------ internals

    def _finished(self, event: ToolFinished) -> None:
        call, result = event.call, event.result
        agent = self._agent
        assert agent is not None
        tool = next((t for t in agent.tools if t.name == call.name), None)
        skill = self._skill_of.pop(call.id, None)
        cwd: str | None = None
        shell: str | None = None
        env: dict[str, str] = {}
        secret_env: tuple[str, ...] = ()
        if isinstance(tool, ExecTool) and call.error is None:
            plan = tool.plan(call.arguments)
            if not isinstance(plan, ToolResult):
                cwd, env, secret_env = _plan_parts(tool, plan, self._redactor)
                shell = plan.argv[0]
        started = self._clocks.pop(call.id, None)
        self._tools[call.id] = ToolEntry(
            call_id=call.id,
            name=call.name,
            arguments=dict(call.arguments),
            skill=skill,
            result=result.text,
            is_error=result.is_error,
            approved=self._approvals.get(call.id),
            cwd=cwd,
            shell=shell,
            env=env,
            secret_env=secret_env,
            hints=(*builtin_hints(call, skill=skill, cwd=cwd), *tool_hints(tool, call, result)),
            duration_ms=int((time.monotonic() - started) * 1000) if started is not None else None,
        )
        self._note_skill(skill)

    def _note_skill(self, name: str | None) -> None:
        if not name or self._record is None or name in self._record.skills:
            return
        agent = self._agent
        assert agent is not None
        found = next((s for s in agent.book.skills if name in (s.name, s.skill_key)), None)
        if found is not None:
            skills = {**self._record.skills, name: str(found.base_dir)}
            self._record = replace(self._record, skills=skills)

    def _steps_from(self, turn: TurnResult) -> None:
        messages = list(turn.messages)
        start = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
        steps: list[Step] = []
        for message in messages[start + 1 :]:
            if message.role == "assistant":
                steps.append(
                    Step(len(steps) + 1, message.content, tuple(c.id for c in message.tool_calls))
                )
        step_of = {call: s.n for s in steps for call in s.calls}
        self._tools = {k: replace(t, step=step_of.get(k, t.step)) for k, t in self._tools.items()}
        assert self._record is not None
        self._record = replace(self._record, steps=tuple(steps))

    def _save(self) -> SessionRecord:
        assert self._record is not None
        record = replace(self._record, tools=tuple(self._tools.values()))
        lines = [self._redactor.value(line) for line in record.to_lines()]
        clean = SessionRecord.from_lines(lines, self.store.path(record.id))
        try:
            self.store.save(clean)
        except OSError as exc:  # a full disk must not end the user's turn
            _log.warning("cannot write session %s: %s", record.id, exc)
        return clean


def _exec_tool(agent: RecordedAgent) -> ExecTool | None:
    return next((t for t in agent.tools if isinstance(t, ExecTool)), None)


def _redactor_for(agent: RecordedAgent, extra: Iterable[str]) -> Redactor:
    """Every secret the agent's book, environment, exec tool and model know of."""
    book = agent.book
    tool = _exec_tool(agent)
    base: Mapping[str, str] = os.environ if tool is None or tool.base_env is None else tool.base_env
    values = [v for k, v in base.items() if is_sensitive(k)]
    return known_secrets(
        book.config,
        base,
        home=book.paths.home,
        skills=book.skills,
        resolver=tool.resolver if tool is not None else None,
        extra=[*extra, *values, *model_secrets(agent.model)],
    )


def _plan_parts(
    tool: ExecTool, plan: Plan, redactor: Redactor
) -> tuple[str, dict[str, str], tuple[str, ...]]:
    """Where a command ran, the non-secret variables its skill added, and the names of
    the secret ones (the command's secret values join ``redactor``, whatever their
    length, as ``exec`` redacts them)."""
    values = tuple(v for v in plan.secrets if v)
    redactor.add(values, min_chars=1)
    base: Mapping[str, str] = os.environ if tool.base_env is None else tool.base_env
    secret_keys = tuple(
        sorted(
            k for k, v in plan.env.items() if v in values or (base.get(k) != v and v in redactor)
        )
    )
    env = {
        k: v
        for k, v in plan.env.items()
        if base.get(k) != v and k not in secret_keys and not is_sensitive(k)
    }
    return str(plan.cwd), env, secret_keys
