"""The agent loop (``skillbook.runtime.agent``) driven by a scripted model, no network.

Spec §5.5 (the skills section in the system prompt) and §6.4–6.5 (slash-command
dispatch): §12 "Commands" — tool dispatch passes the raw arguments, other commands
are rewritten for the model.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest
from factories import process_alive, stub_bins, wait_until, write_skill, write_workspace

from skillbook.pipeline.book import Loader, SkillBook
from skillbook.pipeline.commands.invocation import Invocation, rewrite_for_model
from skillbook.runtime import ModelNotConfigured
from skillbook.runtime.agent import (
    DEFAULT_INSTRUCTIONS,
    STEP_LIMIT_RESULT,
    Agent,
    dispatch_arguments,
)
from skillbook.runtime.approval import DECLINED_RESULT, ExecPolicy
from skillbook.runtime.providers import NOT_CONFIGURED, resolve_model_config
from skillbook.runtime.providers.base import TextDelta, ToolCall
from skillbook.runtime.providers.scripted import ScriptedModel, ScriptedRequest, call
from skillbook.runtime.tools import ToolResult
from skillbook.runtime.turn import AgentEvent, ToolDeclined, ToolFinished, ToolStarted, TurnEnded

WEATHER_BODY = """# Weather

Run `curl -s "wttr.in/<city>?format=3"` with exec (skill: weather) and report it.
"""
CANNED = "Shanghai: ☀️ +21°C"

#: These tests are about the loop, not approval: every model command runs.
YES = ExecPolicy.allow_all()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    bins = tmp_path / "bin"
    (tmp_path / "bundled").mkdir()
    stub_bins(bins, ["curl"], f"#!/bin/sh\necho '{CANNED}'\n")
    return {
        "HOME": str(home),
        "PATH": f"{bins}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        "SKILLBOOK_BUNDLED_SKILLS_DIR": str(tmp_path / "bundled"),
        "SKILLBOOK_STATE_DIR": str(tmp_path / "state"),
    }


@pytest.fixture
def workspace(env: Mapping[str, str]) -> Path:
    return write_workspace(
        Path(env["HOME"]) / "ws",
        {
            "weather": {
                "body": WEATHER_BODY,
                "metadata": {"openclaw": {"requires": {"bins": ["curl"]}}},
            },
            "notes": None,
            "rec": {"command_dispatch": "tool", "command_tool": "record"},
            "sh": {"command_dispatch": "tool", "command_tool": "exec"},
            "ghost": {"command_dispatch": "tool", "command_tool": "nope"},
        },
    )


def load(workspace: Path, env: Mapping[str, str]) -> SkillBook:
    return Loader(workspace, env=env, cwd=workspace).load()


def location(book: SkillBook, name: str) -> str:
    """The ``<location>`` the catalog shows for ``name`` (read from the catalog text)."""
    found = re.search(rf"<name>{name}</name>.*?<location>(.*?)</location>", book.prompt, re.S)
    assert found is not None, book.prompt
    return found.group(1)


class Recorder:
    """A tool with an open schema that remembers what it was called with."""

    name = "record"
    description = "Records its arguments."
    schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"command": {"type": "string"}},
    }

    def __init__(self, reply: str = "recorded", error: bool = False) -> None:
        self.calls: list[dict[str, Any]] = []
        self.reply = reply
        self.error = error

    def run(self, args: Mapping[str, Any]) -> ToolResult:
        self.calls.append(dict(args))
        return ToolResult(self.reply, self.error)

    async def arun(self, args: Mapping[str, Any]) -> ToolResult:
        return self.run(args)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# --------------------------------------------------------------------------- the loop


def test_loop_reads_skill_md_then_execs_then_answers(workspace: Path, env: dict[str, str]) -> None:
    """§5.5: the system prompt is base + the skills section; the model reads, execs, answers."""
    book = load(workspace, env)
    skill_md = location(book, "weather")
    assert skill_md.startswith("~/ws/skills/weather/")

    def after_read(req: ScriptedRequest) -> ToolCall:
        assert req.last.role == "tool" and not req.last.is_error
        assert req.last.content == (workspace / "skills/weather/SKILL.md").read_text()
        return call("exec", command='curl -s "wttr.in/Shanghai?format=3"', skill="weather")

    def after_exec(req: ScriptedRequest) -> str:
        assert req.last.role == "tool" and req.last.content.strip() == CANNED
        return f"Right now: {req.last.content.strip()}"

    model = ScriptedModel([call("read", path=skill_md), after_read, after_exec])
    events: list[AgentEvent] = []
    agent = Agent(book, model, env=env, on_event=events.append, exec_policy=YES)
    result = run(agent.run_turn([], "what's the weather in Shanghai?"))

    assert result.final_text == f"Right now: {CANNED}"
    assert result.steps == 3 and result.stop == "answer"
    assert [(r.call.name, r.skill) for r in result.tool_calls] == [
        ("read", "weather"),
        ("exec", "weather"),
    ]
    system = model.requests[0].system
    assert system == DEFAULT_INSTRUCTIONS + "\n" + book.system_prompt_section()
    assert "## Skills (mandatory)" in system and "<name>weather</name>" in system
    assert model.requests[0].tools == ("read", "exec")
    assert [m.role for m in result.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    started = [e for e in events if isinstance(e, ToolStarted)]
    assert [(e.call.name, e.skill, e.target) for e in started] == [
        ("read", "weather", skill_md),
        ("exec", "weather", 'curl -s "wttr.in/Shanghai?format=3"'),
    ]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == result.final_text
    assert isinstance(events[-1], TurnEnded) and events[-1].result is result
    assert sum(isinstance(e, ToolFinished) for e in events) == 2


def test_history_carries_over_between_turns(workspace: Path, env: dict[str, str]) -> None:
    model = ScriptedModel(["first", "second"])
    agent = Agent(load(workspace, env), model)
    one = run(agent.run_turn([], "hi"))
    two = run(agent.run_turn(one.messages, "again"))
    assert [m.content for m in model.requests[1].messages] == ["hi", "first", "again"]
    assert two.messages[-1].content == "second"


def test_no_skills_section_without_skills(tmp_path: Path, env: dict[str, str]) -> None:
    """§5.5: the section is left out entirely when the catalog is empty."""
    empty = tmp_path / "empty"
    empty.mkdir()
    agent = Agent(load(empty, env), ScriptedModel(["ok"]), base_instructions="Base.")
    assert agent.system_prompt() == "Base."


def test_step_limit_stops_with_a_note_and_answers_every_call(
    workspace: Path, env: dict[str, str]
) -> None:
    model = ScriptedModel([call("exec", command="echo again")] * 3)
    agent = Agent(load(workspace, env), model, max_steps=3, env=env)
    result = run(agent.run_turn([], "loop forever"))
    assert result.stop == "max-steps" and result.steps == 3
    assert len(result.tool_calls) == 2  # the third call is answered but not run
    assert "stopped after 3 steps" in result.final_text
    last = result.messages[-1]
    assert last.role == "tool" and last.is_error and last.content == STEP_LIMIT_RESULT
    assert last.tool_call_id == result.messages[-2].tool_calls[0].id


def test_tool_errors_are_fed_back_to_the_model(workspace: Path, env: dict[str, str]) -> None:
    bad_json = ToolCall("c3", "exec", {}, "the arguments are not valid JSON")
    model = ScriptedModel(
        [
            [
                call("read", path="/etc/passwd"),
                call("frobnicate", x=1),
                bad_json,
                call("exec", command="exit 3"),
            ],
            "sorry",
        ]
    )
    agent = Agent(load(workspace, env), model, env=env, exec_policy=YES)
    result = run(agent.run_turn([], "go"))
    results = [m for m in model.requests[1].messages if m.role == "tool"]
    assert all(m.is_error for m in results)
    assert "not inside a skill folder" in results[0].content
    assert results[1].content.startswith("unknown tool 'frobnicate'; available: read, exec")
    assert results[2].content == "exec: the arguments are not valid JSON"
    assert results[3].content.startswith("exit code 3")
    assert result.final_text == "sorry"


def test_tool_calls_of_one_step_run_concurrently(workspace: Path, env: dict[str, str]) -> None:
    gate = asyncio.Event()

    class Waiter(Recorder):
        name = "wait"

        async def arun(self, args: Mapping[str, Any]) -> ToolResult:
            await asyncio.wait_for(gate.wait(), 5)  # deadlocks if run one after the other
            return ToolResult("waited")

    class Opener(Recorder):
        name = "open"

        async def arun(self, args: Mapping[str, Any]) -> ToolResult:
            gate.set()
            return ToolResult("opened")

    model = ScriptedModel([[call("wait"), call("open")], "done"])
    agent = Agent(load(workspace, env), model, tools=[Waiter(), Opener()])
    result = run(agent.run_turn([], "go"))
    assert [r.result.text for r in result.tool_calls] == ["waited", "opened"]


def test_cancelling_a_turn_leaves_no_process_behind(
    workspace: Path, env: dict[str, str], tmp_path: Path
) -> None:
    pidfile = tmp_path / "pid"
    command = f"sleep 30 & echo $! > {pidfile}; wait"
    model = ScriptedModel([call("exec", command=command)])
    agent = Agent(load(workspace, env), model, env=env, exec_policy=YES)

    async def main() -> None:
        task = asyncio.create_task(agent.run_turn([], "sleep"))
        for _ in range(200):
            if pidfile.exists() and pidfile.read_text().strip():
                break
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(main())
    pid = int(pidfile.read_text())
    assert wait_until(lambda: not process_alive(pid), 5)


def test_session_backed_agent_sees_new_skills_on_the_next_turn(
    workspace: Path, env: dict[str, str]
) -> None:
    """§7.4: a turn takes the session's current book at its start; tools follow it."""
    from skillbook.runtime.session import SkillSession

    session = SkillSession(Loader(workspace, env=env, cwd=workspace), watch=False)
    model = ScriptedModel(["one", "two"])
    agent = Agent(session, model, env=env)
    run(agent.run_turn([], "hi"))
    assert "<name>fresh</name>" not in model.requests[0].system
    write_skill(workspace / "skills" / "fresh")
    session.versions.bump(workspace)
    run(agent.run_turn([], "again"))
    assert "<name>fresh</name>" in model.requests[1].system
    read_tool = agent.tools[0]
    assert "fresh" in {s.name for s in read_tool.skills}  # type: ignore[attr-defined]
    session.close()


