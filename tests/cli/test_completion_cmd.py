"""Shell completion: the scripts, and skill names and agent ids completed from the workspace."""

from __future__ import annotations

import pytest
from click.shell_completion import ShellComplete
from factories import write_skill, write_skills

from cli.conftest import Shell
from skillbook.cli.app import cli


@pytest.mark.parametrize("shell_name", ["bash", "zsh", "fish"])
def test_completion_prints_clicks_script(shell: Shell, shell_name: str) -> None:
    result = shell.run("completion", shell_name)
    assert result.exit_code == 0
    assert result.stdout.startswith(f"# skillbook completion for {shell_name}")
    assert "_SKILLBOOK_COMPLETE" in result.stdout
    assert f"{shell_name}_complete" in result.stdout


def test_unknown_shell_is_a_usage_error(shell: Shell) -> None:
    assert shell.run("completion", "tcsh").exit_code == 2


def complete(args: list[str], incomplete: str) -> list[str]:
    return [
        c.value for c in ShellComplete(cli, {}, "skillbook", "_X").get_completions(args, incomplete)
    ]


def test_skill_names_complete_for_info(shell: Shell) -> None:
    write_skills(shell.project / "skills", {n: f"{n}." for n in ("weather", "web-search", "notes")})
    assert complete(["info"], "we") == ["weather", "web-search"]
    assert complete(["info"], "") == ["notes", "weather", "web-search"]
    other = shell.project / "other"
    write_skill(other / "skills" / "wiki", description="Wiki.")
    assert complete(["-w", str(other), "info"], "w") == ["wiki"]
    assert complete(["info", "-w", str(other)], "w") == ["wiki"]


def test_completion_never_fails(shell: Shell) -> None:
    bad = shell.project / "bad.json"
    bad.write_text("{", encoding="utf-8")
    assert complete(["-c", str(bad), "info"], "") == []


def test_commands_options_and_agents_complete(shell: Shell) -> None:
    assert "doctor" in complete([], "d")
    assert complete(["--color"], "") == ["auto", "always", "never"]
    cfg = shell.project / "c.json"
    cfg.write_text('{agents: {list: [{id: "main"}, {id: "ops"}]}}', encoding="utf-8")
    assert complete(["-c", str(cfg), "--agent"], "o") == ["ops"]
