"""Skills for the OpenAI Agents SDK (the ``agents`` package).

Input: a :class:`~skillbook.pipeline.book.SkillBook`. Output: the instructions text for
``Agent(instructions=...)`` (base, then the ``## Skills (mandatory)`` catalog section),
``read``/``exec`` as :class:`agents.FunctionTool` values that call skillbook's own
runtime tools, and :func:`handle_slash_command` (async; :func:`handle_slash_command_sync`
without an event loop), which runs a ``command-dispatch: tool`` skill command without the
model or rewrites any other command into the message to pass to ``Runner.run``.

>>> book = skillbook.load("~/my-workspace")
>>> agent = Agent(name="assistant", instructions=skillbook_instructions(book),
...               tools=skillbook_tools(book))

A failing tool call (a refused path, a non-zero exit) is returned to the model as
the tool's text output, as the SDK expects of function tools; it never raises. So is
a command that did not run: ``exec`` runs the model's commands only when ``exec_policy``
(default: the book's ``skills.exec``) or ``approve`` (sync or async) allows them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from skillbook.integrations._common import (
    SlashOutcome,
    Target,
    adapter_tools,
    adispatch,
    build_instructions,
    call_id,
    dispatch,
    missing_extra,
    runtime_target,
)
from skillbook.runtime.agent import DEFAULT_INSTRUCTIONS
from skillbook.runtime.approval import Approver, ExecPolicy
from skillbook.runtime.exec_gate import GatedTool, gate_exec
from skillbook.runtime.tools import ReadTool, Tool, ToolResult

try:
    from agents import FunctionTool
    from agents import Tool as AgentsTool
    from agents.tool_context import ToolContext
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise missing_extra("OpenAI Agents SDK", "openai-agents") from exc

if TYPE_CHECKING:
    from skillbook.pipeline.book import SkillBook

__all__ = [
    "as_function_tool",
    "handle_slash_command",
    "handle_slash_command_sync",
    "skillbook_instructions",
    "skillbook_tools",
]


def skillbook_instructions(
    book: SkillBook, base: str | None = DEFAULT_INSTRUCTIONS, *, read_tool: str = ReadTool.name
) -> str:
    """``base``, a newline, and the book's skills section with the catalog."""
    return build_instructions(book, base, read_tool=read_tool)


class _Invoker:
    """``on_invoke_tool`` for a runtime tool; kept as an object so slash commands can
    find the runtime tool behind a :class:`FunctionTool` and call it directly."""

    __slots__ = ("tool",)

    def __init__(self, tool: Tool) -> None:
        self.tool = tool

    async def __call__(self, ctx: ToolContext[Any], arguments: str) -> str:
        try:
            args = json.loads(arguments) if arguments.strip() else {}
        except ValueError as exc:
            return f"{self.tool.name}: arguments are not valid JSON ({exc})"
        if isinstance(self.tool, GatedTool):
            result = await self.tool.arun(args, call_id=getattr(ctx, "tool_call_id", None))
        else:
            result = await self.tool.arun(args)
        return result.text


def as_function_tool(
    tool: Tool, *, exec_policy: ExecPolicy | None = None, approve: Approver | None = None
) -> FunctionTool:
    """A skillbook runtime tool as an Agents SDK :class:`FunctionTool`.

    The JSON schema is passed as it is; ``strict_json_schema`` is off because the
    schemas have optional parameters, which strict mode cannot express. An ``exec``
    tool is gated: ``exec_policy`` (default: its config's ``skills.exec``) and
    ``approve`` decide each command the model asks for.
    """
    tool = gate_exec(tool, exec_policy=exec_policy, approve=approve)
    return FunctionTool(
        name=tool.name,
        description=tool.description,
        params_json_schema=tool.schema,
        on_invoke_tool=_Invoker(tool),
        strict_json_schema=False,
    )


def skillbook_tools(
    book: SkillBook,
    *,
    env: Mapping[str, str] | None = None,
    tools: Sequence[Tool] | None = None,
    exec_policy: ExecPolicy | None = None,
    approve: Approver | None = None,
) -> list[AgentsTool]:
    """``read`` and ``exec`` over the book's eligible skills, as :class:`FunctionTool` values.

    ``env`` is the base environment of ``exec`` (default: ``os.environ`` at each call);
    ``tools`` replaces the default runtime tools (e.g. a ``ReadTool`` with a smaller cap).
    A command the model asks ``exec`` to run runs only when ``exec_policy`` (default:
    the book's ``skills.exec``) allows it or ``approve(call)`` (a plain or async
    function) returns True; otherwise the model gets a tool error and nothing runs.
    """
    chosen = adapter_tools(book, env=env, tools=tools, exec_policy=exec_policy, approve=approve)
    return [as_function_tool(t) for t in chosen]


def _target(tool: FunctionTool) -> Target:
    invoker = tool.on_invoke_tool
    if isinstance(invoker, _Invoker):
        return runtime_target(invoker.tool)

    async def call(args: dict[str, Any]) -> ToolResult:
        raw = json.dumps(args, ensure_ascii=False)
        ctx: ToolContext[Any] = ToolContext(
            context=None, tool_name=tool.name, tool_call_id=call_id(), tool_arguments=raw
        )
        output = await tool.on_invoke_tool(ctx, raw)
        return ToolResult(output if isinstance(output, str) else str(output))

    return Target(tool.name, tool.params_json_schema, call)


async def handle_slash_command(
    book: SkillBook,
    text: str,
    tools: Iterable[AgentsTool] | None = None,
    *,
    reserved: Iterable[str] | None = None,
) -> SlashOutcome | None:
    """Act on a user message that may be a slash command of ``book`` (§6.4–6.5).

    None: not a command; pass ``text`` to ``Runner.run`` unchanged. Otherwise a
    :class:`SlashOutcome`: ``reply`` when a ``command-dispatch: tool`` command ran the
    named function tool from ``tools`` without the model (skillbook's own tools are
    called directly, others through their ``on_invoke_tool``), or ``prompt``, the
    rewritten message to pass to ``Runner.run``. ``tools`` defaults to
    :func:`skillbook_tools` of the book.
    """
    chosen = skillbook_tools(book) if tools is None else tools
    targets = [_target(t) for t in chosen if isinstance(t, FunctionTool)]
    return await adispatch(book, text, targets, reserved=reserved)


def handle_slash_command_sync(
    book: SkillBook,
    text: str,
    tools: Iterable[AgentsTool] | None = None,
    *,
    reserved: Iterable[str] | None = None,
) -> SlashOutcome | None:
    """:func:`handle_slash_command` for code without an event loop (``Runner.run_sync``).

    Only skillbook's own tools can run here: other function tools are async
    (``on_invoke_tool``) and count as missing.
    """
    chosen = skillbook_tools(book) if tools is None else tools
    targets = [_target(t) for t in chosen if isinstance(t, FunctionTool)]
    return dispatch(book, text, targets, reserved=reserved)
