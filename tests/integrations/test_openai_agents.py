"""The OpenAI Agents SDK adapter against the real ``agents`` package and a scripted
OpenAI-compatible server on 127.0.0.1 (no other network).

Spec §5.5 (the skills section in the system prompt), §6.4–6.5 (slash commands):
§12 "Commands" — tool dispatch passes the raw arguments without the model; other
commands are rewritten for the model.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents", reason="needs the openai-agents extra")

from agents import Agent, FunctionTool, RunConfig, Runner, function_tool
from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
from factories import write_skill
from openai import AsyncOpenAI
from scripted_openai import (
    CANNED,
    GATE_CASES,
    Approvals,
    GateCase,
    Reply,
    ScriptedOpenAI,
    Step,
    call,
    check_gate,
    gate_book,
    location,
    messages_of,
    say,
    skill_workspace,
    text_of,
)

from skillbook.integrations._common import dispatch_args
from skillbook.integrations.openai_agents import (
    handle_slash_command,
    handle_slash_command_sync,
    skillbook_instructions,
    skillbook_tools,
)
from skillbook.pipeline.book import Loader, SkillBook
from skillbook.pipeline.commands.invocation import resolve_invocation
from skillbook.pipeline.commands.specs import build_command_specs
from skillbook.runtime.agent import Agent as SkillbookAgent
from skillbook.runtime.agent import dispatch_arguments
from skillbook.runtime.tools import ExecTool, ReadTool


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    return skill_workspace(tmp_path)


def load(setup: tuple[Path, dict[str, str]]) -> SkillBook:
    ws, env = setup
    return Loader(ws, env=env, cwd=ws).load()


async def run_agent(
    server: ScriptedOpenAI, book: SkillBook, env: dict[str, str], text: str, **tools: Any
) -> Any:
    client = AsyncOpenAI(base_url=server.base_url, api_key="test-key", max_retries=0)
    try:
        agent = Agent(
            name="assistant",
            instructions=skillbook_instructions(book),
            tools=skillbook_tools(book, env=env, **tools),
            model=OpenAIChatCompletionsModel(model="scripted-model", openai_client=client),
        )
        return await Runner.run(agent, text, run_config=RunConfig(tracing_disabled=True))
    finally:
        await client.close()


def test_full_exchange_reads_weather_skill_then_execs(
    setup: tuple[Path, dict[str, str]],
) -> None:
    """§5.5: the model sees base + skills section; read returns the SKILL.md; exec runs."""
    ws, env = setup
    book = load(setup)
    skill_md = location(book.prompt, "weather")
    assert skill_md == "~/ws/skills/weather/SKILL.md"
    wanted = (ws / "skills/weather/SKILL.md").read_text(encoding="utf-8")

    def after_read(body: dict[str, Any]) -> Reply:
        tool_msg = messages_of(body, "tool")[-1]
        assert tool_msg["tool_call_id"] == "call_read"
        assert text_of(tool_msg) == wanted
        return call("exec", {"command": 'curl -s "wttr.in/Paris?format=3"', "skill": "weather"})

    def after_exec(body: dict[str, Any]) -> Reply:
        return say("It is " + text_of(messages_of(body, "tool")[-1]).strip())

    script: list[Step] = [call("read", {"path": skill_md}, id="call_read"), after_read, after_exec]
    approvals = Approvals()
    with ScriptedOpenAI(script) as server:
        result = asyncio.run(
            run_agent(server, book, env, "Weather in Paris?", approve=approvals.async_)
        )

    assert result.final_output == f"It is {CANNED}"
    # The user was asked about the one command, with the model's call id.
    (asked,) = approvals.calls
    assert asked.id == "call_1" and asked.arguments["skill"] == "weather"
    assert len(server.requests) == 3
    first = server.requests[0]
    system = text_of(messages_of(first, "system")[0])
    section = book.system_prompt_section(read_tool="read")
    assert section.startswith("## Skills (mandatory)")
    assert system.endswith("\n" + section)
    # The same text skillbook's own agent sends: the catalog does not depend on the framework.
    assert system == SkillbookAgent(book, None).system_prompt()
    declared = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert declared["read"]["parameters"] == ReadTool([]).schema
    assert declared["exec"]["parameters"] == ExecTool([]).schema
    assert declared["read"]["description"] == ReadTool.description


def test_refused_read_goes_back_to_the_model_as_text(setup: tuple[Path, dict[str, str]]) -> None:
    """A path outside every skill folder is an error result, not an exception."""
    _, env = setup
    book = load(setup)
    seen: list[str] = []

    def answer(body: dict[str, Any]) -> Reply:
        seen.append(text_of(messages_of(body, "tool")[-1]))
        return say("cannot")

    with ScriptedOpenAI([call("read", {"path": "/etc/passwd"}), answer]) as server:
        result = asyncio.run(run_agent(server, book, env, "read passwd"))
    assert result.final_output == "cannot"
    assert seen[0].startswith("read: /etc/passwd: not inside a skill folder")


@pytest.mark.parametrize("case", GATE_CASES, ids=lambda c: c.id)
def test_the_models_commands_need_approval_or_a_policy(
    setup: tuple[Path, dict[str, str]], tmp_path: Path, case: GateCase
) -> None:
    """Safe by default: without an approver or a policy that allows it, exec refuses."""
    ws, env = setup
    book = gate_book(ws, env, case)
    marker = tmp_path / "ran"
    approvals = Approvals(case.answer)
    seen: list[str] = []

    def answer(body: dict[str, Any]) -> Reply:
        seen.append(text_of(messages_of(body, "tool")[-1]))
        return say("done")

    script: list[Step] = [call("exec", {"command": f"touch {marker}"}), answer]
    with ScriptedOpenAI(script) as server:
        result = asyncio.run(run_agent(server, book, env, "go", **case.kwargs(approvals)))
    assert result.final_output == "done"
    check_gate(case, approvals, marker, seen[0])
    # A command the user typed is not the model's: it runs unasked.
    typed = tmp_path / "typed"
    tools = skillbook_tools(book, env=env, **case.kwargs(Approvals(False)))
    outcome = asyncio.run(handle_slash_command(book, f"/sh touch {typed}", tools))
    assert outcome is not None and not outcome.is_error and typed.exists()


def test_slash_command_dispatches_exec_without_the_model(
    setup: tuple[Path, dict[str, str]],
) -> None:
    """§12 Commands: `command-dispatch: tool` runs exec with the raw args, no model call."""
    ws, env = setup
    book = load(setup)
    tools = skillbook_tools(book, env=env)
    with ScriptedOpenAI([]) as server:
        outcome = asyncio.run(handle_slash_command(book, "/sh  echo 'a  b' && pwd ", tools))
    assert server.requests == []
    assert outcome is not None and outcome.dispatched and not outcome.is_error
    # Raw arguments (inner spacing and quotes kept), run in the skill's folder.
    assert outcome.reply == f"a  b\n{ws / 'skills' / 'sh'}"
    assert outcome.invocation.args == "echo 'a  b' && pwd"

    failed = asyncio.run(handle_slash_command(book, "/sh exit 3", tools))
    assert failed is not None and failed.is_error and failed.reply == "❌ exit code 3"
    missing = asyncio.run(handle_slash_command(book, "/ghost x", tools))
    assert missing is not None and missing.reply == "❌ Tool not available: nope"
    # The sync twin runs skillbook's own tools without an event loop.
    synced = handle_slash_command_sync(book, "/sh echo sync", tools)
    assert synced is not None and synced.reply == "sync"


def test_slash_command_rewritten_for_runner(setup: tuple[Path, dict[str, str]]) -> None:
    """§6.5: a command without dispatch becomes the message passed to Runner.run."""
    _, env = setup
    book = load(setup)
    tools = skillbook_tools(book, env=env)
    outcome = asyncio.run(handle_slash_command(book, "/skill notes remember milk", tools))
    assert outcome is not None and not outcome.dispatched and outcome.reply is None
    assert outcome.prompt == 'Use the "notes" skill for this request.\n\nUser input:\nremember milk'
    assert asyncio.run(handle_slash_command(book, "hello /sh", tools)) is None
    assert asyncio.run(handle_slash_command(book, "/unknown", tools)) is None
    default = asyncio.run(handle_slash_command(book, "/sh echo default"))
    assert default is not None and default.reply == "default"


def test_slash_command_dispatches_to_a_users_function_tool(
    setup: tuple[Path, dict[str, str]],
) -> None:
    """A skill whose command-tool is one of the user's own function tools."""
    ws, env = setup
    write_skill(ws / "skills" / "rec", command_dispatch="tool", command_tool="record")
    book = load(setup)
    calls: list[dict[str, str]] = []

    @function_tool
    def record(command: str, commandName: str, skillName: str) -> str:
        """Record a command."""
        calls.append({"command": command, "commandName": commandName, "skillName": skillName})
        return f"recorded {command}"

    tools = [*skillbook_tools(book, env=env), record]
    outcome = asyncio.run(handle_slash_command(book, "/rec  x  y ", tools))
    assert outcome is not None and outcome.reply == "recorded x  y"
    assert calls == [{"command": "x  y", "commandName": "rec", "skillName": "rec"}]
    # A user's function tool is async only: the sync twin reports it missing.
    missing = handle_slash_command_sync(book, "/rec z", tools)
    assert missing is not None and missing.reply == "❌ Tool not available: record"
    assert len(calls) == 1


