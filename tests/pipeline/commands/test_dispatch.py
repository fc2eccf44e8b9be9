"""skillbook's ``metadata.skillbook.commandExec`` extension (``skillbook.pipeline.commands.dispatch``).

Spec §6.5 (§12 "Commands"): ``command-dispatch: tool`` dispatches to a tool, other
commands are rewritten for the model; this extension adds a third way, a skill's own
command run with no model, below OpenClaw's tool dispatch in precedence. Also the
framework adapters' shared helper (``integrations._common``) with runtime targets.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from factories import skill_text, write_skill

from skillbook.model import CommandDispatch, Skill, Source
from skillbook.pipeline.commands.dispatch import (
    ARGS_ENV,
    KIND_EXEC,
    KIND_MODEL,
    KIND_TOOL,
    ExecDispatch,
    command_dispatch,
    dispatch_kind,
    exec_dispatch,
    exec_dispatch_diagnostics,
    find_skill,
)
from skillbook.pipeline.commands.specs import CommandSpec, build_command_specs
from skillbook.pipeline.parse.skill_file import parse_skill_text

REPO = Path(__file__).resolve().parents[3]
AUTHORING = REPO / "docs" / "authoring.md"
POSIX = pytest.mark.skipif(os.name != "posix" or not shutil.which("sh"), reason="needs /bin/sh")

BLOCK = """metadata:
  openclaw:
    emoji: "☔"
  skillbook:
    commandExec: ./scripts/forecast.sh "$1"
