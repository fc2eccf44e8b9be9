"""Skills for PydanticAI.

Input: a :class:`~skillbook.pipeline.book.SkillBook`. Output: a :class:`SkillbookToolset` (a
``FunctionToolset``) holding ``read`` and ``exec`` with skillbook's own JSON schemas
and runtime tools, the instructions text (base, then the ``## Skills (mandatory)``
catalog section), both bundled as one capability, and :func:`handle_slash_command`.

>>> book = skillbook.load("~/my-workspace")
>>> agent = Agent("openai:gpt-4.1", capabilities=[skillbook_capability(book)])

A failing call (a refused path, a non-zero exit) raises ``ToolFailed``: PydanticAI
sends the model a failed tool result it can adapt to, without spending retries. So
does a command that may not run: ``exec`` runs the model's commands only when
``exec_policy`` (default: the book's ``skills.exec``) or ``approve`` (sync or async)
allows them.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from skillbook.integrations._common import (
    SlashOutcome,
    Target,
    adapter_tools,
    adispatch,
    build_instructions,
    dispatch,
    missing_extra,
    runtime_target,
    runtime_tools,
)
from skillbook.runtime.agent import DEFAULT_INSTRUCTIONS
from skillbook.runtime.approval import Approver, ExecPolicy
from skillbook.runtime.exec_gate import gate_exec
from skillbook.runtime.tools import ReadTool, Tool, ToolResult

try:
    from pydantic_ai import Tool as PydanticTool
    from pydantic_ai.capabilities import Capability
    from pydantic_ai.exceptions import ModelRetry, ToolFailed
    from pydantic_ai.toolsets import FunctionToolset
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise missing_extra("PydanticAI", "pydantic-ai") from exc

if TYPE_CHECKING:
    from skillbook.pipeline.book import SkillBook

__all__ = [
    "DEFAULT_ID",
    "SkillbookToolset",
    "handle_slash_command",
    "handle_slash_command_sync",
    "skillbook_capability",
    "skillbook_instructions",
    "skillbook_toolset",
]

#: Id of the toolset and capability (durable execution wraps toolsets by id).
DEFAULT_ID = "skillbook"


def skillbook_instructions(
    book: SkillBook, base: str | None = DEFAULT_INSTRUCTIONS, *, read_tool: str = ReadTool.name
) -> str:
    """``base``, a newline, and the book's skills section with the catalog."""
    return build_instructions(book, base, read_tool=read_tool)


class _Call:
    """The function of one PydanticAI tool: calls the runtime tool with the model's
    arguments (already checked against the schema by the runtime tool itself)."""

    __slots__ = ("tool",)

    def __init__(self, tool: Tool) -> None:
        self.tool = tool

    async def __call__(self, **kwargs: Any) -> str:
        result = await self.tool.arun(kwargs)
        if result.is_error:
            raise ToolFailed(result.text)
        return result.text


class SkillbookToolset(FunctionToolset[Any]):
    """``read`` and ``exec`` (or the given runtime tools) as a PydanticAI toolset.

    An ``exec`` among ``tools`` is gated: ``exec_policy`` (default: its config's
    ``skills.exec``) and ``approve`` decide each command the model asks for.
    """

    def __init__(
        self,
        tools: Sequence[Tool],
        *,
        id: str | None = DEFAULT_ID,
        exec_policy: ExecPolicy | None = None,
        approve: Approver | None = None,
    ) -> None:
        self.runtime_tools = tuple(
            gate_exec(t, exec_policy=exec_policy, approve=approve) for t in tools
        )
        super().__init__(
            [
                PydanticTool.from_schema(_Call(t), t.name, t.description, t.schema)
                for t in self.runtime_tools
            ],
            id=id,
        )


def skillbook_toolset(
    book: SkillBook,
    *,
    env: Mapping[str, str] | None = None,
    tools: Sequence[Tool] | None = None,
    id: str | None = DEFAULT_ID,
    exec_policy: ExecPolicy | None = None,
    approve: Approver | None = None,
) -> SkillbookToolset:
    """``read`` and ``exec`` over the book's eligible skills, for ``Agent(toolsets=[...])``.

    ``env`` is the base environment of ``exec`` (default: ``os.environ`` at each call);
    ``tools`` replaces the default runtime tools. A command the model asks ``exec`` to
    run runs only when ``exec_policy`` (default: the book's ``skills.exec``) allows it
    or ``approve(call)`` (a plain or async function) returns True; otherwise the model
    gets a failed tool result and nothing runs.
    """
    chosen = adapter_tools(book, env=env, tools=tools, exec_policy=exec_policy, approve=approve)
    return SkillbookToolset(chosen, id=id)


