"""Skills for LangChain and LangGraph.

Input: a :class:`~skillbook.pipeline.book.SkillBook`. Output: ``read`` and ``exec`` as
:class:`~langchain_core.tools.StructuredTool` values (their args schema is skillbook's
JSON Schema; the runtime tool checks the arguments), the system prompt (base, then
the ``## Skills (mandatory)`` catalog section), a middleware for
``langchain.agents.create_agent`` that adds both, and slash-command handling
(:func:`handle_slash_command`, async, and :func:`handle_slash_command_sync`).

>>> book = skillbook.load("~/my-workspace")
>>> agent = create_agent(model, tools=skillbook_tools(book),
...                      system_prompt=skillbook_system_prompt(book))

A failing call (a refused path, a non-zero exit) raises ``ToolException`` inside the
tool, which the tool turns into a ``ToolMessage`` with ``status="error"`` for the model.
So does a command that may not run: ``exec`` runs the model's commands only when
``exec_policy`` (default: the book's ``skills.exec``) or ``approve`` allows them (a
plain function for ``invoke``; a plain or async one for ``ainvoke``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
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
    from langchain_core.messages import SystemMessage, ToolMessage
    from langchain_core.tools import BaseTool, StructuredTool, ToolException
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise missing_extra("LangChain", "langchain") from exc

if TYPE_CHECKING:
    from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse

    from skillbook.pipeline.book import SkillBook

__all__ = [
    "handle_slash_command",
    "handle_slash_command_sync",
    "skillbook_middleware",
    "skillbook_system_prompt",
    "skillbook_tools",
    "structured_tool",
]


def skillbook_system_prompt(
    book: SkillBook, base: str | None = DEFAULT_INSTRUCTIONS, *, read_tool: str = ReadTool.name
) -> str:
    """``base``, a newline, and the book's skills section with the catalog."""
    return build_instructions(book, base, read_tool=read_tool)


_RUNTIME_KEY = "skillbook_runtime_tool"


def structured_tool(
    tool: Tool, *, exec_policy: ExecPolicy | None = None, approve: Approver | None = None
) -> StructuredTool:
    """A skillbook runtime tool as a LangChain :class:`StructuredTool` (sync and async).

    An ``exec`` tool is gated: ``exec_policy`` (default: its config's ``skills.exec``)
    and ``approve`` decide each command the model asks for.
    """
    tool = gate_exec(tool, exec_policy=exec_policy, approve=approve)

    def run(**kwargs: Any) -> str:
        return _text(tool.run(kwargs))

    async def arun(**kwargs: Any) -> str:
        return _text(await tool.arun(kwargs))

    return StructuredTool.from_function(
        func=run,
        coroutine=arun,
        name=tool.name,
        description=tool.description,
        args_schema=tool.schema,
        handle_tool_error=True,
        # Slash-command dispatch finds the runtime tool (and its env) through this.
        metadata={_RUNTIME_KEY: tool},
    )


def _text(result: ToolResult) -> str:
    if result.is_error:
        raise ToolException(result.text)
    return result.text


def skillbook_tools(
    book: SkillBook,
    *,
    env: Mapping[str, str] | None = None,
    tools: Sequence[Tool] | None = None,
    exec_policy: ExecPolicy | None = None,
    approve: Approver | None = None,
) -> list[BaseTool]:
    """``read`` and ``exec`` over the book's eligible skills, as LangChain tools.

    ``env`` is the base environment of ``exec`` (default: ``os.environ`` at each call);
    ``tools`` replaces the default runtime tools. A command the model asks ``exec`` to
    run runs only when ``exec_policy`` (default: the book's ``skills.exec``) allows it
    or ``approve(call)`` returns True (a plain function; with ``ainvoke`` also an async
    one); otherwise the model gets an error ``ToolMessage`` and nothing runs.
    """
    chosen = adapter_tools(book, env=env, tools=tools, exec_policy=exec_policy, approve=approve)
    return [structured_tool(t) for t in chosen]


