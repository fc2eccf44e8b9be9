"""The agent loop through the real ``openai`` client against a local fake server.

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
from fake_openai_server import Call, FakeOpenAIServer, HttpError, Reply, Turn

from skillbook.pipeline.book import Loader, SkillBook
from skillbook.runtime import ModelError
from skillbook.runtime.agent import DEFAULT_INSTRUCTIONS, Agent
from skillbook.runtime.approval import ExecPolicy
from skillbook.runtime.providers.openai_chat import OpenAIChatModel
from skillbook.runtime.turn import ToolStarted

pytest.importorskip("openai")


def last(body: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = body["messages"][-1]
    return message


@pytest.fixture
def setup(tmp_path: Path) -> tuple[dict[str, str], SkillBook]:
    env, ws = weather_workspace(tmp_path)
    book = Loader(ws, env=env, cwd=ws).load()
    assert [s.name for s in book.eligible] == ["weather"]
    return env, book


def test_full_loop_over_the_openai_wire(setup: tuple[dict[str, str], SkillBook]) -> None:
    env, book = setup
    skill_md = location(book, "weather")
    assert skill_md == "~/ws/skills/weather/SKILL.md"

    def after_read(body: dict[str, Any]) -> list[Call]:
        assert last(body)["role"] == "tool"
        return [Call("exec", {"command": COMMAND, "skill": "weather"})]

    def after_exec(body: dict[str, Any]) -> str:
        return "Weather report: " + str(last(body)["content"]).strip()

    script: list[Turn] = [
        Reply("Let me check the weather skill.", [Call("read", {"path": skill_md})])
    ]
    script += [after_read, after_exec]
    with FakeOpenAIServer(script) as server:
        model = OpenAIChatModel("fake-gpt", base_url=server.base_url, api_key="test-key")
        started: list[ToolStarted] = []
        agent = Agent(
            book,
            model,
            env=env,
            on_event=lambda e: started.append(e) if isinstance(e, ToolStarted) else None,
            exec_policy=ExecPolicy.allow_all(),
        )
        result = asyncio.run(agent.run_turn([], "What's the weather in Shanghai?"))
    assert server.errors == []
    first, second, third = server.requests

    # The exact system prompt: base + "\n" + the §5.5 section (which holds the catalog).
    section = book.system_prompt_section()
    assert section.startswith("## Skills (mandatory)\nBefore replying: scan <available_skills>")
    assert section.endswith(book.prompt.strip())
    assert first["messages"][0] == {
        "role": "system",
        "content": DEFAULT_INSTRUCTIONS + "\n" + section,
    }
    assert first["messages"][1] == {"role": "user", "content": "What's the weather in Shanghai?"}
    assert first["model"] == "fake-gpt" and first["stream"] is True
    assert [t["function"]["name"] for t in first["tools"]] == ["read", "exec"]
    assert first["tools"][1]["function"]["parameters"]["required"] == ["command"]
    assert server.headers[0]["authorization"] == "Bearer test-key"
    assert server.paths == ["/v1/chat/completions"] * 3

    # The read call returned that SKILL.md, and went back as a tool message.
    assistant = second["messages"][2]
    assert assistant["role"] == "assistant"
    assert assistant["content"] == "Let me check the weather skill."
    read_call = assistant["tool_calls"][0]
    assert read_call["function"]["name"] == "read"
    assert json.loads(read_call["function"]["arguments"]) == {"path": skill_md}
    assert last(second) == {
        "role": "tool",
        "tool_call_id": read_call["id"],
        "content": WEATHER,
    }

    # exec ran the command (the stub curl) and its output reached the next request.
    exec_call = third["messages"][-2]["tool_calls"][0]
    assert json.loads(exec_call["function"]["arguments"]) == {
        "command": COMMAND,
        "skill": "weather",
    }
    assert last(third) == {
        "role": "tool",
        "tool_call_id": exec_call["id"],
        "content": CANNED + "\n",
    }

    assert result.final_text == f"Weather report: {CANNED}"
    assert result.steps == 3
    assert [(e.call.name, e.skill, e.target) for e in started] == [
        ("read", "weather", skill_md),
        ("exec", "weather", COMMAND),
    ]


def test_parallel_calls_bad_arguments_and_errors_are_fed_back(
    setup: tuple[dict[str, str], SkillBook],
) -> None:
    env, book = setup
    script: list[Turn] = [
        [
            Call("exec", {"command": "echo one"}),
            Call("exec", '{"command": "echo two"'),  # cut JSON
            Call("exec", {"command": "exit 4"}),
        ],
        "done",
    ]
    with FakeOpenAIServer(script) as server:
        model = OpenAIChatModel("m", base_url=server.base_url, api_key="k")
        agent = Agent(book, model, env=env, exec_policy=ExecPolicy.allow_all())
        result = asyncio.run(agent.run_turn([], "go"))
    assert server.errors == []
    tools = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert [t["content"].splitlines()[0] for t in tools] == [
        "one",
        "exec: the arguments are not valid JSON (Expecting ',' delimiter at position 22)",
        "exit code 4",
    ]
    ids = [c["id"] for c in server.requests[1]["messages"][2]["tool_calls"]]
    assert [t["tool_call_id"] for t in tools] == ids and len(set(ids)) == 3
    assert result.final_text == "done"


def test_http_errors_become_one_line_model_errors(
    setup: tuple[dict[str, str], SkillBook],
) -> None:
    env, book = setup
    with FakeOpenAIServer([HttpError(401, "Incorrect API key\nprovided")]) as server:
        model = OpenAIChatModel("m", base_url=server.base_url, api_key="bad")
        with pytest.raises(ModelError) as info:
            asyncio.run(Agent(book, model, env=env).run_turn([], "hi"))
    message = str(info.value)
    assert "\n" not in message and "401" in message and server.base_url in message


def test_dispatch_needs_no_server(setup: tuple[dict[str, str], SkillBook]) -> None:
    """A non-dispatch command goes to the model rewritten (§6.5); the server sees that text."""
    env, book = setup
    with FakeOpenAIServer(["ok"]) as server:
        model = OpenAIChatModel("m", base_url=server.base_url, api_key="k")
        out = asyncio.run(Agent(book, model, env=env).invoke("/weather Paris"))
    assert out.text == "ok"
    assert last(server.requests[0])["content"] == (
        'Use the "weather" skill for this request.\n\nUser input:\nParis'
    )
