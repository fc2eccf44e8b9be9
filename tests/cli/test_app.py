"""The group: help, global options anywhere, names with "did you mean", check --fail-on."""

from __future__ import annotations

import json
import os
import sys

import click
import pytest
from factories import write_skill

from cli.conftest import Shell
from skillbook.cli.app import cli


def commands() -> list[str]:
    return sorted(cli.list_commands(click.Context(cli)))


def test_top_level_help_shows_whole_summaries_and_examples(shell: Shell) -> None:
    text = shell.run("--help").stdout
    section = text.split("Commands:", 1)[1].split("Examples:", 1)[0]
    assert "..." not in section
    for name in commands():
        command = cli.get_command(click.Context(cli), name)
        assert command is not None and command.help
        first = command.help.strip().split("\n\n")[0].split(". ")[0]
        words = " ".join(section.split())
        assert " ".join(first.split()) in words, name
    assert "Examples:\n    skillbook\n" in text


@pytest.mark.parametrize("name", commands())
def test_every_command_help_ends_with_examples(shell: Shell, name: str) -> None:
    result = shell.run(name, "--help")
    assert result.exit_code == 0
    examples = result.stdout.split("Examples:", 1)[1]
    assert f"skillbook {name}" in examples or "skillbook completion" in examples


def test_global_options_are_accepted_after_the_command(shell: Shell) -> None:
    ws = shell.project / "ws"
    write_skill(ws / "skills" / "alpha", description="Alpha.")
    before = json.loads(shell.run("-w", str(ws), "list", "--json").stdout)
    after = json.loads(shell.run("list", "--json", "--workspace", str(ws)).stdout)
    assert before == after and [s["name"] for s in after["skills"]] == ["alpha"]
    # After the command, the later value wins.
    other = shell.project / "other"
    other.mkdir()
    data = json.loads(shell.run("-w", str(ws), "list", "-w", str(other), "--json").stdout)
    assert data["workspaceDir"] == str(other)
    mode = json.loads(shell.run("check", "--json", "--mode", "strict", "-w", str(ws)).stdout)
    assert mode["excluded"] == []
    help_text = shell.run("info", "--help").stdout
    assert "--workspace DIR" in help_text and "--color" in help_text


def test_validate_keeps_its_own_mode_option(shell: Shell) -> None:
    command = cli.get_command(click.Context(cli), "validate")
    assert command is not None
    modes = [p for p in command.params if "--mode" in getattr(p, "opts", [])]
    assert len(modes) == 1 and modes[0].name == "mode_opt"


def test_a_mistyped_command_gets_a_suggestion(shell: Shell) -> None:
    result = shell.run("lsit")
    assert result.exit_code == 2
    assert "No such command 'lsit'. Did you mean 'list'?" in result.stderr


def test_info_finds_a_skill_by_folder_name_and_suggests_names(shell: Shell) -> None:
    write_skill(shell.project / "skills" / "release-tool", "release-notes", "Notes.")
    by_folder = shell.run("info", "release-tool", "--json")
    assert by_folder.exit_code == 0 and json.loads(by_folder.stdout)["name"] == "release-notes"
    result = shell.run("info", "relase-notes")
    assert result.exit_code == 1
    assert result.stderr == (
        'skillbook: skill "relase-notes" not found. Did you mean "release-notes"? '
        "Run `skillbook list` to see available skills.\n"
    )
    data = json.loads(shell.run("info", "RELEASE", "--json").stdout)
    assert data["suggestions"] == ["release-notes"] and data["code"] == "skill-not-found"


def test_check_fail_on(shell: Shell) -> None:
    skills = shell.project / "skills"
    write_skill(skills / "fine", description="Fine.")
    assert shell.run("check", "--fail-on", "warning").exit_code == 0
    (skills / "group" / "leaf").mkdir(parents=True)
    write_skill(skills / "group" / "leaf", description="Leaf.")  # a warning
    assert shell.run("check").exit_code == 0
    assert shell.run("check", "--fail-on", "error").exit_code == 0
    warned = shell.run("check", "--fail-on", "warning", "--json")
    assert warned.exit_code == 1 and json.loads(warned.stdout)["summary"]["total"] == 1
    write_skill(skills / "broken", description=None)  # an error
    assert shell.run("check", "--fail-on", "error").exit_code == 1


def test_check_collapses_repeated_findings(shell: Shell) -> None:
    from skillbook.cli.render import collapse
    from skillbook.diagnostics import Diagnostic, Severity

    diags = [
        Diagnostic(
            "parse.control-chars", Severity.WARNING, "same", path=shell.project / "a", line=n
        )
        for n in (9, 3, 3)
    ]
    diags.append(
        Diagnostic(
            "parse.control-chars", Severity.WARNING, "other", path=shell.project / "a", line=1
        )
    )
    grouped = collapse(diags)
    assert [(d.message, lines) for d, lines in grouped] == [("same", (3, 9)), ("other", (1,))]


def test_a_bad_config_is_a_json_error_under_json(shell: Shell) -> None:
    bad = shell.project / "bad.json"
    bad.write_text("{skills: [", encoding="utf-8")
    result = shell.run("-c", str(bad), "check", "--json")
    assert result.exit_code == 2 and result.stderr == ""
    error = json.loads(result.stdout)
    assert error["code"] == "config-invalid" and "invalid JSON5" in error["error"]
    plain = shell.run("-c", str(bad), "check")
    assert plain.stdout == "" and plain.stderr.startswith(f"skillbook: {bad}: invalid JSON5")


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="needs byte file names")
def test_a_skill_folder_named_with_bytes_that_are_not_utf8_is_printed(shell: Shell) -> None:
    """Such a name reaches Python as lone surrogates, which no UTF-8 stream encodes:
    every command that printed the skill stopped with a UnicodeEncodeError (found by
    the crash hunt). They print U+FFFD instead."""
    folder = os.path.join(os.fsencode(shell.project), b"skills", b"bad\xffname")
    os.makedirs(folder)
    with open(os.path.join(folder, b"SKILL.md"), "wb") as out:
        out.write(b"---\ndescription: A folder name that is not UTF-8.\n---\nBody\n")
    for args in (
        ["list"],
        ["list", "--json"],
        ["check"],
        ["check", "--json"],
        ["prompt"],
        ["commands"],
        ["info", "bad"],
        ["info", "--json", "bad\udcffname"],
    ):
        result = shell.run(*args)
        assert result.exception is None or isinstance(result.exception, SystemExit), args
        assert result.exit_code in (0, 1), (args, result.output)
    listed = json.loads(shell.run("list", "--json").stdout)
    assert [s["name"] for s in listed["skills"]] == ["bad\ufffdname"]
    assert "bad\ufffdname" in shell.run("prompt").stdout
