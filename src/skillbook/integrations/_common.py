"""What every framework adapter shares: one :class:`~skillbook.pipeline.book.SkillBook` in,
the instructions text, the ``read``/``exec`` runtime tools and slash-command handling out.

The adapters are thin on purpose: the catalog text is the one skillbook's own agent
sends (:meth:`~skillbook.runtime.agent.Agent.system_prompt`), the tools are the same
:mod:`skillbook.runtime.tools` objects, and a slash command resolves and dispatches
as in :meth:`~skillbook.runtime.agent.Agent.invoke` (OpenClaw's tool dispatch, then a
skill's own ``commandExec`` run through ``exec``, else the model rewrite), so a skill
behaves the same whichever framework runs the model. ``exec`` reaches the framework
gated (:mod:`skillbook.runtime.exec_gate`): a model's command runs only when the policy
(``exec_policy``, default the book's ``skills.exec``) or the ``approve`` callback allows
it, as in skillbook's own agent; a slash command the user typed runs unasked. Nothing
here imports a framework.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from skillbook.model import CommandDispatch
from skillbook.pipeline.commands.dispatch import ExecDispatch, command_dispatch
from skillbook.pipeline.commands.invocation import (
    Invocation,
    dispatch_arguments,
    resolve_invocation,
    rewrite_for_model,
)
from skillbook.runtime.agent import (
    DEFAULT_INSTRUCTIONS,
    DONE_TEXT,
    command_call_id,
    default_tools,
)
from skillbook.runtime.approval import Approver, ExecPolicy
from skillbook.runtime.exec_gate import gate_exec, ungated
from skillbook.runtime.tools import ExecTool, ReadTool, Tool, ToolResult

if TYPE_CHECKING:
    from skillbook.pipeline.book import SkillBook

__all__ = [
    "ERROR_MARK",
    "SlashOutcome",
    "Target",
    "adapter_tools",
    "adispatch",
    "build_instructions",
    "call_id",
    "dispatch",
    "dispatch_args",
    "missing_extra",
    "runtime_target",
    "runtime_tools",
]

_log = logging.getLogger("skillbook.integrations")

#: Prefix of a slash command reply whose tool failed, as skillbook's own agent shows it.
ERROR_MARK: Final = "❌"


def missing_extra(framework: str, extra: str) -> ImportError:
    """The error an adapter raises when its framework is not installed."""
    return ImportError(
        f"skillbook's {framework} integration needs the {framework} package: "
        f'pip install "skillbook[{extra}]"'
    )


def build_instructions(
    book: SkillBook, base: str | None = DEFAULT_INSTRUCTIONS, *, read_tool: str = ReadTool.name
) -> str:
    """``base``, a newline and the book's ``## Skills (mandatory)`` section with the catalog.

    The section is left out when no skill is in the catalog; with an empty ``base`` the
    section alone is returned. ``read_tool`` is the name the section tells the model to
    call, so it must match the read tool the framework was given.
    """
    section = book.system_prompt_section(read_tool=read_tool)
    plan = _selection_plan(book)
    if plan is not None:  # skills.selection: the stable section (see docs/selection.md)
        section = plan.system_section(read_tool=read_tool)
    base = base or ""
    if not section:
        return base
    return f"{base}\n{section}" if base else section


def runtime_tools(book: SkillBook, *, env: Mapping[str, str] | None = None) -> tuple[Tool, ...]:
    """``read`` and ``exec`` over the book's eligible skills (``env``: exec's base environment,
    default ``os.environ`` at each call), and ``find_skills`` when ``skills.selection``
    leaves skills out of the catalog."""
    tools: tuple[Tool, ...] = tuple(default_tools(book, env=env))
    plan = _selection_plan(book, env)
    if plan is None:
        return tools
    from skillbook.runtime.find_skills import find_tool

    return (*tools, find_tool(plan))


def adapter_tools(
    book: SkillBook,
    *,
    env: Mapping[str, str] | None = None,
    tools: Iterable[Tool] | None = None,
    exec_policy: ExecPolicy | None = None,
    approve: Approver | None = None,
) -> tuple[Tool, ...]:
    """The runtime tools an adapter hands its framework: ``tools`` (default:
    :func:`runtime_tools`), each ``exec`` among them gated by ``exec_policy`` (default:
    the book's ``skills.exec``) and ``approve``, as :class:`~skillbook.runtime.agent.Agent`
    gates its own."""
    chosen = tuple(tools) if tools is not None else runtime_tools(book, env=env)
    return tuple(
        gate_exec(
            t, exec_policy=exec_policy, approve=approve, config=book.config, skills=book.eligible
        )
        for t in chosen
    )


def _selection_plan(book: SkillBook, env: Mapping[str, str] | None = None) -> Any:
    if book.config.skills.selection.mode == "off":
        return None
    import os

    from skillbook.selection.plan import plan_for

    return plan_for(book, env=env if env is not None else os.environ)


@dataclass(frozen=True, slots=True)
class SlashOutcome:
    """What a slash command became: a reply for the user, or a prompt for the model.

    Exactly one of ``reply`` and ``prompt`` is set. ``reply`` is the output of a
    command that ran without the model, a ``command-dispatch: tool`` tool or a skill's
    ``commandExec`` (``❌ …`` when it failed or its tool is missing); ``prompt`` is the
    message to send the model instead of the user's text (§6.5).
    """

    invocation: Invocation
    prompt: str | None = None
    reply: str | None = None
    is_error: bool = False

    @property
    def dispatched(self) -> bool:
        """True when a tool ran and ``reply`` holds its output."""
        return self.reply is not None


@dataclass(frozen=True, slots=True)
class Target:
    """A tool a slash command can be dispatched to, in framework-neutral form."""

    name: str
    schema: Mapping[str, Any]
    call: Callable[[dict[str, Any]], Awaitable[ToolResult]]
    #: The same call run synchronously, when the framework offers one.
    call_sync: Callable[[dict[str, Any]], ToolResult] | None = None
    #: The skillbook runtime tool behind the target, when it is one: a ``commandExec``
    #: command runs through this ``exec`` (its environment and config).
    runtime: Tool | None = None


def runtime_target(tool: Tool) -> Target:
    """A :class:`Target` that runs a skillbook runtime tool directly; a gated ``exec``
    runs unasked here, since a slash command is the user's own request."""
    tool = ungated(tool)
    return Target(tool.name, tool.schema, tool.arun, tool.run, runtime=tool)


#: The arguments a dispatched command passes to a tool with a given schema (one rule
#: for skillbook's agent and every adapter).
dispatch_args = dispatch_arguments


def _resolve(
    book: SkillBook, text: str, reserved: Iterable[str] | None
) -> tuple[Invocation, CommandDispatch | ExecDispatch | None] | None:
    commands = book.commands(reserved=reserved)
    invocation = resolve_invocation(text, commands)
    if invocation is None:
        return None
    return invocation, command_dispatch(invocation.command, book.eligible)


def _exec_tool(book: SkillBook, targets: Iterable[Target]) -> ExecTool | None:
    """The ``exec`` a ``commandExec`` runs through, or None when ``exec`` was not given.

    A skillbook ``exec`` behind a target is used as it is; a framework tool named
    ``exec`` whose runtime tool is out of reach (a LangChain wrapper) stands for the
    book's default one.
    """
    named = False
    for target in targets:
        if isinstance(target.runtime, ExecTool):
            return target.runtime
        named = named or target.name == ExecTool.name
    if not named:
        return None
    return ExecTool(book.eligible, config=book.config, workspace=book.workspace)


def _reply(invocation: Invocation, result: ToolResult) -> SlashOutcome:
    text = result.text.strip()
    if result.is_error:
        return SlashOutcome(invocation, reply=f"{ERROR_MARK} {text}", is_error=True)
    return SlashOutcome(invocation, reply=text or DONE_TEXT)


def _missing(invocation: Invocation, name: str) -> SlashOutcome:
    return SlashOutcome(invocation, reply=f"{ERROR_MARK} Tool not available: {name}", is_error=True)


@dataclass(frozen=True, slots=True)
class _Pending:
    """A resolved command whose tool call is still to run (sync or async)."""

    invocation: Invocation
    label: str
    run_sync: Callable[[], ToolResult] | None
    run_async: Callable[[], Awaitable[ToolResult]]

    def failed(self, exc: Exception) -> SlashOutcome:
        # A failing tool or command is the user's reply, not a crash; the traceback is kept.
        _log.warning(
            "slash command %s: %s failed", self.invocation.command.name, self.label, exc_info=exc
        )
        return _reply(
            self.invocation, ToolResult(f"{self.label}: {type(exc).__name__}: {exc}", True)
        )


def _plan(
    book: SkillBook,
    text: str,
    targets: Iterable[Target],
    reserved: Iterable[str] | None,
    *,
    sync: bool,
) -> SlashOutcome | _Pending | None:
    """Everything :func:`dispatch` and :func:`adispatch` share: resolve, pick the tool."""
    resolved = _resolve(book, text, reserved)
    if resolved is None:
        return None
    invocation, how = resolved
    if how is None:
        return SlashOutcome(invocation, prompt=rewrite_for_model(invocation))
    targets = tuple(targets)
    if isinstance(how, ExecDispatch):
        tool = _exec_tool(book, targets)
        if tool is None:
            return _missing(invocation, ExecTool.name)
        command, skill, args = how.command, invocation.command.skill_name, invocation.args
        return _Pending(
            invocation,
            tool.name,
            lambda: tool.run_dispatch(command, skill=skill, args=args),
            lambda: tool.arun_dispatch(command, skill=skill, args=args),
        )
    name = how.tool_name
    target = next(
        (t for t in targets if t.name == name and (not sync or t.call_sync is not None)), None
    )
    if target is None:
        return _missing(invocation, name)
    call_args = dispatch_args(target.schema, invocation)
    call_sync = target.call_sync
    return _Pending(
        invocation,
        name,
        (lambda: call_sync(call_args)) if call_sync is not None else None,
        lambda: target.call(call_args),
    )


async def adispatch(
    book: SkillBook,
    text: str,
    targets: Iterable[Target],
    *,
    reserved: Iterable[str] | None = None,
) -> SlashOutcome | None:
    """Resolve ``text`` as a slash command of ``book`` and act on it (§6.4–6.5).

    None: not a command of this book (send ``text`` to the model unchanged).
    ``reserved``: the names skill commands avoid; default the book's profile's
    (``book.profile.commands.reserved_names``), as ``skillbook commands`` shows them.
    """
    step = _plan(book, text, targets, reserved, sync=False)
    if not isinstance(step, _Pending):
        return step
    try:
        result = await step.run_async()
    except Exception as exc:
        return step.failed(exc)
    return _reply(step.invocation, result)


def dispatch(
    book: SkillBook,
    text: str,
    targets: Iterable[Target],
    *,
    reserved: Iterable[str] | None = None,
) -> SlashOutcome | None:
    """:func:`adispatch` without an event loop; targets need ``call_sync``."""
    step = _plan(book, text, targets, reserved, sync=True)
    if not isinstance(step, _Pending):
        return step
    assert step.run_sync is not None  # _plan(sync=True) picks only targets with call_sync
    try:
        result = step.run_sync()
    except Exception as exc:
        return step.failed(exc)
    return _reply(step.invocation, result)


def call_id() -> str:
    """A tool-call id for a call no model made."""
    return command_call_id()
