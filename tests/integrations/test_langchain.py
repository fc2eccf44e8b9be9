"""The LangChain adapter against the real ``langchain`` 1.x ``create_agent`` (a LangGraph
graph), with LangChain's fake chat model and with ``ChatOpenAI`` pointed at a scripted
OpenAI-compatible server on 127.0.0.1 (no other network).

Spec §5.5 (the skills section in the system message), §6.4–6.5 (slash commands):
§12 "Commands" — tool dispatch passes the raw arguments without the model; other
commands are rewritten for the model.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain.agents", reason="needs the langchain extra")

from factories import write_skill
from langchain.agents import create_agent
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatResult
from langchain_core.tools import BaseTool, tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from scripted_openai import (
    CANNED,
    GATE_CASES,
    Approvals,
    GateCase,
    Reply,
    ScriptedOpenAI,
    call,
    check_gate,
    gate_book,
    location,
    messages_of,
    say,
    skill_workspace,
    text_of,
)

from skillbook.integrations.langchain import (
    handle_slash_command,
    handle_slash_command_sync,
    skillbook_middleware,
    skillbook_system_prompt,
    skillbook_tools,
)
from skillbook.pipeline.book import Loader, SkillBook
from skillbook.runtime.agent import Agent as SkillbookAgent
from skillbook.runtime.approval import DECLINED_RESULT
from skillbook.runtime.tools import ExecTool, ReadTool


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    return skill_workspace(tmp_path)


def load(setup: tuple[Path, dict[str, str]]) -> SkillBook:
    ws, env = setup
    return Loader(ws, env=env, cwd=ws).load()


class FakeToolModel(GenericFakeChatModel):
    """LangChain's fake chat model, able to bind tools and recording what it was sent."""

    seen: list[list[BaseMessage]]
    bound: list[Sequence[Any]]

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        self.bound.append(tools)
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.seen.append(list(messages))
        return super()._generate(messages, stop, run_manager, **kwargs)


def fake(*replies: AIMessage) -> FakeToolModel:
    steps: Iterator[AIMessage | str] = iter(replies)
    return FakeToolModel(messages=steps, seen=[], bound=[])


def calls(*items: tuple[str, str, dict[str, Any]]) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": n, "args": a, "id": i} for i, n, a in items])


def exchange(book: SkillBook) -> FakeToolModel:
    skill_md = location(book.prompt, "weather")
    return fake(
        calls(("c1", "read", {"path": skill_md})),
        calls(
            ("c2", "exec", {"command": 'curl -s "wttr.in/Paris?format=3"', "skill": "weather"}),
            ("c3", "read", {"path": "/etc/passwd"}),
        ),
        AIMessage(f"It is {CANNED}"),
    )


def check_exchange(ws: Path, book: SkillBook, messages: list[BaseMessage]) -> None:
    wanted = (ws / "skills/weather/SKILL.md").read_text(encoding="utf-8")
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    assert results["c1"].content == wanted and results["c1"].status == "success"
    assert results["c2"].content == CANNED + "\n" and results["c2"].status == "success"
    assert results["c3"].status == "error"
    assert str(results["c3"].content).startswith("read: /etc/passwd: not inside a skill folder")
    assert messages[-1].content == f"It is {CANNED}"


def test_create_agent_full_exchange(setup: tuple[Path, dict[str, str]]) -> None:
    """§5.5: the model sees base + skills section; read returns the SKILL.md; exec runs."""
    ws, env = setup
    book = load(setup)
    model = exchange(book)
    approvals = Approvals()
    tools = skillbook_tools(book, env=env, approve=approvals)
    agent = create_agent(model, tools=tools, system_prompt=skillbook_system_prompt(book))
    out = agent.invoke({"messages": [{"role": "user", "content": "Weather in Paris?"}]})
    check_exchange(ws, book, out["messages"])
    assert [c.arguments["skill"] for c in approvals.calls] == ["weather"]
    system = model.seen[0][0]
    assert isinstance(system, SystemMessage)
    section = book.system_prompt_section(read_tool="read")
    assert system.text.endswith("\n" + section)
    assert system.text == SkillbookAgent(book, None).system_prompt()
    specs = {convert_to_openai_tool(t)["function"]["name"]: t for t in model.bound[0]}
    assert convert_to_openai_tool(specs["read"])["function"]["parameters"] == ReadTool([]).schema
    assert convert_to_openai_tool(specs["exec"])["function"]["parameters"] == ExecTool([]).schema


def test_middleware_adds_tools_and_section_async(setup: tuple[Path, dict[str, str]]) -> None:
    """The middleware registers the tools and appends the section to the agent's prompt."""
    ws, env = setup
    book = load(setup)
    model = exchange(book)
    approvals = Approvals()
    middleware = skillbook_middleware(book, env=env, approve=approvals.async_)
    agent = create_agent(model, middleware=[middleware], system_prompt="Be brief.")
    out = asyncio.run(agent.ainvoke({"messages": [{"role": "user", "content": "Weather?"}]}))
    check_exchange(ws, book, out["messages"])
    assert [c.arguments["skill"] for c in approvals.calls] == ["weather"]
    section = book.system_prompt_section(read_tool="read")
    for sent in model.seen:
        assert sent[0].text == "Be brief.\n" + section
    assert [t.name for t in model.bound[0]] == ["read", "exec"]