"""
ONE_LINER = 'metadata: {"skillbook": {"commandExec": "./scripts/forecast.sh \\"$1\\""}}'
WANT = './scripts/forecast.sh "$1"'


def skill_from(
    frontmatter: str,
    *,
    name: str = "weather",
    source: Source = Source.WORKSPACE,
    folder: Path = Path("/skills/weather"),
) -> Skill:
    text = skill_text(name, f"The {name} skill.", raw=frontmatter.strip())
    parsed = parse_skill_text(text, path=folder / "SKILL.md")
    origin = "https://mcp.example/skills" if source == Source.REMOTE else None
    return Skill(
        name, parsed.description, folder / "SKILL.md", folder, source, parsed, origin=origin
    )


def codes(skill: Skill) -> list[str]:
    return [d.code for d in exec_dispatch_diagnostics(skill)]


# --------------------------------------------------------------------------- reading


def test_command_exec_from_a_block_yaml_mapping() -> None:
    skill = skill_from(BLOCK)
    assert skill.frontmatter.yaml_ok
    assert exec_dispatch(skill) == ExecDispatch(WANT)
    assert exec_dispatch(skill).to_json() == {"kind": "exec", "command": WANT}  # type: ignore[union-attr]
    assert codes(skill) == []
    # The OpenClaw manifest next to it is unaffected.
    assert skill.metadata is not None and skill.metadata.emoji == "☔"


def test_command_exec_from_a_json_one_liner() -> None:
    assert exec_dispatch(skill_from(ONE_LINER)) == ExecDispatch(WANT)


def test_command_exec_when_yaml_failed_reads_the_json5_string() -> None:
    """Checklist (frontmatter): YAML fails on `a: b` in a value → line parser; the
    `metadata` string is then read as JSON5, as OpenClaw reads it."""
    text = 'x-note: Forecasts. Note: needs curl\nmetadata: {skillbook: {commandExec: "echo hi",},}'
    skill = skill_from(text)
    assert not skill.frontmatter.yaml_ok
    assert exec_dispatch(skill) == ExecDispatch("echo hi")


def test_command_exec_from_a_quoted_json_string_under_yaml() -> None:
    skill = skill_from("""metadata: '{"skillbook": {"commandExec": "echo quoted"}}'""")
    assert skill.frontmatter.yaml_ok
    assert exec_dispatch(skill) == ExecDispatch("echo quoted")


def test_the_one_liner_in_the_authoring_guide_gives_the_block_command() -> None:
    guide = AUTHORING.read_text(encoding="utf-8")
    section = guide.split("### 2.7 Slash commands that run a command", 1)[1].split("\n## ", 1)[0]
    line = next(x for x in section.split("`") if x.startswith("metadata: {"))
    assert exec_dispatch(skill_from(line)) == ExecDispatch(WANT)
    assert "commandExec: " + WANT in section


@pytest.mark.parametrize(
    ("frontmatter", "kind"),
    [
        ("metadata:\n  skillbook:\n    commandExec: 42", "a number"),
        ("metadata:\n  skillbook:\n    commandExec: ''", "an empty string"),
        ("metadata:\n  skillbook:\n    commandExec: '   '", "an empty string"),
        ("metadata:\n  skillbook:\n    commandExec:\n      - ls", "a list"),
        ("metadata:\n  skillbook:\n    commandExec:", "null"),
        ('metadata: {"skillbook": {"commandExec": true}}', "a boolean"),
    ],
)
def test_a_command_exec_that_is_not_a_command_is_ignored_with_a_warning(
    frontmatter: str, kind: str
) -> None:
    skill = skill_from(frontmatter)
    assert exec_dispatch(skill) is None
    (diag,) = exec_dispatch_diagnostics(skill)
    assert diag.code == "command.exec-ignored" and diag.severity == "warning"
    assert kind in diag.message and "/weather" in diag.message
    assert diag.path == skill.file_path and diag.line == 4 and diag.skill == "weather"


@pytest.mark.parametrize(
    "frontmatter",
    [
        "",
        'metadata: {"openclaw": {"emoji": "x"}}',
        "metadata:\n  skillbook:\n    other: 1",
        "metadata:\n  skillbook: just a string",
        "metadata: not json at all",
        'metadata: {"skillbook": ',
    ],
)
def test_no_command_exec_means_no_dispatch_and_no_diagnostic(frontmatter: str) -> None:
    skill = skill_from(frontmatter)
    assert exec_dispatch(skill) is None
    assert codes(skill) == []


# --------------------------------------------------------------------------- precedence


def test_openclaw_tool_dispatch_wins_over_command_exec() -> None:
    """§6.5 first: `command-dispatch: tool` keeps its meaning; commandExec is reported."""
    skill = skill_from("command-dispatch: tool\ncommand-tool: exec\n" + BLOCK)
    assert skill.dispatch == CommandDispatch("exec")
    assert exec_dispatch(skill) is None
    (spec,) = build_command_specs([skill]).commands
    assert command_dispatch(spec, [skill]) == CommandDispatch("exec")
    assert dispatch_kind(spec, [skill]) == KIND_TOOL
    (diag,) = exec_dispatch_diagnostics(skill)
    assert diag.code == "command.exec-ignored" and "command-dispatch: tool" in diag.message


def test_a_dispatch_without_command_tool_leaves_command_exec_in_charge() -> None:
    """`command-dispatch: tool` without `command-tool` is no dispatch (parse.dispatch-no-tool)."""
    skill = skill_from("command-dispatch: tool\n" + BLOCK)
    assert skill.dispatch is None
    assert exec_dispatch(skill) == ExecDispatch(WANT)


def test_remote_skills_never_get_exec_dispatch() -> None:
    """mcp-skills §4.2: a remote skill is never executed implicitly."""
    skill = skill_from(BLOCK, source=Source.REMOTE)
    assert exec_dispatch(skill) is None
    (spec,) = build_command_specs([skill]).commands
    assert command_dispatch(spec, [skill]) is None
    assert dispatch_kind(spec, [skill]) == KIND_MODEL
    (diag,) = exec_dispatch_diagnostics(skill)
    assert "remote MCP server" in diag.message and "https://mcp.example/skills" in diag.message


def test_dispatch_kind_of_each_command_and_find_skill() -> None:
    skills = [
        skill_from(BLOCK, name="weather"),
        skill_from("command-dispatch: tool\ncommand-tool: record", name="rec"),
        skill_from("", name="notes"),
    ]
    specs = build_command_specs(skills).commands
    assert [dispatch_kind(s, skills) for s in specs] == [KIND_EXEC, KIND_TOOL, KIND_MODEL]
    assert find_skill(specs[0], skills) is skills[0]
    orphan = CommandSpec("gone", "gone", "No such skill.")
    assert find_skill(orphan, skills) is None
    assert dispatch_kind(orphan, skills) == KIND_MODEL


def test_parse_and_openclaw_shapes_are_unchanged_by_the_extension() -> None:
    """The model stays OpenClaw-shaped: no dispatch on the parsed file, no extra JSON."""
    skill = skill_from(BLOCK)
    assert skill.dispatch is None
    (spec,) = build_command_specs([skill]).commands
    assert spec.to_json() == {
        "name": "weather",
        "skillName": "weather",
        "description": "The weather skill.",
    }


# --------------------------------------------------------------------------- integrations


def _book(tmp_path: Path, env: Mapping[str, str]) -> Any:
    from skillbook.pipeline.book import Loader

    ws = tmp_path / "ws"
    write_skill(
        ws / "skills" / "echo",
        description="Echo the arguments.",
        body="# Echo\n",
        metadata={"skillbook": {"commandExec": f'printf \'[%s] %s|\' "$1" "${ARGS_ENV}"'}},
    )
    (tmp_path / "bundled").mkdir()
    full = {
        "HOME": str(tmp_path / "home"),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "SKILLBOOK_BUNDLED_SKILLS_DIR": str(tmp_path / "bundled"),
        "SKILLBOOK_STATE_DIR": str(tmp_path / "state"),
        **env,
    }
    return Loader(ws, env=full, cwd=ws).load()


@POSIX
def test_adapter_helper_runs_command_exec_through_a_runtime_exec(tmp_path: Path) -> None:
    from skillbook.integrations._common import adispatch, dispatch, runtime_target, runtime_tools

    book = _book(tmp_path, {})
    targets = [runtime_target(t) for t in runtime_tools(book)]
    raw = "a; rm -rf / $(id)"
    out = dispatch(book, f"/echo {raw}", targets)
    assert out is not None and out.dispatched and not out.is_error
    assert out.reply == f"[{raw}] {raw}|"
    again = asyncio.run(adispatch(book, f"/skill echo {raw}", targets))
    assert again is not None and again.reply == out.reply


@POSIX
def test_adapter_helper_without_exec_says_so_and_named_exec_falls_back(tmp_path: Path) -> None:
    from skillbook.integrations._common import (
        Target,
        adispatch,
        dispatch,
        runtime_target,
        runtime_tools,
    )
    from skillbook.runtime.tools import ToolResult

    book = _book(tmp_path, {})
    read_only = [runtime_target(t) for t in runtime_tools(book) if t.name == "read"]
    out = dispatch(book, "/echo x", read_only)
    assert out is not None and out.is_error and out.reply == "❌ Tool not available: exec"

    async def never(args: dict[str, Any]) -> ToolResult:
        raise AssertionError("commandExec must not call the framework tool")

    def never_sync(args: dict[str, Any]) -> ToolResult:
        raise AssertionError("commandExec must not call the framework tool")

    # A framework's own wrapper named exec (its runtime tool out of reach).
    wrapped = [Target("exec", {"type": "object"}, never, never_sync)]
    out = dispatch(book, "/echo x", wrapped)
    assert out is not None and out.reply == "[x] x|"
    again = asyncio.run(adispatch(book, "/echo y", wrapped))
    assert again is not None and again.reply == "[y] y|"