# --------------------------------------------------------------------------- invoke


def test_dispatch_calls_the_tool_with_raw_args_and_no_model(
    workspace: Path, env: dict[str, str]
) -> None:
    """§6.5 regression: the raw argument text reaches the tool untouched (no stripping)."""
    rec = Recorder()
    agent = Agent(load(workspace, env), None, tools=[rec])
    raw = '  "quoted  arg"  --flag\n  -x  '
    out = run(agent.invoke("/rec" + raw))
    assert out.dispatched and out.text == "recorded" and not out.is_error
    assert rec.calls == [
        {"command": '"quoted  arg"  --flag\n  -x', "commandName": "rec", "skillName": "rec"}
    ]
    run(agent.invoke("/skill rec --keep  these"))
    assert rec.calls[-1]["command"] == "--keep  these"
    run(agent.invoke("/rec"))
    assert rec.calls[-1]["command"] == ""


def test_dispatch_replies(workspace: Path, env: dict[str, str]) -> None:
    """§6.5: missing tool, empty result and failing tool replies."""
    book = load(workspace, env)
    out = run(Agent(book, None, tools=[Recorder()]).invoke("/ghost x"))
    assert out.text == "❌ Tool not available: nope" and out.is_error
    assert run(Agent(book, None, tools=[Recorder("  ")]).invoke("/rec x")).text == "✅ Done."
    failing = run(Agent(book, None, tools=[Recorder("boom", error=True)]).invoke("/rec x"))
    assert failing.text == "❌ boom" and failing.is_error