def skillbook_capability(
    book: SkillBook,
    *,
    base: str | None = DEFAULT_INSTRUCTIONS,
    env: Mapping[str, str] | None = None,
    tools: Sequence[Tool] | None = None,
    id: str = DEFAULT_ID,
    exec_policy: ExecPolicy | None = None,
    approve: Approver | None = None,
) -> Capability[Any]:
    """The instructions and the toolset as one capability, for ``Agent(capabilities=[...])``;
    ``exec_policy`` and ``approve`` as in :func:`skillbook_toolset`."""
    toolset = skillbook_toolset(
        book, env=env, tools=tools, id=None, exec_policy=exec_policy, approve=approve
    )
    read_name = next((t.name for t in toolset.runtime_tools if isinstance(t, ReadTool)), None)
    instructions = build_instructions(book, base, read_tool=read_name or ReadTool.name)
    return Capability(instructions=instructions, toolsets=[toolset], id=id)


# --------------------------------------------------------------------------- slash commands

SlashTools = Capability[Any] | FunctionToolset[Any] | Iterable[Tool]


def _targets(book: SkillBook, tools: SlashTools | None) -> list[Target]:
    if tools is None:
        return [runtime_target(t) for t in runtime_tools(book)]
    if isinstance(tools, Capability):
        toolsets = [t for t in tools.toolsets if isinstance(t, FunctionToolset)]
    elif isinstance(tools, FunctionToolset):
        toolsets = [tools]
    else:
        return [runtime_target(t) for t in tools]
    out: list[Target] = []
    for toolset in toolsets:
        for name, tool in toolset.tools.items():
            if isinstance(tool.function, _Call):
                out.append(runtime_target(tool.function.tool))
            elif not tool.takes_ctx:
                out.append(_plain_target(name, tool))
    return out


def _plain_target(name: str, tool: PydanticTool[Any]) -> Target:
    """A context-free function tool, called as its function outside any run."""
    schema = tool.tool_def.parameters_json_schema
    function: Any = tool.function

    def finish(value: Any) -> ToolResult:
        return ToolResult(value if isinstance(value, str) else str(value))

    async def call(args: dict[str, Any]) -> ToolResult:
        try:
            value = function(**args)
            if inspect.isawaitable(value):
                value = await value
        except (ToolFailed, ModelRetry) as exc:
            return ToolResult(exc.message, True)
        return finish(value)

    def call_sync(args: dict[str, Any]) -> ToolResult:
        try:
            return finish(function(**args))
        except (ToolFailed, ModelRetry) as exc:
            return ToolResult(exc.message, True)

    return Target(name, schema, call, None if tool.function_schema.is_async else call_sync)


async def handle_slash_command(
    book: SkillBook,
    text: str,
    tools: SlashTools | None = None,
    *,
    reserved: Iterable[str] | None = None,
) -> SlashOutcome | None:
    """Act on a user message that may be a slash command of ``book`` (§6.4–6.5).

    ``tools``: the capability of :func:`skillbook_capability`, a toolset (skillbook's
    own or any ``FunctionToolset``; tools that take a ``RunContext`` cannot run outside
    a run and count as missing) or runtime tools; default: the book's ``read`` and ``exec``.
    None: not a command; send ``text`` to the agent unchanged. Otherwise ``reply``
    holds the output of a ``command-dispatch: tool`` command that ran without the
    model, or ``prompt`` the rewritten message to pass to ``agent.run``.
    """
    return await adispatch(book, text, _targets(book, tools), reserved=reserved)


def handle_slash_command_sync(
    book: SkillBook,
    text: str,
    tools: SlashTools | None = None,
    *,
    reserved: Iterable[str] | None = None,
) -> SlashOutcome | None:
    """:func:`handle_slash_command` for code that uses ``agent.run_sync``; async function
    tools other than skillbook's own count as missing here."""
    return dispatch(book, text, _targets(book, tools), reserved=reserved)
