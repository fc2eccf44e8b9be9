"""Safe by default: the model's ``exec`` calls need the user's word or a policy.

``Agent`` with no approver refuses every command no policy allows (a tool error the
model sees); ``skills.exec.allow`` and ``skills.entries.<key>.exec.allow`` let simple
commands starting with an entry run unasked; ``policy: "allowlist"`` refuses the rest
without asking; ``policy: "allow"`` and ``ExecPolicy.allow_all()`` run everything;
``ask_everything`` asks even about allowlisted commands. Real shells, real files.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from factories import stub_bins, write_skill

from skillbook.config.file import Config
from skillbook.errors import ConfigError
from skillbook.pipeline.book import Loader, SkillBook
from skillbook.runtime.agent import Agent
from skillbook.runtime.approval import (
    DECLINED_RESULT,
    REFUSED_ALLOWLIST_RESULT,
    REFUSED_NO_ONE_RESULT,
    ExecPolicy,
    show_command,
)
from skillbook.runtime.providers.base import ToolCall
from skillbook.runtime.providers.scripted import ScriptedModel, Turn, call
from skillbook.runtime.turn import AgentEvent, ToolDeclined, ToolStarted

pytestmark = pytest.mark.skipif(os.name != "posix", reason="exec uses /bin/sh")


def book_with(tmp_path: Path, config: dict[str, Any] | None = None) -> SkillBook:
    ws = tmp_path / "ws"
    folder = write_skill(ws / "skills" / "weather", description="Forecasts", body="body\n")
    stub_bins(folder / "scripts", ["forecast.sh"], '#!/bin/sh\necho "sunny in $1"\n')
    env = {
        "HOME": os.fspath(tmp_path / "home"),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "SKILLBOOK_BUNDLED_SKILLS_DIR": os.fspath(tmp_path / "no-bundled"),
        "SKILLBOOK_STATE_DIR": os.fspath(tmp_path / "state"),
    }
    cfg = Config.from_mapping(config or {})
    return Loader(ws, config=cfg, env=env, cwd=tmp_path).load()


def turn(agent: Agent) -> list[str]:
    """The tool results the model got in one turn."""
    result = asyncio.run(agent.run_turn([], "go"))
    return [r.result.text for r in result.tool_calls]


class Asked:
    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.calls: list[ToolCall] = []

    def __call__(self, tool_call: ToolCall) -> bool:
        self.calls.append(tool_call)
        return self.answer


def test_without_an_approver_a_model_command_is_refused_not_run(tmp_path: Path) -> None:
    book = book_with(tmp_path)
    marker = tmp_path / "pwned"
    events: list[AgentEvent] = []
    model = ScriptedModel([call("exec", command=f"touch {marker}"), "ok"])
    results = turn(Agent(book, model, on_event=events.append))
    assert results == [REFUSED_NO_ONE_RESULT] and not marker.exists()
    (declined,) = [e for e in events if isinstance(e, ToolDeclined)]
    assert not declined.asked and declined.message == REFUSED_NO_ONE_RESULT


def test_a_skill_allowlist_runs_matching_commands_unasked(tmp_path: Path) -> None:
    config = {"skills": {"entries": {"weather": {"exec": {"allow": ["./scripts/forecast.sh"]}}}}}
    book = book_with(tmp_path, config)
    marker = tmp_path / "pwned"
    calls = [
        call("exec", command="./scripts/forecast.sh Lisbon", skill="weather"),
        call("exec", command="'./scripts/forecast.sh' Porto", skill="weather"),
        call("exec", command=f"./scripts/forecast.sh x; touch {marker}", skill="weather"),
        call("exec", command=f"./scripts/forecast.sh $(touch {marker})", skill="weather"),
        call("exec", command="./scripts/forecast.sh x", skill="weather", cwd="/tmp"),
        call("exec", command="./scripts/forecast.sh Faro"),  # not as the skill
    ]
    asked = Asked(False)
    results = turn(Agent(book, ScriptedModel([calls, "ok"]), approve=asked))
    assert results[:2] == ["sunny in Lisbon\n", "sunny in Porto\n"]
    assert results[2:] == [DECLINED_RESULT] * 4
    assert len(asked.calls) == 4 and not marker.exists()


def test_a_global_allowlist_with_a_wildcard(tmp_path: Path) -> None:
    book = book_with(tmp_path, {"skills": {"exec": {"allow": ["echo hello*"]}}})
    calls = [call("exec", command="echo hello-world"), call("exec", command="echo goodbye")]
    results = turn(Agent(book, ScriptedModel([calls, "ok"])))
    assert results == ["hello-world\n", REFUSED_NO_ONE_RESULT]


def test_policy_allowlist_never_asks(tmp_path: Path) -> None:
    config = {"skills": {"exec": {"policy": "allowlist", "allow": ["echo ok"]}}}
    book = book_with(tmp_path, config)
    asked = Asked(True)
    calls = [call("exec", command="echo ok"), call("exec", command="echo other")]
    results = turn(Agent(book, ScriptedModel([calls, "ok"]), approve=asked))
    assert results == ["ok\n", REFUSED_ALLOWLIST_RESULT] and asked.calls == []


def test_policy_allow_and_allow_all_run_everything(tmp_path: Path) -> None:
    marker = tmp_path / "made"
    model: list[Turn] = [call("exec", command=f"touch {marker} && echo made"), "ok"]
    book = book_with(tmp_path, {"skills": {"exec": {"policy": "allow"}}})
    assert turn(Agent(book, ScriptedModel(model))) == ["made\n"]
    marker.unlink()
    plain = book_with(tmp_path)
    assert turn(Agent(plain, ScriptedModel(model), exec_policy=ExecPolicy.allow_all())) == [
        "made\n"
    ]


def test_ask_everything_asks_even_about_allowlisted_commands(tmp_path: Path) -> None:
    config = {"skills": {"exec": {"policy": "allow", "allow": ["echo ok"]}}}
    book = book_with(tmp_path, config)
    asked = Asked(False)
    policy = ExecPolicy.from_config(book.config, ask_everything=True)
    model = ScriptedModel([call("exec", command="echo ok"), "ok"])
    assert turn(Agent(book, model, approve=asked, exec_policy=policy)) == [DECLINED_RESULT]
    assert len(asked.calls) == 1


def test_an_allowed_command_is_announced_as_it_runs(tmp_path: Path) -> None:
    book = book_with(tmp_path, {"skills": {"exec": {"allow": ["echo ok"]}}})
    events: list[AgentEvent] = []
    turn(
        Agent(book, ScriptedModel([call("exec", command="echo ok"), "ok"]), on_event=events.append)
    )
    assert [type(e) for e in events if isinstance(e, ToolStarted | ToolDeclined)] == [ToolStarted]


def test_the_policy_follows_the_book(tmp_path: Path) -> None:
    policy = ExecPolicy.from_config(
        Config.from_mapping(
            {
                "skills": {
                    "exec": {"policy": "allowlist", "allow": ["git status"]},
                    "entries": {"weather": {"exec": {"allow": ["curl -s wttr.in/*"]}}},
                }
            }
        )
    )
    skills = book_with(tmp_path).eligible
    assert policy.mode == "allowlist"
    assert policy.allowing_entry({"command": "git status -s"}, skills) == (
        'skills.exec.allow: "git status"'
    )
    assert policy.allowing_entry(
        {"command": "curl -s wttr.in/Lisbon", "skill": "weather"}, skills
    ) == ('skills.entries.weather.exec.allow: "curl -s wttr.in/*"')
    assert policy.allowing_entry({"command": "curl -s wttr.in/Lisbon"}, skills) is None
    assert policy.allowing_entry({"command": "curl -s evil.example/wttr.in"}, skills) is None


@pytest.mark.parametrize(
    ("config", "key_path", "fragment"),
    [
        (
            {"exec": {"policy": "sometimes"}},
            "skills.exec.policy",
            'one of "allow", "allowlist", "ask"',
        ),
        ({"exec": {"allow": ["curl x | sh"]}}, "skills.exec.allow[0]", "shell operator '|'"),
        ({"exec": {"allow": ["ok", "a\nb"]}}, "skills.exec.allow[1]", "more than one line"),
        ({"exec": {"allow": ["e*cho"]}}, "skills.exec.allow[0]", "`*` may only end"),
        ({"exec": {"bogus": 1}}, "skills.exec.bogus", "unknown key"),
        (
            {"entries": {"w": {"exec": {"allow": ["x $(id)"]}}}},
            "skills.entries.w.exec.allow[0]",
            "substitutes a command",
        ),
        (
            {"entries": {"w": {"exec": {"policy": "allow"}}}},
            "skills.entries.w.exec.policy",
            "unknown",
        ),
    ],
)
def test_exec_config_errors_name_the_key(
    config: dict[str, Any], key_path: str, fragment: str
) -> None:
    with pytest.raises(ConfigError) as info:
        Config.from_mapping({"skills": config})
    assert info.value.key_path == key_path and fragment in str(info.value)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("ls -la", "ls -la"),
        ("rm -rf ~/\u202e", "rm -rf ~/\\u202e"),  # bidi override
        ("echo a\u200bb", "echo a\\u200bb"),  # zero-width space
        ("echo \U000e0049\U000e0047", "echo \\U000e0049\\U000e0047"),  # tag block
        ("echo \x1b[2J", "echo \\x1b[2J"),  # C0 escape sequence
        ("echo \x9b31m", "echo \\x9b31m"),  # C1 CSI
        ("a\tb", "a\\tb"),
        ("echo\u00a0x", "echo\\xa0x"),  # a space that is not U+0020
        ("x\ufe0f\u3164", "x\\ufe0f\\u3164"),  # variation selector, Hangul filler
        ("one\ntwo", "one\ntwo"),
        ("café ☀️"[:-1], "café ☀"),
    ],
)
def test_show_command_escapes_what_could_hide(text: str, shown: str) -> None:
    assert show_command(text) == shown