def test_dispatch_to_exec_runs_the_raw_command_as_the_skill(
    workspace: Path, env: dict[str, str]
) -> None:
    book = load(workspace, env)
    agent = Agent(book, None, env=env)
    out = run(agent.invoke("/sh  printf '%s|' \"a  b\" $PWD"))
    assert out.dispatched and not out.is_error
    assert out.text == f"a  b|{workspace / 'skills' / 'sh'}|"
    exec_tool = agent.tools[1]
    inv = Invocation(agent.commands().get("sh"), " raw ")  # type: ignore[arg-type]
    assert dispatch_arguments(exec_tool, inv) == {"command": " raw ", "skill": "sh"}


def test_slash_command_without_dispatch_is_rewritten_for_the_model(
    workspace: Path, env: dict[str, str]
) -> None:
    """§6.5: `Use the "<skill>" skill for this request.` plus the user input."""
    model = ScriptedModel(["on it"])
    agent = Agent(load(workspace, env), model)
    out = run(agent.invoke("/weather   Shanghai, tomorrow "))
    assert not out.dispatched and out.text == "on it"
    assert out.invocation is not None
    sent = model.requests[0].last.content
    assert sent == 'Use the "weather" skill for this request.\n\nUser input:\nShanghai, tomorrow'
    assert sent == rewrite_for_model(out.invocation)


