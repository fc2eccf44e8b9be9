"""``exec`` commands and their background children (``skillbook.runtime._proc``).

A finished command's process group is killed, so ``cmd &`` never outlives it; a skill
with ``metadata.skillbook.detach: true`` keeps its background processes.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest
from factories import process_alive, wait_until

from skillbook.config.file import Config
from skillbook.model import Skill
from skillbook.runtime.tools import ExecTool

pytestmark = pytest.mark.skipif(os.name != "posix", reason="process groups are POSIX")

#: How long a killed process may take to be seen as gone (a wait, not an assertion).
SETTLE_S = 10.0


def tool(tmp_path: Path, *skills: Skill) -> ExecTool:
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C"}
    return ExecTool(skills, config=Config.empty(), base_env=base, workspace=tmp_path)


def skill(tmp_path: Path, *, detach: object) -> Skill:
    folder = tmp_path / "daemon"
    folder.mkdir(exist_ok=True)
    meta = '{"skillbook": {"detach": %s}}' % ("true" if detach is True else '"yes"')
    return Skill.create(
        "daemon", "starts a server", base_dir=folder, frontmatter={"metadata": meta}
    )


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_background_children_do_not_outlive_the_command(tmp_path: Path, mode: str) -> None:
    pidfile = tmp_path / "bg.pid"
    command = f"sleep 300 & echo $! > {pidfile}; echo started"
    exec_ = tool(tmp_path)
    if mode == "sync":
        result = exec_.run({"command": command})
    else:
        result = asyncio.run(exec_.arun({"command": command}))
    assert result.text == "started\n" and not result.is_error
    assert wait_until(lambda: not process_alive(int(pidfile.read_text())), SETTLE_S)


def test_a_child_that_closed_its_output_is_killed_too(tmp_path: Path) -> None:
    """The shell outlives its output pipe; when it exits, its group is still killed."""
    pidfile = tmp_path / "bg.pid"
    command = f"exec >/dev/null 2>&1; sleep 300 & echo $! > {pidfile}; sleep 0.2"
    result = tool(tmp_path).run({"command": command})
    assert result.text == "(no output)"
    assert wait_until(lambda: not process_alive(int(pidfile.read_text())), SETTLE_S)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_detaching_skill_keeps_its_background_process(tmp_path: Path, mode: str) -> None:
    daemon = skill(tmp_path, detach=True)
    pidfile = tmp_path / "bg.pid"
    command = f"sleep 300 >/dev/null 2>&1 & echo $! > {pidfile}; echo started"
    exec_ = tool(tmp_path, daemon)
    args = {"command": command, "skill": "daemon"}
    result = exec_.run(args) if mode == "sync" else asyncio.run(exec_.arun(args))
    pid = int(pidfile.read_text())
    try:
        assert result.text == "started\n"
        assert process_alive(pid)
    finally:
        os.kill(pid, signal.SIGKILL)


def test_detach_needs_a_literal_true_and_the_skill(tmp_path: Path) -> None:
    loose = skill(tmp_path, detach="yes")
    pidfile = tmp_path / "bg.pid"
    command = f"sleep 300 >/dev/null 2>&1 & echo $! > {pidfile}"
    tool(tmp_path, loose).run({"command": command, "skill": "daemon"})
    assert wait_until(lambda: not process_alive(int(pidfile.read_text())), SETTLE_S)
    strict = skill(tmp_path, detach=True)
    tool(tmp_path, strict).run({"command": command})  # no `skill`: not the skill's command
    assert wait_until(lambda: not process_alive(int(pidfile.read_text())), SETTLE_S)


@pytest.mark.parametrize("timeout", [float("nan"), float("inf"), -1.0])
def test_non_finite_or_negative_timeout_arguments_are_tool_errors(
    tmp_path: Path, timeout: float
) -> None:
    result = tool(tmp_path).run({"command": "true", "timeout": timeout})
    assert result.is_error and "finite number > 0" in result.text


def test_an_environment_no_process_takes_is_a_tool_error(tmp_path: Path) -> None:
    """A Config built in code skips the config-time check: still a tool error, and the
    skill's env overlay refuses such a name rather than passing it on."""
    from types import MappingProxyType

    from skillbook.config.file import SkillEntryConfig, SkillsConfig
    from skillbook.runtime.env import REASON_BAD_NAME, skill_env

    folder = tmp_path / "s"
    folder.mkdir()
    sk = Skill.create("s", "d", base_dir=folder)
    entry = SkillEntryConfig(env=MappingProxyType({"A=B": "x", "OK": "y"}))
    cfg = Config(skills=SkillsConfig(entries=MappingProxyType({"s": entry})))
    overlay = skill_env(sk, config=cfg, base_env={})
    assert overlay.values == {"OK": "y"} and ("A=B", REASON_BAD_NAME) in overlay.blocked
    bad_base = ExecTool([], config=Config.empty(), base_env={"X=Y": "1"}, workspace=tmp_path)
    for result in (
        bad_base.run({"command": "true"}),
        asyncio.run(bad_base.arun({"command": "true"})),
    ):
        assert result.is_error and "environment is invalid" in result.text