def test_dispatch_args_match_skillbook_agent(setup: tuple[Path, dict[str, str]]) -> None:
    """The adapters build dispatch arguments by the rule of skillbook's own agent."""
    book = load(setup)
    invocation = resolve_invocation("/sh ls -la", build_command_specs(book.eligible))
    assert invocation is not None
    for tool in (ReadTool(book.eligible), ExecTool(book.eligible)):
        assert dispatch_args(tool.schema, invocation) == dispatch_arguments(tool, invocation)
    assert dispatch_args(ExecTool([]).schema, invocation) == {"command": "ls -la", "skill": "sh"}


def test_function_tool_bad_json_is_reported(setup: tuple[Path, dict[str, str]]) -> None:
    _, env = setup
    book = load(setup)
    read = skillbook_tools(book, env=env)[0]
    assert isinstance(read, FunctionTool) and read.strict_json_schema is False
    out: Any = asyncio.run(read.on_invoke_tool(None, "{not json"))  # type: ignore[arg-type]
    assert isinstance(out, str) and out.startswith("read: arguments are not valid JSON")
    out = asyncio.run(read.on_invoke_tool(None, json.dumps({"path": 3})))  # type: ignore[arg-type]
    assert out == "read: argument 'path' must be a string, got int"


def test_missing_framework_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['agents'] = None\n"
        "try:\n    import skillbook.integrations.openai_agents\n"
        "except ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert 'pip install "skillbook[openai-agents]"' in out.stdout
