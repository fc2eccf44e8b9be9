"""The PydanticAI adapter against the real ``pydantic_ai`` package and its ``FunctionModel``.

Spec §5.5 (the skills section in the instructions), §6.4–6.5 (slash commands):
§12 "Commands" — tool dispatch passes the raw arguments without the model; other
commands are rewritten for the model.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai", reason="needs the pydantic-ai extra")

from factories import write_skill
from pydantic_ai import Agent
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.toolsets import FunctionToolset
from scripted_openai import (
    CANNED,
    GATE_CASES,
    Approvals,
    GateCase,
    check_gate,
    gate_book,
    location,
    skill_workspace,
)

from skillbook.integrations.pydantic_ai import (
    SkillbookToolset,
    handle_slash_command,
    handle_slash_command_sync,
    skillbook_capability,
    skillbook_instructions,
    skillbook_toolset,
)
from skillbook.pipeline.book import Loader, SkillBook
from skillbook.runtime.agent import Agent as SkillbookAgent
from skillbook.runtime.tools import ExecTool, ReadTool


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    return skill_workspace(tmp_path)


def load(setup: tuple[Path, dict[str, str]]) -> SkillBook:
    ws, env = setup
    return Loader(ws, env=env, cwd=ws).load()


def returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    return [p for p in last.parts if isinstance(p, ToolReturnPart)]


class Script:
    """A FunctionModel body: one scripted response per model call, recording what it saw."""

    def __init__(self, *steps: Any) -> None:
        self.steps = list(steps)
        self.seen: list[tuple[list[ModelMessage], AgentInfo]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append((list(messages), info))
        step = self.steps.pop(0)
        response: ModelResponse = step(messages) if callable(step) else step
        return response


def tool_call(name: str, args: dict[str, Any], cid: str = "c1") -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=cid)])


@pytest.mark.parametrize("style", ["capability", "toolset+instructions"])
def test_full_exchange_reads_weather_skill_then_execs(
    setup: tuple[Path, dict[str, str]], style: str
) -> None:
    """§5.5: the model sees base + skills section; read returns the SKILL.md; exec runs."""
    ws, env = setup
    book = load(setup)
    skill_md = location(book.prompt, "weather")
    wanted = (ws / "skills/weather/SKILL.md").read_text(encoding="utf-8")
    results: dict[str, ToolReturnPart] = {}

    def after_read(messages: list[ModelMessage]) -> ModelResponse:
        (part,) = returns(messages)
        results["read"] = part
        return tool_call(
            "exec", {"command": 'curl -s "wttr.in/Paris?format=3"', "skill": "weather"}
        )

    def after_exec(messages: list[ModelMessage]) -> ModelResponse:
        (part,) = returns(messages)
        results["exec"] = part
        return ModelResponse(parts=[TextPart(f"It is {str(part.content).strip()}")])

    script = Script(tool_call("read", {"path": skill_md}), after_read, after_exec)
    approvals = Approvals()
    if style == "capability":
        capability = skillbook_capability(book, env=env, approve=approvals.async_)
        agent = Agent(FunctionModel(script), capabilities=[capability])
    else:
        agent = Agent(
            FunctionModel(script),
            instructions=skillbook_instructions(book),
            toolsets=[skillbook_toolset(book, env=env, approve=approvals)],
        )
    result = asyncio.run(agent.run("Weather in Paris?"))

    assert result.output == f"It is {CANNED}"
    assert [c.arguments["skill"] for c in approvals.calls] == ["weather"]
    assert results["read"].content == wanted and results["read"].outcome != "failed"
    assert results["exec"].content == CANNED + "\n"
    info = script.seen[0][1]
    section = book.system_prompt_section(read_tool="read")
    assert info.instructions is not None and info.instructions.endswith("\n" + section)
    assert info.instructions == SkillbookAgent(book, None).system_prompt()
    declared = {t.name: t for t in info.function_tools}
    assert declared["read"].parameters_json_schema == ReadTool([]).schema
    assert declared["exec"].parameters_json_schema == ExecTool([]).schema
    assert declared["exec"].description == ExecTool.description


def test_failed_tool_call_is_a_failed_result(setup: tuple[Path, dict[str, str]]) -> None:
    """A refused read comes back marked failed (ToolFailed), and the run goes on."""
    _, env = setup
    book = load(setup)
    seen: list[ToolReturnPart] = []

    def answer(messages: list[ModelMessage]) -> ModelResponse:
        seen.extend(returns(messages))
        return ModelResponse(parts=[TextPart("cannot")])

    script = Script(tool_call("read", {"path": "/etc/passwd"}), answer)
    agent = Agent(FunctionModel(script), capabilities=[skillbook_capability(book, env=env)])
    assert asyncio.run(agent.run("read passwd")).output == "cannot"
    assert seen[0].outcome == "failed"
    assert str(seen[0].content).startswith("read: /etc/passwd: not inside a skill folder")


@pytest.mark.parametrize("case", GATE_CASES, ids=lambda c: c.id)
def test_the_models_commands_need_approval_or_a_policy(
    setup: tuple[Path, dict[str, str]], tmp_path: Path, case: GateCase
) -> None:
    """Safe by default: without an approver or a policy that allows it, exec refuses."""
    ws, env = setup
    book = gate_book(ws, env, case)
    marker = tmp_path / "ran"
    approvals = Approvals(case.answer)
    seen: list[ToolReturnPart] = []

    def answer(messages: list[ModelMessage]) -> ModelResponse:
        seen.extend(returns(messages))
        return ModelResponse(parts=[TextPart("done")])

    script = Script(tool_call("exec", {"command": f"touch {marker}"}), answer)
    capability = skillbook_capability(book, env=env, **case.kwargs(approvals))
    agent = Agent(FunctionModel(script), capabilities=[capability])
    assert asyncio.run(agent.run("go")).output == "done"
    check_gate(case, approvals, marker, str(seen[0].content))
    assert (seen[0].outcome == "failed") == (not case.ran)
    # A command the user typed is not the model's: it runs unasked.
    typed = tmp_path / "typed"
    outcome = handle_slash_command_sync(book, f"/sh touch {typed}", capability)
    assert outcome is not None and not outcome.is_error and typed.exists()


def test_a_toolset_of_runtime_tools_gates_exec(setup: tuple[Path, dict[str, str]]) -> None:
    """``SkillbookToolset`` built from bare runtime tools still gates their exec."""
    _, env = setup
    book = load(setup)
    exec_tool = ExecTool(book.eligible, config=book.config, base_env=env)
    toolset = SkillbookToolset([exec_tool])
    (gated,) = toolset.runtime_tools
    refused = asyncio.run(gated.arun({"command": "echo hi"}))
    assert refused.is_error and refused.text.startswith("exec: not run:")
    allowed = SkillbookToolset([exec_tool], approve=lambda call: True).runtime_tools[0]
    assert asyncio.run(allowed.arun({"command": "echo hi"})).text == "hi\n"


def test_slash_command_dispatches_exec_without_the_model(
    setup: tuple[Path, dict[str, str]],
) -> None:
    """§12 Commands: `command-dispatch: tool` runs exec with the raw args, no model call."""
    ws, env = setup
    book = load(setup)
    toolset = skillbook_toolset(book, env=env)
    outcome = asyncio.run(handle_slash_command(book, "/sh  echo 'a  b' && pwd ", toolset))
    assert outcome is not None and outcome.dispatched and not outcome.is_error
    assert outcome.reply == f"a  b\n{ws / 'skills' / 'sh'}"
    sync = handle_slash_command_sync(book, "/sh exit 3", toolset)
    assert sync is not None and sync.is_error and sync.reply == "❌ exit code 3"
    # Runtime tools work as well as the toolset.
    direct = handle_slash_command_sync(book, "/sh echo ok", toolset.runtime_tools)
    assert direct is not None and direct.reply == "ok"
    missing = handle_slash_command_sync(book, "/ghost x", toolset)
    assert missing is not None and missing.reply == "❌ Tool not available: nope"


def test_slash_command_rewritten_for_the_agent(setup: tuple[Path, dict[str, str]]) -> None:
    _, env = setup
    book = load(setup)
    toolset = skillbook_toolset(book, env=env)
    outcome = handle_slash_command_sync(book, "/notes remember milk", toolset)
    assert outcome is not None and outcome.reply is None
    assert outcome.prompt == 'Use the "notes" skill for this request.\n\nUser input:\nremember milk'
    assert handle_slash_command_sync(book, "not a command", toolset) is None


def test_slash_command_dispatches_to_a_users_function_tool(
    setup: tuple[Path, dict[str, str]],
) -> None:
    ws, _ = setup
    write_skill(ws / "skills" / "rec", command_dispatch="tool", command_tool="record")
    write_skill(ws / "skills" / "arec", command_dispatch="tool", command_tool="arecord")
    book = load(setup)
    calls: list[dict[str, str]] = []

    def record(command: str, commandName: str, skillName: str) -> str:
        calls.append({"command": command, "commandName": commandName, "skillName": skillName})
        if command == "fail":
            raise ToolFailed("nope")
        return f"recorded {command}"

    async def arecord(command: str, commandName: str, skillName: str) -> str:
        return f"async {command}"

    mine = FunctionToolset[Any]([record, arecord])
    outcome = handle_slash_command_sync(book, "/rec  x  y ", mine)
    assert outcome is not None and outcome.reply == "recorded x  y"
    assert calls == [{"command": "x  y", "commandName": "rec", "skillName": "rec"}]
    failed = asyncio.run(handle_slash_command(book, "/rec fail", mine))
    assert failed is not None and failed.is_error and failed.reply == "❌ nope"
    async_ok = asyncio.run(handle_slash_command(book, "/arec go", mine))
    assert async_ok is not None and async_ok.reply == "async go"


def test_toolset_holds_runtime_tools(setup: tuple[Path, dict[str, str]]) -> None:
    _, env = setup
    book = load(setup)
    toolset = skillbook_toolset(book, env=env)
    assert isinstance(toolset, SkillbookToolset) and isinstance(toolset, FunctionToolset)
    assert [t.name for t in toolset.runtime_tools] == ["read", "exec"]
    assert sorted(toolset.tools) == ["exec", "read"]
    assert toolset.id == "skillbook"


def test_missing_framework_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['pydantic_ai'] = None\n"
        "try:\n    import skillbook.integrations.pydantic_ai\n"
        "except ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert 'pip install "skillbook[pydantic-ai]"' in out.stdout


def test_slash_command_accepts_the_capability(setup: tuple[Path, dict[str, str]]) -> None:
    ws, env = setup
    book = load(setup)
    outcome = handle_slash_command_sync(book, "/sh pwd", skillbook_capability(book, env=env))
    assert outcome is not None and outcome.reply == str(ws / "skills" / "sh")
    default = handle_slash_command_sync(book, "/sh pwd")
    assert default is not None and default.reply == str(ws / "skills" / "sh")