def test_plain_text_and_unknown_commands_go_to_the_model(
    workspace: Path, env: dict[str, str]
) -> None:
    model = ScriptedModel(["a", "b"])
    agent = Agent(load(workspace, env), model)
    run(agent.invoke("hello"))
    run(agent.invoke("/unknown thing"))
    assert [r.last.content for r in model.requests] == ["hello", "/unknown thing"]


def test_model_bound_request_without_model_raises(workspace: Path, env: dict[str, str]) -> None:
    agent = Agent(load(workspace, env), None)
    with pytest.raises(ModelNotConfigured):
        run(agent.invoke("hello"))


# --------------------------------------------------------------------------- approve


class Approvals:
    """An ``approve`` callback that answers from a list and records what it was asked."""

    def __init__(self, *answers: object, sync: bool = False) -> None:
        self.answers = list(answers)
        self.asked: list[ToolCall] = []
        self.sync = sync

    def __call__(self, tool_call: ToolCall) -> Any:
        self.asked.append(tool_call)
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        if self.sync:
            return answer

        async def later() -> object:
            await asyncio.sleep(0)
            return answer

        return later()


def test_declined_exec_does_not_run_and_the_model_is_told(
    workspace: Path, env: dict[str, str], tmp_path: Path
) -> None:
    """approve=False: nothing runs, the model gets the declined error, the loop goes on."""
    marker = tmp_path / "pwned"
    command = f"touch {marker}"

    def after_decline(req: ScriptedRequest) -> str:
        assert req.last.role == "tool" and req.last.is_error
        assert req.last.content == DECLINED_RESULT
        return "I was not allowed to run it."

    model = ScriptedModel([call("exec", command=command, skill="notes"), after_decline])
    events: list[AgentEvent] = []
    approve = Approvals(False)
    agent = Agent(load(workspace, env), model, env=env, on_event=events.append, approve=approve)
    result = run(agent.run_turn([], "go"))

    assert not marker.exists()
    assert result.final_text == "I was not allowed to run it." and result.stop == "answer"
    assert [c.arguments for c in approve.asked] == [{"command": command, "skill": "notes"}]
    (declined,) = result.tool_calls
    assert declined.skill == "notes" and declined.result == ToolResult(DECLINED_RESULT, True)
    # The UI hears of it; no start/finish pair since nothing ran.
    kinds = [type(e) for e in events if not isinstance(e, TextDelta)]
    assert kinds == [ToolDeclined, TurnEnded]
    assert events[0] == ToolDeclined(approve.asked[0], "notes", command)