def test_chat_openai_over_scripted_server(setup: tuple[Path, dict[str, str]]) -> None:
    """The tools' JSON schemas and the system prompt reach an OpenAI-compatible API as is."""
    langchain_openai = pytest.importorskip("langchain_openai")
    ws, env = setup
    book = load(setup)
    skill_md = location(book.prompt, "weather")
    wanted = (ws / "skills/weather/SKILL.md").read_text(encoding="utf-8")

    def after_read(body: dict[str, Any]) -> Reply:
        assert text_of(messages_of(body, "tool")[-1]) == wanted
        return say("read it")

    with ScriptedOpenAI([call("read", {"path": skill_md}), after_read]) as server:
        model = langchain_openai.ChatOpenAI(
            model="scripted-model", base_url=server.base_url, api_key="test-key", max_retries=0
        )
        agent = create_agent(
            model, tools=skillbook_tools(book, env=env), system_prompt=skillbook_system_prompt(book)
        )
        out = agent.invoke({"messages": [{"role": "user", "content": "Weather?"}]})
    assert out["messages"][-1].content == "read it"
    first = server.requests[0]
    assert text_of(messages_of(first, "system")[0]) == skillbook_system_prompt(book)
    declared = {t["function"]["name"]: t["function"]["parameters"] for t in first["tools"]}
    assert declared == {"read": ReadTool([]).schema, "exec": ExecTool([]).schema}


@pytest.mark.parametrize("how", ["invoke", "ainvoke"])
@pytest.mark.parametrize("case", GATE_CASES, ids=lambda c: c.id)
def test_the_models_commands_need_approval_or_a_policy(
    setup: tuple[Path, dict[str, str]], tmp_path: Path, case: GateCase, how: str
) -> None:
    """Safe by default, through the sync and the async tool call alike."""
    ws, env = setup
    book = gate_book(ws, env, case)
    marker = tmp_path / "ran"
    approvals = Approvals(case.answer)
    tools = skillbook_tools(book, env=env, **case.kwargs(approvals))
    model = fake(calls(("c1", "exec", {"command": f"touch {marker}"})), AIMessage("done"))
    agent = create_agent(model, tools=tools)
    request: Any = {"messages": [{"role": "user", "content": "go"}]}
    out = agent.invoke(request) if how == "invoke" else asyncio.run(agent.ainvoke(request))
    (result,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    check_gate(case, approvals, marker, str(result.content))
    assert result.status == ("success" if case.ran else "error")
    # A command the user typed is not the model's: it runs unasked.
    typed = tmp_path / "typed"
    outcome = handle_slash_command_sync(book, f"/sh touch {typed}", tools)
    assert outcome is not None and not outcome.is_error and typed.exists()


def test_an_async_approver_inside_a_running_loop_declines_a_sync_call(
    setup: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """A sync call made from async code cannot wait for an async approver: declined."""
    _, env = setup
    book = load(setup)
    approvals = Approvals()
    (_, exec_tool) = skillbook_tools(book, env=env, approve=approvals.async_)
    marker = tmp_path / "ran"

    async def main() -> Any:
        return exec_tool.invoke(
            {
                "name": "exec",
                "args": {"command": f"touch {marker}"},
                "id": "c1",
                "type": "tool_call",
            }
        )

    result = asyncio.run(main())
    assert isinstance(result, ToolMessage) and result.status == "error"
    assert result.content == DECLINED_RESULT and not marker.exists()


def test_slash_command_dispatches_exec_without_the_model(
    setup: tuple[Path, dict[str, str]],
) -> None:
    """§12 Commands: `command-dispatch: tool` runs exec with the raw args, no model call."""
    ws, env = setup
    book = load(setup)
    tools = skillbook_tools(book, env=env)
    outcome = handle_slash_command_sync(book, "/sh  echo 'a  b' && pwd ", tools)
    assert outcome is not None and outcome.dispatched and not outcome.is_error
    assert outcome.reply == f"a  b\n{ws / 'skills' / 'sh'}"
    failed = asyncio.run(handle_slash_command(book, "/sh exit 3", tools))
    assert failed is not None and failed.is_error and failed.reply == "❌ exit code 3"
    missing = handle_slash_command_sync(book, "/ghost x", tools)
    assert missing is not None and missing.reply == "❌ Tool not available: nope"


def test_slash_command_rewritten_for_the_agent(setup: tuple[Path, dict[str, str]]) -> None:
    _, env = setup
    book = load(setup)
    tools = skillbook_tools(book, env=env)
    outcome = handle_slash_command_sync(book, "/skill weather Paris", tools)
    assert outcome is not None and outcome.reply is None
    assert outcome.prompt == 'Use the "weather" skill for this request.\n\nUser input:\nParis'
    assert handle_slash_command_sync(book, "weather in Paris", tools) is None
    # Without tools: the book's own read and exec.
    default = handle_slash_command_sync(book, "/sh echo default")
    assert default is not None and default.reply == "default"


def test_slash_command_dispatches_to_a_users_tool(setup: tuple[Path, dict[str, str]]) -> None:
    ws, env = setup
    write_skill(ws / "skills" / "rec", command_dispatch="tool", command_tool="record")
    book = load(setup)
    seen: list[dict[str, str]] = []

    @tool
    def record(command: str, commandName: str, skillName: str) -> str:
        """Record a command."""
        seen.append({"command": command, "commandName": commandName, "skillName": skillName})
        return f"recorded {command}"

    tools: list[BaseTool] = [*skillbook_tools(book, env=env), record]
    outcome = handle_slash_command_sync(book, "/rec  x  y ", tools)
    assert outcome is not None and outcome.reply == "recorded x  y"
    assert seen == [{"command": "x  y", "commandName": "rec", "skillName": "rec"}]


def test_missing_framework_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['langchain_core'] = None\n"
        "try:\n    import skillbook.integrations.langchain\n"
        "except ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert 'pip install "skillbook[langchain]"' in out.stdout
