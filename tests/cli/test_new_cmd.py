"""``skillbook new``: a skill that passes validate in its mode, written atomically, never over another."""

from __future__ import annotations

import json

import pytest

from cli.conftest import Shell
from skillbook.cli.new_cmd import name_problem, skill_text
from skillbook.pipeline.parse.skill_file import parse_skill_text
from skillbook.pipeline.validation.validate import MODES, validate_path


@pytest.mark.parametrize("mode", [m.value for m in MODES])
def test_new_passes_validate_in_its_mode(shell: Shell, mode: str) -> None:
    result = shell.run("new", "release-notes", "--mode", mode)
    assert result.exit_code == 0, result.output
    folder = shell.project / "skills" / "release-notes"
    assert result.stdout.startswith(f"Created {folder / 'SKILL.md'}\n")
    assert f"`skillbook validate --mode {mode}`" in result.stdout
    checked = shell.run("validate", "--mode", mode, str(folder))
    assert checked.exit_code == 0, checked.stdout
    assert [p.name for p in (shell.project / "skills").iterdir()] == ["release-notes"]
    # The new skill is loaded as it is.
    listed = json.loads(shell.run("list", "--json").stdout)
    assert [s["name"] for s in listed["skills"]] == ["release-notes"]


@pytest.mark.parametrize(
    "description",
    [
        "Deploy: ship the app # now",
        "yes",
        "123",
        "null",
        '"Quoted" and \\ back',
        "Émigré's café — “fine”.",
        "- starts with a dash",
        "multi\nline   text",
    ],
)
@pytest.mark.parametrize("mode", ["strict", "openclaw"])
def test_any_description_is_written_so_it_reads_back_the_same(
    shell: Shell, description: str, mode: str
) -> None:
    result = shell.run("new", "s1", "--mode", mode, "-d", description, "--json")
    assert result.exit_code == 0, result.output
    path = json.loads(result.stdout)["path"]
    text = (shell.project / "skills" / "s1" / "SKILL.md").read_text(encoding="utf-8")
    assert path.endswith("s1/SKILL.md")
    assert parse_skill_text(text).description == " ".join(description.split())
    assert validate_path(shell.project / "skills" / "s1", mode="strict").ok


def test_new_never_overwrites(shell: Shell) -> None:
    assert shell.run("new", "notes").exit_code == 0
    target = shell.project / "skills" / "notes" / "SKILL.md"
    target.write_text("mine", encoding="utf-8")
    again = shell.run("new", "notes")
    assert again.exit_code == 2
    assert again.stderr == (
        f"skillbook: {shell.project / 'skills' / 'notes'} already exists; not overwritten\n"
    )
    assert target.read_text(encoding="utf-8") == "mine"
    (shell.project / "skills" / "file").write_text("x", encoding="utf-8")
    as_json = shell.run("new", "file", "--json")
    assert json.loads(as_json.stdout)["code"] == "already-exists"
    # No staging folder is left behind.
    assert sorted(p.name for p in (shell.project / "skills").iterdir()) == ["file", "notes"]


def test_names_are_checked_per_mode(shell: Shell) -> None:
    result = shell.run("new", "Release Notes", "--mode", "strict")
    assert result.exit_code == 2
    assert "(e.g. release-notes)" in result.stderr
    assert name_problem("Release_Notes", "openclaw") is None
    for bad in ("", ".hidden", "a/b", "..", " x"):
        assert name_problem(bad, "openclaw") is not None, bad
    assert shell.run("new", "Release_Notes", "--mode", "openclaw").exit_code == 0
    assert not (shell.project / "skills" / ".hidden").exists()


def test_a_name_outside_the_standard_is_created_with_a_note(shell: Shell) -> None:
    """openclaw mode takes `Release Notes`; Claude Code, Codex and `validate --mode
    strict` do not: the author hears it at `new`, not after the name is in use."""
    result = shell.run("new", "Release Notes")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1] == (
        "Note: the Agent Skills standard (--mode strict) needs lowercase letters, digits "
        "and single hyphens, at most 64 characters (e.g. release-notes); 'Release Notes' "
        "does not pass it."
    )
    assert "Note:" not in shell.run("new", "release-notes").stdout


def test_the_default_mode_is_the_global_one(shell: Shell) -> None:
    cfg = shell.project / "c.json"
    cfg.write_text('{skills: {load: {mode: "strict"}}}', encoding="utf-8")
    result = shell.run("-c", str(cfg), "new", "Bad_Name")
    assert result.exit_code == 2 and "strict mode needs" in result.stderr


def test_new_writes_into_the_selected_workspace(shell: Shell) -> None:
    ws = shell.project / "ws"
    ws.mkdir()
    assert shell.run("new", "alpha", "-w", str(ws)).exit_code == 0
    assert (ws / "skills" / "alpha" / "SKILL.md").is_file()
    missing = shell.run("new", "alpha", "-w", str(shell.project / "nope"))
    assert missing.exit_code == 2 and "does not exist" in missing.stderr


def test_template_is_strict_yaml() -> None:
    text = skill_text("x-y", "Does x.")
    assert text.startswith("---\nname: x-y\ndescription: Does x.\n---\n")