def skillbook_middleware(
    book: SkillBook,
    *,
    base: str | None = DEFAULT_INSTRUCTIONS,
    env: Mapping[str, str] | None = None,
    tools: Sequence[Tool] | None = None,
    exec_policy: ExecPolicy | None = None,
    approve: Approver | None = None,
) -> AgentMiddleware[Any, Any, Any]:
    """A ``create_agent`` middleware that registers the tools and adds the skills section.

    The section goes after the agent's own system prompt; an agent without one gets
    ``base`` first. ``exec_policy`` and ``approve`` as in :func:`skillbook_tools`.
    ``langchain`` (not only ``langchain-core``) must be installed.
    """
    try:
        from langchain.agents.middleware import AgentMiddleware
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise missing_extra("LangChain", "langchain") from exc

    lc_tools = skillbook_tools(book, env=env, tools=tools, exec_policy=exec_policy, approve=approve)
    read_name = next((t.name for t in (tools or ()) if isinstance(t, ReadTool)), ReadTool.name)

    def system_for(request: ModelRequest[Any]) -> SystemMessage:
        own = request.system_message.text if request.system_message is not None else None
        return SystemMessage(build_instructions(book, own or base, read_tool=read_name))

    class SkillbookMiddleware(AgentMiddleware[Any, Any, Any]):
        def wrap_model_call(
            self,
            request: ModelRequest[Any],
            handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
        ) -> Any:
            return handler(request.override(system_message=system_for(request)))

        async def awrap_model_call(
            self,
            request: ModelRequest[Any],
            handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
        ) -> Any:
            return await handler(request.override(system_message=system_for(request)))

    middleware = SkillbookMiddleware()
    middleware.tools = lc_tools
    return middleware


# --------------------------------------------------------------------------- slash commands


def _schema_of(tool: BaseTool) -> Mapping[str, Any]:
    schema = tool.args_schema
    if isinstance(schema, dict):
        return schema
    if schema is not None and hasattr(schema, "model_json_schema"):
        return dict(schema.model_json_schema())
    return {"type": "object", "properties": tool.args}


def _result(message: Any) -> ToolResult:
    if isinstance(message, ToolMessage):
        return ToolResult(message.text, message.status == "error")
    return ToolResult(message if isinstance(message, str) else str(message))


def _target(tool: BaseTool) -> Target:
    """Calls the tool through its own ``invoke``, as a tool call so errors come back marked."""

    def as_call(args: dict[str, Any]) -> dict[str, Any]:
        return {"name": tool.name, "args": args, "id": call_id(), "type": "tool_call"}

    async def call(args: dict[str, Any]) -> ToolResult:
        return _result(await tool.ainvoke(as_call(args)))

    def call_sync(args: dict[str, Any]) -> ToolResult:
        return _result(tool.invoke(as_call(args)))

    runtime = (tool.metadata or {}).get(_RUNTIME_KEY)
    if isinstance(runtime, GatedTool):
        # The user typed the command: it runs unasked, past the model's gate.
        return runtime_target(runtime)
    return Target(tool.name, _schema_of(tool), call, call_sync, runtime=runtime)


def _targets(book: SkillBook, tools: Iterable[BaseTool] | None) -> list[Target]:
    return [_target(t) for t in (skillbook_tools(book) if tools is None else tools)]


async def handle_slash_command(
    book: SkillBook,
    text: str,
    tools: Iterable[BaseTool] | None = None,
    *,
    reserved: Iterable[str] | None = None,
) -> SlashOutcome | None:
    """Act on a user message that may be a slash command of ``book`` (§6.4–6.5).

    None: not a command; send ``text`` to the agent unchanged. Otherwise ``reply``
    holds the output of a ``command-dispatch: tool`` command that ran the named tool
    from ``tools`` (with ``ainvoke``) without the model, or ``prompt`` the rewritten
    message to send to the agent instead of ``text``. ``tools`` defaults to
    :func:`skillbook_tools` of the book.
    """
    return await adispatch(book, text, _targets(book, tools), reserved=reserved)


def handle_slash_command_sync(
    book: SkillBook,
    text: str,
    tools: Iterable[BaseTool] | None = None,
    *,
    reserved: Iterable[str] | None = None,
) -> SlashOutcome | None:
    """:func:`handle_slash_command` for code without an event loop (tools run with ``invoke``)."""
    return dispatch(book, text, _targets(book, tools), reserved=reserved)
