"""The group: help, global options anywhere, names with "did you mean", check --fail-on."""

from __future__ import annotations

import json
import os
import re
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


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("lint", "to lint skills: `skillbook validate PATH`"),
        ("create", "to start a skill: `skillbook new NAME`"),
        ("version", "for the version: `skillbook --version`"),
        ("agents", "`skillbook install SOURCE --for AGENT` and `skillbook list --for AGENT`"),
        ("Status", "`skillbook check`"),
    ],
)
def test_a_word_from_another_tool_is_answered_with_the_command_for_it(
    shell: Shell, typed: str, said: str
) -> None:
    """Spelling alone answered `lint` with `list`, `create` with `restore` or `chat`
    and `version` with `sessions` or `verify`."""
    result = shell.run(typed)
    assert result.exit_code == 2
    assert f"No such command {typed!r}; " in result.stderr and said in result.stderr
    assert "Did you mean" not in result.stderr


def test_every_guess_names_a_command_that_exists() -> None:
    from skillbook.cli.app import GUESSES

    names = set(commands())
    for word, hint in GUESSES.items():
        assert word not in names
        named = [re.split(r"[\s`]", part)[0] for part in hint.split("`skillbook ")[1:]]
        assert named and all(n in names or n[0] == "-" or n.isupper() for n in named), word


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


def test_info_on_a_skill_that_did_not_load_says_why(shell: Shell) -> None:
    """A folder that is there but not loaded: the author gets its diagnostics, not
    "not found, run `skillbook list`" (a list without it)."""
    skills = shell.project / "skills"
    write_skill(skills / "nodesc", description=None)
    write_skill(skills / "group" / "inner", description="Inner.")
    (skills / "cased").mkdir()
    (skills / "cased" / "skill.md").write_text("---\nname: cased\ndescription: C.\n---\n")
    result = shell.run("info", "nodesc")
    assert result.exit_code == 1
    assert result.stderr.startswith('skillbook: skill "nodesc" is there but not loaded:\n  ')
    assert "nodesc/SKILL.md:" in result.stderr and "[parse.missing-description]" in result.stderr
    assert "Run `skillbook list`" not in result.stderr
    assert "[discover.grouped-layout]" in shell.run("info", "inner").stderr
    assert "[discover.skill-md-case]" in shell.run("info", "cased").stderr
    data = json.loads(shell.run("info", "nodesc", "--json").stdout)
    assert data["code"] == "skill-not-found"
    assert [d["code"] for d in data["notLoaded"]] == ["parse.missing-description"]


def test_info_points_at_a_skill_outside_the_skill_folders(shell: Shell) -> None:
    write_skill(shell.project / "skill" / "foo", description="Foo.")
    write_skill(shell.project / ".claude" / "skills" / "baz", description="Baz.")
    result = shell.run("info", "foo")
    assert result.exit_code == 1
    assert f"{shell.project}/skill/foo/SKILL.md is not in a skill folder" in result.stderr
    assert f"move its folder into {shell.project}/skills/" in result.stderr
    baz = json.loads(shell.run("info", "baz", "--json").stdout)
    assert baz["misplaced"] == [f"{shell.project}/.claude/skills/baz/SKILL.md"]
    # Another agent's folder in the home: ~/.claude/skills/NAME.
    write_skill(shell.home / ".claude" / "skills" / "cc", description="Claude's.")
    home = json.loads(shell.run("info", "cc", "--json").stdout)
    assert home["misplaced"] == [f"{shell.home}/.claude/skills/cc/SKILL.md"]
    # A name is no pattern: `*` matches no folder but its own.
    assert json.loads(shell.run("info", "*", "--json").stdout)["misplaced"] == []
    # A loaded skill of that folder name is no stray.
    write_skill(shell.project / "skills" / "foo", description="Foo.")
    assert shell.run("info", "foo").exit_code == 0


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


def test_check_counts_the_notes_on_the_shipped_skills_and_lists_the_users(
    shell: Shell,
) -> None:
    """The shipped jq skill's installers carry sha256 (read by OpenClaw 2026.9 only):
    notes a user cannot act on are counted in one line; the user's own are listed, and
    --json keeps every one."""
    from skillbook.config.paths import PACKAGE_BUNDLED_DIR

    shipped = {"SKILLBOOK_BUNDLED_SKILLS_DIR": str(PACKAGE_BUNDLED_DIR)}
    write_skill(
        shell.project / "skills" / "mine",
        description="Mine.",
        metadata={
            "openclaw": {
                "install": [
                    {"kind": "download", "url": "https://example.com/x", "sha256": "0" * 64}
                ]
            }
        },
    )
    text = shell.run("check", env=shipped).stdout
    assert "mine/SKILL.md" in text and "install[0].sha256" in text
    assert "bundled_skills/jq" not in text
    counted = re.search(r"(\d+) note\(s\) on the skills skillbook ships", text)
    assert counted is not None
    data = json.loads(shell.run("check", "--json", env=shipped).stdout)
    notes = [d for d in data["diagnostics"] if d["code"] == "parse.newer-field"]
    ours = [d for d in notes if "bundled_skills" in d.get("path", "")]
    assert len(ours) == int(counted.group(1)) and len(notes) == len(ours) + 1
    # Without the shipped skills nothing is counted.
    assert "skillbook ships" not in shell.run("check").stdout


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
    assert plain.stdout == "" and plain.stderr.startswith(f"skillbook: {bad}:1:11: invalid JSON5")


def test_list_says_when_the_workspace_is_the_skills_folder(shell: Shell) -> None:
    """`-w proj/skills` (or skills kept beside `skills/`) listed only the bundled skills,
    without a word about the user's own."""
    skills = shell.project / "skills"
    write_skill(skills / "alpha", description="Alpha.")
    result = shell.run("-w", str(skills), "list")
    assert result.exit_code == 0
    assert result.stdout.endswith(
        f"\n⚠ {skills} holds skill folders (alpha/) but skills load from "
        f"<workspace>/skills/, and it has none: pass the folder that holds it: "
        f"-w {shell.project}\n"
    )
    assert f"-w {shell.project}\n" in shell.run("-w", str(skills), "check").stdout
    beside = shell.project / "beside"
    write_skill(beside / "beta", description="Beta.")
    assert f"move them into {beside}/skills/\n" in shell.run("-w", str(beside), "list").stdout
    # A workspace with its skills/ folder gets no such line.
    assert "holds skill folders" not in shell.run("list").stdout


def test_info_of_a_skill_to_set_up_names_the_setup_command(shell: Shell) -> None:
    install = '[{"kind": "brew", "formula": "helmish", "bins": ["helmish"]}]'
    write_skill(
        shell.project / "skills" / "deploy",
        description="Deploy.",
        raw=f'metadata: {{"openclaw": {{"requires": {{"bins": ["helmish"]}}, "install": {install}}}}}',
    )
    text = shell.run("info", "deploy").stdout
    assert "Install options:\n  → Install helmish (brew)\n" in text
    assert "  Run `skillbook setup deploy` (a security scan first; --dry-run shows" in text


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
