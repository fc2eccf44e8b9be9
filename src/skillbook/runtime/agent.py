"""A small tool-using agent loop over a skill book: the model reads skills and runs them.

Input: a :class:`~skillbook.pipeline.book.SkillBook` (or a
:class:`~skillbook.runtime.session.SkillSession`, refreshed at each turn's start), a
:class:`~skillbook.runtime.providers.ChatModel` and tools (default: ``read`` and
``exec`` over the book's eligible skills). Output:
:class:`~skillbook.runtime.turn.TurnResult` values and, while a turn runs,
:data:`~skillbook.runtime.turn.AgentEvent` values for user interfaces.

The system prompt is the base instructions, a newline, and the book's
``## Skills (mandatory)`` section (§5.5; left out when no skill is in the catalog).
A turn streams the model, runs the tool calls it asks for (several in one step run
concurrently), feeds the results back and repeats until the model answers without
tools or ``max_steps`` model calls were made. Cancelling the task cancels the model
stream and the tools; ``exec`` kills its process group, so nothing is left running.
Each ``exec`` call the model makes goes through :func:`skillbook.runtime.approval.decide`
first: the configured policy (``skills.exec``: allowlists, ``ask``, ``allowlist`` or
``allow``) runs or refuses it, else ``approve`` (the user) is asked and only True runs
it. With no ``approve`` a command no policy allows is refused: the model gets a tool
error (:data:`DECLINED_RESULT` when the user said no), never an exception.

:meth:`Agent.invoke` handles one user message as a chat front end would (§6.4–6.5): a
slash command whose skill has ``command-dispatch: tool`` calls that tool directly with
the raw arguments and no model; one whose skill names its own command
(``metadata.skillbook.commandExec``, :mod:`skillbook.pipeline.commands.dispatch`) runs it through ``exec``
with the arguments as ``$1``, also with no model; another slash command is rewritten
for the model.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import logging
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar

from skillbook.pipeline.commands import invocation as slash
from skillbook.pipeline.commands.dispatch import ExecDispatch, command_dispatch
from skillbook.pipeline.commands.invocation import Invocation, resolve_invocation, rewrite_for_model
from skillbook.pipeline.commands.specs import CommandSet
from skillbook.runtime import ModelNotConfigured
from skillbook.runtime.approval import Approver, Decision, ExecPolicy, decide
from skillbook.runtime.providers.base import (
    ChatModel,
    Message,
    TextDelta,
    ToolCall,
    ToolCallReady,
)
from skillbook.runtime.recording import TurnRecorder, notify, recording_approver
from skillbook.runtime.tools import ExecTool, ReadTool, Tool, ToolResult
from skillbook.runtime.turn import (
    AgentEvent,
    EventHandler,
    InvokeResult,
    ToolDeclined,
    ToolFinished,
    ToolRun,
    ToolStarted,
    TurnEnded,
    TurnResult,
)

if TYPE_CHECKING:
    from skillbook.model import Skill
    from skillbook.pipeline.book import SkillBook
    from skillbook.runtime.session import SkillSession
    from skillbook.selection.plan import SelectionPlan, TurnBlock

__all__ = [
    "DEFAULT_INSTRUCTIONS",
    "DEFAULT_MAX_STEPS",
    "Agent",
    "default_tools",
    "dispatch_arguments",
]

_log = logging.getLogger("skillbook.agent")
_T = TypeVar("_T")

DEFAULT_MAX_STEPS: Final = 12
DEFAULT_INSTRUCTIONS: Final = (
    "You are a helpful assistant working through tools on the user's machine.\n"
    "Use `read` to open skill files and `exec` to run shell commands; when running a "
    "skill's command, pass `skill` so it runs in that skill's folder with its configured "
    "environment.\n"
    "Report what commands returned faithfully, and answer concisely."
)
DONE_TEXT: Final = "✅ Done."
STEP_LIMIT_RESULT: Final = "not run: the agent reached its step limit"


def command_call_id() -> str:
    """A tool-call id for a call no model made (OpenClaw: ``cmd_`` + 8 hex digits)."""
    return f"cmd_{os.urandom(4).hex()}"


def default_tools(
    book: SkillBook, *, env: Mapping[str, str] | None = None
) -> tuple[ReadTool, ExecTool]:
    """``read`` and ``exec`` over the book's eligible skills."""
    skills = book.eligible
    return (
        ReadTool(
            skills,
            home=book.paths.home,
            other_homes=(book.paths.os_home,),
            workspace=book.workspace,
            fetch_missing=book.fetcher(),
        ),
        ExecTool(skills, config=book.config, base_env=env, workspace=book.workspace),
    )


