"""The agent loop through the real ``anthropic`` client against a local fake server.

A workspace holds a ``weather`` skill that tells the model to run ``curl``; a stub
``curl`` on ``PATH`` prints canned weather, so nothing leaves the machine. The fake
server plays the model: it reads the skill, runs the command, answers. Spec §5.5:
the system prompt the server receives is the base instructions plus the skills
section byte for byte.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from agent_workspace import CANNED, COMMAND, WEATHER, location, weather_workspace
from fake_anthropic_server import Call, FakeAnthropicServer, HttpError, Reply, Turn

from skillbook.pipeline.book import Loader, SkillBook
from skillbook.runtime import ModelError
from skillbook.runtime.agent import DEFAULT_INSTRUCTIONS, Agent
from skillbook.runtime.approval import ExecPolicy
from skillbook.runtime.providers.anthropic_messages import AnthropicModel
from skillbook.runtime.turn import ToolStarted

pytest.importorskip("anthropic")


def last(body: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = body["messages"][-1]
    return message


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``tool_result`` blocks of the last (user) message."""
    message = last(body)
    assert message["role"] == "user"
    return [b for b in message["content"] if b["type"] == "tool_result"]


@pytest.fixture
def setup(tmp_path: Path) -> tuple[dict[str, str], SkillBook]:
    env, ws = weather_workspace(tmp_path)
    book = Loader(ws, env=env, cwd=ws).load()
    assert [s.name for s in book.eligible] == ["weather"]
    return env, book


def test_full_loop_over_the_anthropic_wire(setup: tuple[dict[str, str], SkillBook]) -> None:
    env, book = setup
    skill_md = location(book, "weather")

    def after_read(body: dict[str, Any]) -> list[Call]:
        assert tool_results(body)
        return [Call("exec", {"command": COMMAND, "skill": "weather"})]

    def after_exec(body: dict[str, Any]) -> str:
        return "Weather report: " + str(tool_results(body)[0]["content"]).strip()

    script: list[Turn] = [Reply("Reading the skill.", [Call("read", {"path": skill_md})])]
    script += [after_read, after_exec]
    with FakeAnthropicServer(script) as server:
        model = AnthropicModel("fake-claude", base_url=server.base_url, api_key="test-key")
        started: list[ToolStarted] = []

        def on_event(event: object) -> None:
            if isinstance(event, ToolStarted):
                started.append(event)

        agent = Agent(book, model, env=env, on_event=on_event, exec_policy=ExecPolicy.allow_all())
        result = asyncio.run(agent.run_turn([], "What's the weather in Shanghai?"))
    assert server.errors == []
    first, second, third = server.requests

    # §5.5: the system prompt is base + "\n" + the skills section, byte for byte.
    section = book.system_prompt_section()
    assert section.startswith("## Skills (mandatory)\n") and section.endswith(book.prompt.strip())
    assert first["system"] == DEFAULT_INSTRUCTIONS + "\n" + section
    assert first["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "What's the weather in Shanghai?"}]}
    ]
    assert first["model"] == "fake-claude" and first["stream"] is True
    assert first["max_tokens"] > 0
    assert [t["name"] for t in first["tools"]] == ["read", "exec"]
    assert first["tools"][0]["input_schema"]["required"] == ["path"]
    # Client versions differ: x-api-key, or a bearer token.
    headers = server.headers[0]
    assert "test-key" in (headers.get("x-api-key"), headers.get("authorization", "")[7:])
    assert server.paths == ["/v1/messages"] * 3

    # The assistant turn went back with its text and tool_use block; the read returned SKILL.md.
    assistant = second["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"][0] == {"type": "text", "text": "Reading the skill."}
    use = assistant["content"][1]
    assert (use["type"], use["name"], use["input"]) == ("tool_use", "read", {"path": skill_md})
    assert tool_results(second) == [
        {"type": "tool_result", "tool_use_id": use["id"], "content": WEATHER}
    ]

    # exec ran the stub curl; its output reached the next request.
    exec_use = third["messages"][-2]["content"][0]
    assert exec_use["input"] == {"command": COMMAND, "skill": "weather"}
    assert tool_results(third) == [
        {"type": "tool_result", "tool_use_id": exec_use["id"], "content": CANNED + "\n"}
    ]

    assert result.final_text == f"Weather report: {CANNED}"
    assert result.steps == 3
    assert [(e.call.name, e.skill, e.target) for e in started] == [
        ("read", "weather", skill_md),
        ("exec", "weather", COMMAND),
    ]


def test_parallel_tool_uses_and_errors_in_one_user_message(
    setup: tuple[dict[str, str], SkillBook],
) -> None:
    env, book = setup
    script: list[Turn] = [
        [Call("exec", {"command": "echo one"}), Call("read", {"path": "/etc/hostname"})],
        "done",
    ]
    with FakeAnthropicServer(script) as server:
        model = AnthropicModel("m", base_url=server.base_url, api_key="k")
        agent = Agent(book, model, env=env, exec_policy=ExecPolicy.allow_all())
        result = asyncio.run(agent.run_turn([], "go"))
    assert server.errors == []
    blocks = tool_results(server.requests[1])
    assert [b.get("is_error", False) for b in blocks] == [False, True]
    assert blocks[0]["content"] == "one\n"
    assert "not inside a skill folder" in blocks[1]["content"]
    uses = [b["id"] for b in server.requests[1]["messages"][1]["content"]]
    assert [b["tool_use_id"] for b in blocks] == uses
    assert result.final_text == "done"


def test_history_alternates_roles(setup: tuple[dict[str, str], SkillBook]) -> None:
    env, book = setup
    with FakeAnthropicServer(["one", "two"]) as server:
        model = AnthropicModel("m", base_url=server.base_url, api_key="k")
        agent = Agent(book, model, env=env)
        first = asyncio.run(agent.run_turn([], "hi"))
        asyncio.run(agent.run_turn(first.messages, "again"))
    roles = [m["role"] for m in server.requests[1]["messages"]]
    assert roles == ["user", "assistant", "user"]
    assert json.dumps(server.requests[1]["messages"][1]) == json.dumps(
        {"role": "assistant", "content": [{"type": "text", "text": "one"}]}
    )


def test_http_errors_become_one_line_model_errors(
    setup: tuple[dict[str, str], SkillBook],
) -> None:
    env, book = setup
    with FakeAnthropicServer([HttpError(400, "bad\nrequest")]) as server:
        model = AnthropicModel("m", base_url=server.base_url, api_key="k")
        with pytest.raises(ModelError) as info:
            asyncio.run(Agent(book, model, env=env).run_turn([], "hi"))
    assert "\n" not in str(info.value) and "400" in str(info.value)