@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
def test_approved_exec_runs(
    workspace: Path, env: dict[str, str], tmp_path: Path, sync: bool
) -> None:
    marker = tmp_path / "made"
    model = ScriptedModel([call("exec", command=f"touch {marker} && echo ok"), "done"])
    approve = Approvals(True, sync=sync)
    result = run(Agent(load(workspace, env), model, env=env, approve=approve).run_turn([], "go"))
    assert marker.exists() and result.tool_calls[0].result.text.strip() == "ok"
    assert len(approve.asked) == 1


def test_only_true_approves_and_a_failing_approve_declines(
    workspace: Path, env: dict[str, str], tmp_path: Path
) -> None:
    """Fail closed: a truthy non-True answer or an exception in approve runs nothing."""
    marker = tmp_path / "pwned"
    calls = [call("exec", command=f"touch {marker}") for _ in range(3)]
    model = ScriptedModel([calls, "ok"])
    approve = Approvals("yes", 1, RuntimeError("terminal gone"), sync=True)
    result = run(Agent(load(workspace, env), model, env=env, approve=approve).run_turn([], "go"))
    assert not marker.exists() and len(approve.asked) == 3
    assert [r.result.text for r in result.tool_calls] == [DECLINED_RESULT] * 3


def test_approve_is_asked_in_order_before_any_call_of_the_step_runs(
    workspace: Path, env: dict[str, str], tmp_path: Path
) -> None:
    """Several exec calls in one step: one question at a time, then the allowed ones run."""
    log = tmp_path / "log"
    first, second = (call("exec", command=f"echo {n} >> {log}") for n in ("one", "two"))
    model = ScriptedModel([[first, second], "ok"])
    seen: list[bool] = []

    def approve(tool_call: ToolCall) -> bool:
        seen.append(log.exists())
        return tool_call.arguments == second.arguments  # ids are assigned by the model

    result = run(Agent(load(workspace, env), model, env=env, approve=approve).run_turn([], "go"))
    assert seen == [False, False]
    assert log.read_text() == "two\n"
    assert [r.result.is_error for r in result.tool_calls] == [True, False]


def test_approve_is_not_asked_for_read_nor_for_slash_commands(
    workspace: Path, env: dict[str, str], exec_ws: Path
) -> None:
    """Only the model's exec calls are asked about: reads are not, and slash commands
    the user typed (command-dispatch: tool to exec, commandExec) run as typed."""
    book = load(workspace, env)
    approve = Approvals()  # any question would fail: there is no answer to pop
    bad_json = ToolCall("c1", "exec", {}, "the arguments are not valid JSON")
    model = ScriptedModel([[call("read", path=location(book, "weather")), bad_json], "read it"])
    agent = Agent(book, model, env=env, approve=approve)
    result = run(agent.run_turn([], "go"))
    assert result.final_text == "read it" and not result.tool_calls[0].result.is_error
    out = run(agent.invoke("/sh echo typed"))
    assert out.dispatched and out.text == "typed"
    probe = Agent(load_exec(exec_ws, env), None, env=env, approve=approve)
    assert run(probe.invoke("/probe Shanghai")).text == probe_text(exec_ws, "Shanghai")
    assert approve.asked == []


# --------------------------------------------------------------------------- model_from_env


