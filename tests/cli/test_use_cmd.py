"""``skillbook use NAME``: the ``skills use`` prompt for a workspace skill or an agent's one.

The text itself is compared with the real ``skills use`` in
tests/distribution/agents/test_agents_twins.py; here: resolution, the support folder
rule, JSON and errors.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from factories import skill_text, write_file

from skillbook.cli.app import cli
from skillbook.cli.use_cmd import has_supporting_files, use_prompt


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".state"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    root = tmp_path / "project"
    root.mkdir()
    return root


def run(project: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--workspace", str(project), *args])
    return result.exit_code, result.output


def test_prompt_without_other_files_is_preamble_and_skill_md() -> None:
    assert use_prompt("---\nname: x\n---\nBody\n", None) == (
        "You are being given a Skill to execute for the user's next request.\n\n"
        "Use the following SKILL.md as your instructions:\n\n"
        "<SKILL.md>\n---\nname: x\n---\nBody\n\n</SKILL.md>\n"
    )


def test_a_workspace_skill_by_name_or_folder(project: Path) -> None:
    text = skill_text("Release Notes", "Write release notes.", body="Do it.\n")
    write_file(project / "skills" / "release-notes" / "SKILL.md", text)
    code, out = run(project, "use", "Release Notes")
    assert code == 0, out
    assert out == use_prompt(text, None)
    assert run(project, "use", "release-notes")[1] == out


def test_other_files_name_the_skill_folder(project: Path) -> None:
    folder = project / ".agents" / "skills" / "tool"
    write_file(folder / "SKILL.md", skill_text("tool", "A tool."))
    write_file(folder / "scripts" / "run.sh", "#!/bin/sh\n")
    code, out = run(project, "use", "tool", "--json")
    assert code == 0, out
    data = json.loads(out)
    assert data["supportDir"] == str(folder) and data["path"] == str(folder)
    assert f"were downloaded to:\n{folder}\n\nWhen the SKILL.md" in data["prompt"]


def test_excluded_files_and_broken_links_are_not_supporting_files(tmp_path: Path) -> None:
    write_file(tmp_path / "SKILL.md", "x")
    write_file(tmp_path / "metadata.json", "{}")
    write_file(tmp_path / ".git" / "HEAD", "ref")
    (tmp_path / "empty").mkdir()
    os.symlink("missing", tmp_path / "broken")
    os.symlink(".", tmp_path / "self")
    assert not has_supporting_files(tmp_path)
    write_file(tmp_path / "docs" / "SKILL.md", "a nested SKILL.md is a supporting file")
    assert has_supporting_files(tmp_path)


def test_for_agent_matches_name_case_insensitively(project: Path) -> None:
    text = skill_text("My Skill", "Demo.")
    write_file(project / ".claude" / "skills" / "my-skill" / "SKILL.md", text)
    code, out = run(project, "use", "my skill", "--for", "claude-code")
    assert code == 0, out
    assert out == use_prompt(text, None)


def test_unknown_skill_and_agent_and_stray_global(project: Path) -> None:
    write_file(project / ".claude" / "skills" / "a" / "SKILL.md", skill_text("a", "A."))
    code, out = run(project, "use", "nope", "--for", "claude-code")
    assert code == 1 and 'skill "nope" not found for Claude Code' in out and "there: a" in out
    code, out = run(project, "use", "a", "--for", "nobody")
    assert code == 2 and "unknown agent 'nobody'" in out
    code, out = run(project, "use", "a", "-g")
    assert code == 2 and "-g/--global only goes with --for" in out
    code, out = run(project, "use", "nope", "--json")
    assert code == 1 and json.loads(out)["code"] == "skill-not-found"