def dispatch_arguments(tool: Tool, invocation: Invocation) -> dict[str, Any]:
    """The arguments a ``command-dispatch: tool`` command calls ``tool`` with
    (:func:`skillbook.pipeline.commands.invocation.dispatch_arguments` for the tool's schema)."""
    return slash.dispatch_arguments(tool.schema, invocation)


class Agent:
    """Runs turns of a model with tools over one skill book or session."""

    def __init__(
        self,
        book_or_session: SkillBook | SkillSession,
        model: ChatModel | None,
        *,
        base_instructions: str = DEFAULT_INSTRUCTIONS,
        tools: Sequence[Tool] | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
        read_tool_name: str = "read",
        on_event: EventHandler | None = None,
        env: Mapping[str, str] | None = None,
        reserved_commands: Iterable[str] | None = None,
        approve: Approver | None = None,
        exec_policy: ExecPolicy | None = None,
        recorder: TurnRecorder | None = None,
    ) -> None:
        from skillbook.pipeline.book import SkillBook

        if isinstance(book_or_session, SkillBook):
            self._book: SkillBook = book_or_session
            self.session: SkillSession | None = None
        else:
            self.session = book_or_session
            self._book = book_or_session.current()
        self.model = model
        self.base_instructions = base_instructions
        self.max_steps = max(1, max_steps)
        self.read_tool_name = read_tool_name
        self.on_event = on_event
        self.env = env
        #: None: the book's profile's built-in command names (followed across reloads).
        self.reserved_commands = None if reserved_commands is None else frozenset(reserved_commands)
        self.approve = approve
        #: None: the book's config (``skills.exec``) decides, asking ``approve``.
        self.exec_policy = exec_policy
        #: Told about each request (``skillbook.runtime.recording``), e.g. to record it;
        #: the answers ``approve`` gives reach it too (commands a policy let run unasked
        #: have no approval step).
        self.recorder = recorder
        if recorder is not None and approve is not None:
            self.approve = recording_approver(approve, recorder)
        self._recording = False
        self._fixed_tools = tuple(tools) if tools is not None else None
        #: ``skills.selection`` (when not off): stable system section, per-turn block,
        #: ``find_skills``. None keeps OpenClaw's catalog exactly.
        self.selection: SelectionPlan | None = _selection_plan(self._book, None, env)
        #: The last turn's skills block: what was listed, what was not (``selection.unlisted``).
        self.last_selection: TurnBlock | None = None
        self._tools: tuple[Tool, ...] = self._fixed_tools or self._default_tools()

    # ----------------------------------------------------------------- state

    @property
    def book(self) -> SkillBook:
        return self._book

    @property
    def tools(self) -> tuple[Tool, ...]:
        return self._tools

    def refresh(self) -> SkillBook:
        """The book for the next turn: a session is asked (§7.4), tools follow a new book."""
        if self.session is not None:
            book = self.session.current()
            if book is not self._book:
                self.use_book(book)
        return self._book

    def use_book(self, book: SkillBook) -> None:
        """Switch to ``book`` (after a reload); default tools are rebuilt for it."""
        self._book = book
        self.selection = _selection_plan(book, self.selection, self.env)
        if self._fixed_tools is None:
            self._tools = self._default_tools()

    def _default_tools(self) -> tuple[Tool, ...]:
        tools: tuple[Tool, ...] = default_tools(self._book, env=self.env)
        if self.selection is not None:
            from skillbook.runtime.find_skills import find_tool

            tools = (*tools, find_tool(self.selection))
        return tools

    def system_prompt(self) -> str:
        if self.selection is not None:
            section = self.selection.system_section(read_tool=self.read_tool_name)
            return self.base_instructions + "\n" + section
        section = self._book.system_prompt_section(read_tool=self.read_tool_name)
        return self.base_instructions + ("\n" + section if section else "")

    def commands(self) -> CommandSet:
        """The slash commands of the book's eligible skills (a ``CommandSet``)."""
        return self._book.commands(reserved=self.reserved_commands)

    # ----------------------------------------------------------------- turns

    async def invoke(self, text: str, history: Sequence[Message] = ()) -> InvokeResult:
        """One user message: a dispatched slash command, or an agent turn (§6.4–6.5)."""
        return await self._recorded(text, self._invoke, text, history)

    async def run_turn(self, history: Sequence[Message], user_text: str) -> TurnResult:
        """Send ``user_text`` after ``history`` and loop through tool calls to an answer."""
        return await self._recorded(user_text, self._run_turn, history, user_text)

    async def _recorded(self, text: str, run: Callable[..., Awaitable[_T]], *args: Any) -> _T:
        """``run(*args)`` between the recorder's ``begin`` and ``end`` (once per request)."""
        if self.recorder is None or self._recording:
            return await run(*args)
        self._recording = True
        notify(self.recorder, "begin", text, self)
        try:
            result = await run(*args)
        except BaseException as exc:
            notify(self.recorder, "end", None, exc)
            raise
        finally:
            self._recording = False
        notify(self.recorder, "end", result, None)
        return result

    async def _invoke(self, text: str, history: Sequence[Message]) -> InvokeResult:
        self.refresh()
        invocation = resolve_invocation(text, self.commands())
        if invocation is None:
            turn = await self.run_turn(history, text)
            return InvokeResult(turn.final_text, turn=turn)
        how = command_dispatch(invocation.command, self._book.eligible)
        if how is None:
            turn = await self.run_turn(history, rewrite_for_model(invocation))
            return InvokeResult(turn.final_text, invocation, turn=turn)
        call_id = command_call_id()
        if isinstance(how, ExecDispatch):
            # The agent's own exec (its environment and config), never one made up here:
            # an agent given tools without exec has chosen not to run commands.
            exec_tool = next((t for t in self._tools if isinstance(t, ExecTool)), None)
            if exec_tool is None:
                return InvokeResult(
                    f"❌ Tool not available: {ExecTool.name}", invocation, True, True
                )
            skill = invocation.command.skill_name
            call = ToolCall(call_id, exec_tool.name, {"command": how.command, "skill": skill})
            run = await self._run_tool(
                call,
                functools.partial(
                    exec_tool.arun_dispatch, how.command, skill=skill, args=invocation.args
                ),
            )
        else:
            tool = next((t for t in self._tools if t.name == how.tool_name), None)
            if tool is None:
                return InvokeResult(
                    f"❌ Tool not available: {how.tool_name}", invocation, True, True
                )
            call = ToolCall(call_id, tool.name, dispatch_arguments(tool, invocation))
            run = await self._run_tool(call)
        text = run.result.text.strip()
        if run.result.is_error:
            return InvokeResult(f"❌ {text}", invocation, True, True, tool_run=run)
        return InvokeResult(text or DONE_TEXT, invocation, True, tool_run=run)

    async def _run_turn(self, history: Sequence[Message], user_text: str) -> TurnResult:
        if self.model is None:
            raise ModelNotConfigured("no model configured for this agent")
        if self.session is not None:
            self.refresh()
        system = self.system_prompt()
        tools = self._tools
        if self.selection is not None:
            block = self.selection.turn_block(user_text, recent=_recent_requests(history))
            self.last_selection = block
            if self.selection.placement == "system":
                # The router's skills are this turn's catalog (OpenClaw's router seam):
                # ``nomatch`` leaves the catalog out of the system prompt.
                section = self.selection.turn_section(block, read_tool=self.read_tool_name)
                system = self.base_instructions + ("\n" + section if section else "")
            else:
                # The block stays in the history: earlier turns never change (prompt cache).
                user_text = block.apply(user_text)
        messages: list[Message] = [*history, Message.user(user_text)]
        runs: list[ToolRun] = []
        text = ""
        for step in range(1, self.max_steps + 1):
            text, calls = await self._step(messages, tools, system)
            messages.append(Message.assistant(text, calls))
            if not calls:
                return await self._end(TurnResult(text, step, tuple(runs), tuple(messages)))
            if step == self.max_steps:
                # Every call needs a result, or the next request is refused; none runs.
                skipped = ToolResult(STEP_LIMIT_RESULT, is_error=True)
                messages.extend(Message.tool_result(c, skipped) for c in calls)
                break
            done = await self._run_tools(calls)
            runs.extend(done)
            messages.extend(Message.tool_result(r.call, r.result) for r in done)
        note = (
            f"[stopped after {self.max_steps} steps: the model still wanted to use tools; "
            "ask again to continue, or allow more steps (--max-steps)]"
        )
        final = f"{text.rstrip()}\n\n{note}" if text.strip() else note
        result = TurnResult(final, self.max_steps, tuple(runs), tuple(messages), "max-steps", note)
        return await self._end(result)

    async def _step(
        self, messages: Sequence[Message], tools: Sequence[Tool], system: str
    ) -> tuple[str, list[ToolCall]]:
        assert self.model is not None
        parts: list[str] = []
        calls: list[ToolCall] = []
        stream = self.model.stream(tuple(messages), tools, system)
        try:
            async for event in stream:
                if isinstance(event, TextDelta):
                    parts.append(event.text)
                    await self._emit(event)
                elif isinstance(event, ToolCallReady):
                    calls.append(event.call)
        finally:
            closer = getattr(stream, "aclose", None)
            if closer is not None:
                await closer()
        return "".join(parts), calls

    async def _run_tools(self, calls: Sequence[ToolCall]) -> list[ToolRun]:
        # Asked one at a time, before any call of the step runs: prompts never overlap
        # each other or a running command's output.
        decisions = [await self._decide(c) for c in calls]
        jobs = [
            self._run_tool(c) if d.run else self._decline(c, d)
            for c, d in zip(calls, decisions, strict=True)
        ]
        if len(jobs) == 1:
            return [await jobs[0]]
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(job) for job in jobs]
        return [t.result() for t in tasks]

    async def _decide(self, call: ToolCall) -> Decision:
        """Whether a model's tool call runs: ``exec`` calls go through the policy and the
        approver (fail closed); other tools and unparsable calls are not gated."""
        tool = next((t for t in self._tools if t.name == call.name), None)
        if call.error is not None or tool is None:
            return Decision(True, "policy")
        if not (isinstance(tool, ExecTool) or tool.name == ExecTool.name):
            return Decision(True, "policy")
        policy = self.exec_policy or ExecPolicy.from_config(self._book.config)
        return await decide(policy, call, self._book.eligible, self.approve)

    async def _decline(self, call: ToolCall, decision: Decision) -> ToolRun:
        skill, target = self._describe(call)
        await self._emit(ToolDeclined(call, skill, target, decision.message, decision.asked))
        return ToolRun(call, ToolResult(decision.message, is_error=True), skill, declined=True)

    async def _run_tool(
        self, call: ToolCall, runner: Callable[[], Awaitable[ToolResult]] | None = None
    ) -> ToolRun:
        """Run ``call`` (by default through the tool of its name) between its two events."""
        skill, target = self._describe(call)
        await self._emit(ToolStarted(call, skill, target))
        tool = next((t for t in self._tools if t.name == call.name), None)
        if runner is None and tool is not None:
            runner = functools.partial(tool.arun, call.arguments)
        if call.error is not None:
            result = ToolResult(f"{call.name}: {call.error}", is_error=True)
        elif runner is None:
            known = ", ".join(t.name for t in self._tools) or "none"
            result = ToolResult(f"unknown tool {call.name!r}; available: {known}", True)
        else:
            try:
                result = await runner()
            except Exception as exc:  # a tool bug must not end the conversation
                _log.warning("tool %s failed", call.name, exc_info=exc)
                result = ToolResult(f"{call.name}: {type(exc).__name__}: {exc}", True)
        await self._emit(ToolFinished(call, result))
        return ToolRun(call, result, skill)

    def _describe(self, call: ToolCall) -> tuple[str | None, str]:
        args = call.arguments
        if call.name == self.read_tool_name and isinstance(args.get("path"), str):
            path = args["path"]
            owner = _skill_for_path(self._book, path)
            return (owner.name if owner is not None else None), path
        if isinstance(args.get("command"), str):
            skill = args.get("skill")
            return (skill if isinstance(skill, str) and skill else None), args["command"]
        return None, json.dumps(dict(args), ensure_ascii=False)

    async def _emit(self, event: AgentEvent) -> None:
        notify(self.recorder, "event", event)
        if self.on_event is None:
            return
        outcome = self.on_event(event)
        if inspect.isawaitable(outcome):
            await outcome

    async def _end(self, result: TurnResult) -> TurnResult:
        await self._emit(TurnEnded(result))
        return result


def _recent_requests(history: Sequence[Message], count: int = 2) -> list[str]:
    """The last user requests, without the skills blocks put in front of them."""
    from skillbook.selection.plan import TurnBlock

    texts = [TurnBlock.strip(m.content) for m in history if m.role == "user" and m.content]
    return texts[-count:]


def _selection_plan(
    book: SkillBook, previous: SelectionPlan | None, env: Mapping[str, str] | None
) -> SelectionPlan | None:
    if book.config.skills.selection.mode == "off":
        return None  # skillbook.selection (numpy, models) is never imported then
    from skillbook.selection.plan import plan_for

    return plan_for(book, previous=previous, env=env if env is not None else os.environ)


def _skill_for_path(book: SkillBook, raw: str) -> Skill | None:
    from skillbook.config.paths import resolve_user_path

    try:
        real = os.path.realpath(resolve_user_path(raw, book.paths.home, cwd=book.workspace))
    except ValueError:
        return None
    best: tuple[int, Skill] | None = None
    for skill in book.eligible:
        root = os.path.realpath(skill.base_dir)
        inside = real == root or real.startswith(root.rstrip(os.sep) + os.sep)
        if inside and (best is None or len(root) > best[0]):
            best = (len(root), skill)
    return best[1] if best else None