@pytest.mark.parametrize(
    ("given", "kwargs", "expected"),
    [
        ({"OPENAI_API_KEY": "k"}, {}, ("openai", "gpt-4o-mini", None, "k")),
        ({"ANTHROPIC_API_KEY": "a"}, {}, ("anthropic", "claude-sonnet-4-5", None, "a")),
        (
            {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "a", "SKILLBOOK_MODEL": "claude-x"},
            {},
            ("anthropic", "claude-x", None, "a"),
        ),
        (
            {"SKILLBOOK_MODEL": "llama3.2"},
            {"base_url": "http://localhost:11434/v1"},
            ("openai", "llama3.2", "http://localhost:11434/v1", "not-needed"),
        ),
        (
            {"SKILLBOOK_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "k"},
            {"model": "m"},
            ("anthropic", "m", None, "a"),
        ),
        (
            {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://h/v1", "SKILLBOOK_MODEL": "m"},
            {"provider": "openai", "api_key": "flag"},
            ("openai", "m", "http://h/v1", "flag"),
        ),
    ],
)
def test_model_config_precedence(
    given: dict[str, str], kwargs: dict[str, str], expected: tuple[str, str, str | None, str]
) -> None:
    cfg = resolve_model_config(given, **kwargs)
    assert (cfg.provider, cfg.model, cfg.base_url, cfg.api_key) == expected


def test_model_not_configured_is_one_line() -> None:
    with pytest.raises(ModelNotConfigured) as info:
        resolve_model_config({})
    assert str(info.value) == NOT_CONFIGURED and "\n" not in NOT_CONFIGURED
    with pytest.raises(ModelNotConfigured, match="no model name for http://x/v1"):
        resolve_model_config({}, base_url="http://x/v1")
    with pytest.raises(ModelNotConfigured, match="unknown provider 'gemini'"):
        resolve_model_config({"SKILLBOOK_PROVIDER": "gemini"})


# --------------------------------------------------------------------------- commandExec

#: Shows exactly what the command got: $0, $#, $1, SKILL_ARGS, the folder and a key.
PROBE = (
    "printf '0=%s|n=%s|1=%s|env=%s|pwd=%s|key=%s|units=%s' "
    '"$0" "$#" "$1" "$SKILL_ARGS" "$PWD" "${PROBE_KEY:-}" "${UNITS:-}"'
)
NASTY = [
    "Shanghai",
    "a; rm -rf ./victim; echo pwned",
    "$(touch pwned) `touch pwned2` ${HOME} $HOME",
    """ "double" 'single' \\"escaped\\" """,
    "line one\nline two; touch pwned3",
    "* ? [a-z] ~ && || | > out < in &",
    "-n --help",
    "'; exit 7; '",
]


@pytest.fixture
def exec_ws(env: Mapping[str, str]) -> Path:
    ws = Path(env["HOME"]) / "exec-ws"
    skills = ws / "skills"
    write_skill(
        skills / "probe",
        metadata={"openclaw": {"primaryEnv": "PROBE_KEY"}, "skillbook": {"commandExec": PROBE}},
    )
    write_skill(
        skills / "other", metadata={"skillbook": {"commandExec": 'echo "[${PROBE_KEY:-}]"'}}
    )
    write_skill(skills / "fail", metadata={"skillbook": {"commandExec": "echo oops; exit 3"}})
    write_skill(
        skills / "both",
        command_dispatch="tool",
        command_tool="record",
        metadata={"skillbook": {"commandExec": "touch never-run"}},
    )
    (skills / "probe" / "victim").write_text("keep me", encoding="utf-8")
    return ws


def load_exec(ws: Path, env: Mapping[str, str]) -> SkillBook:
    from skillbook.config.file import Config

    config = Config.from_mapping(
        {"skills": {"entries": {"probe": {"apiKey": "k-123456", "env": {"UNITS": "metric"}}}}}
    )
    return Loader(ws, env=env, cwd=ws, config=config).load()


def probe_text(ws: Path, args: str | None) -> str:
    n = 1 if args else 0
    return (
        f"0=probe|n={n}|1={args or ''}|env={args or ''}|pwd={ws / 'skills' / 'probe'}"
        "|key=***|units=metric"
    )


@pytest.mark.parametrize("args", NASTY, ids=range(len(NASTY)))
def test_command_exec_gets_the_args_as_data_never_as_command_text(
    exec_ws: Path, env: dict[str, str], args: str
) -> None:
    """No injection: the raw text is $1 and SKILL_ARGS, whatever it holds; no model."""
    agent = Agent(load_exec(exec_ws, env), None, env=env)
    out = run(agent.invoke(f"/probe {args}"))
    assert out.dispatched and not out.is_error, out.text
    assert out.text == probe_text(exec_ws, args.strip())
    folder = exec_ws / "skills" / "probe"
    assert sorted(p.name for p in folder.iterdir()) == ["SKILL.md", "victim"]
    assert not (exec_ws / "skills" / "pwned").exists()


def test_command_exec_without_args_has_no_positional_parameter(
    exec_ws: Path, env: dict[str, str]
) -> None:
    agent = Agent(load_exec(exec_ws, env), None, env=env)
    assert run(agent.invoke("/probe")).text == probe_text(exec_ws, None)
    assert run(agent.invoke("/skill probe   ")).text == probe_text(exec_ws, None)
    assert run(agent.invoke("/skill probe two words")).text == probe_text(exec_ws, "two words")


def test_command_exec_runs_with_that_skills_env_only(exec_ws: Path, env: dict[str, str]) -> None:
    """§11.3 scoped env: probe's key is visible (and redacted) to probe, not to other."""
    agent = Agent(load_exec(exec_ws, env), None, env=env)
    assert "key=***|units=metric" in run(agent.invoke("/probe x")).text
    assert run(agent.invoke("/other x")).text == "[]"
    assert "PROBE_KEY" not in os.environ


def test_command_exec_is_recorded_as_an_exec_call_with_events(
    exec_ws: Path, env: dict[str, str]
) -> None:
    events: list[AgentEvent] = []
    model = ScriptedModel([])
    agent = Agent(load_exec(exec_ws, env), model, env=env, on_event=events.append)
    out = run(agent.invoke("/probe Shanghai"))
    assert model.requests == [] and out.turn is None
    assert out.tool_run is not None and out.tool_run.skill == "probe"
    assert out.tool_run.call.name == "exec"
    assert out.tool_run.call.arguments == {"command": PROBE, "skill": "probe"}
    started = [e for e in events if isinstance(e, ToolStarted)]
    assert [(e.call.name, e.skill, e.target) for e in started] == [("exec", "probe", PROBE)]
    assert [type(e) for e in events] == [ToolStarted, ToolFinished]


def test_command_exec_failure_and_nul_replies(exec_ws: Path, env: dict[str, str]) -> None:
    agent = Agent(load_exec(exec_ws, env), None, env=env)
    failed = run(agent.invoke("/fail now"))
    assert failed.dispatched and failed.is_error and failed.text == "❌ exit code 3\noops"
    nul = run(agent.invoke("/probe a\x00b"))
    assert nul.is_error and nul.text.startswith("❌ exec: the arguments hold a NUL character")


def test_command_exec_precedence_and_missing_exec(exec_ws: Path, env: dict[str, str]) -> None:
    """command-dispatch: tool wins; an agent without exec does not run commands."""
    book = load_exec(exec_ws, env)
    rec = Recorder()
    out = run(Agent(book, None, tools=[rec]).invoke("/both x"))
    assert out.text == "recorded" and rec.calls[0]["command"] == "x"
    assert not (exec_ws / "skills" / "both" / "never-run").exists()
    missing = run(Agent(book, None, tools=[rec]).invoke("/probe x"))
    assert missing.is_error and missing.text == "❌ Tool not available: exec"
    assert len(rec.calls) == 1


def test_exec_tool_run_dispatch_sync_matches_async(exec_ws: Path, env: dict[str, str]) -> None:
    from skillbook.runtime.tools import ExecTool

    agent = Agent(load_exec(exec_ws, env), None, env=env)
    tool = next(t for t in agent.tools if isinstance(t, ExecTool))
    sync = tool.run_dispatch(PROBE, skill="probe", args="a b")
    assert sync == run(tool.arun_dispatch(PROBE, skill="probe", args="a b"))
    assert sync.text == probe_text(exec_ws, "a b")
    # The plain exec tool is unchanged: no positional parameters, no SKILL_ARGS.
    plain = tool.run({"command": 'printf "%s|%s" "$#" "${SKILL_ARGS-unset}"', "skill": "probe"})
    assert plain.text == "0|unset"
