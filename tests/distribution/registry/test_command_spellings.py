"""Issue 18 §6: other spellings of the registry commands, and mistyped commands.

``uninstall``/``rm`` are ``remove``; OpenClaw's ``skills list|info|check|search|install|update``
and the clawhub CLI's ``explore`` work, ``inspect`` points to the commands that answer it;
a mistyped command runs nothing and is never answered with the command that undoes it.
"""

from __future__ import annotations

import json

import pytest
from cli.conftest import Shell, shell  # noqa: F401 (fixture)
from hypothesis import given
from hypothesis import strategies as st

from distribution.registry.clawhub_server import ClawHub
from distribution.registry.conftest import DEMO_V1, DEMO_V2, point_at
from skillbook.cli.suggest import OPPOSITES, suggest


@pytest.fixture
def sh(shell: Shell, hub: ClawHub, monkeypatch: pytest.MonkeyPatch) -> Shell:  # noqa: F811
    point_at(shell, hub, monkeypatch)
    hub.state.publish("demo", "1.0.0", DEMO_V1, summary="Says hello")
    return shell


@pytest.mark.parametrize("alias", ["uninstall", "rm"])
def test_uninstall_and_rm_remove(sh: Shell, alias: str) -> None:
    assert sh.run("install", "demo").exit_code == 0
    removed = sh.run(alias, "demo")
    assert removed.exit_code == 0, removed.output
    assert removed.stdout == f"Removed demo ({sh.project}/skills/demo)\n"
    assert not (sh.project / "skills/demo").exists()


#: Near-misses of commands that undo each other, and what must never be suggested.
NEAR_MISSES = [
    ("uninstal", "install"),
    ("unistall", "install"),
    ("uinstall", "install"),
    ("unintsall", "install"),
    ("uninstll", "install"),
    ("unisntall", "install"),
    ("unstall", "install"),
    ("unnstall", "install"),
    ("deinstall", "install"),
    ("uninst", "install"),
    ("upin", "pin"),
    ("unpn", "pin"),
    ("unpinn", "pin"),
    ("instal", "uninstall"),
    ("isntall", "uninstall"),
    ("installl", "uninstall"),
    ("nstall", "uninstall"),
    ("instll", "uninstall"),
    ("pinn", "unpin"),
    ("pni", "unpin"),
]


@pytest.mark.parametrize(("typed", "never"), NEAR_MISSES)
def test_a_near_miss_runs_nothing_and_never_suggests_the_opposite(
    sh: Shell, typed: str, never: str
) -> None:
    assert sh.run("install", "demo").exit_code == 0
    result = sh.run(typed, "demo")
    assert result.exit_code == 2 and result.stdout == ""
    message = result.stderr.strip().splitlines()[-1]
    assert message.startswith(f"Error: No such command {typed!r}.")
    forbidden = {"uninstall", "remove", "rm"} if never == "uninstall" else {never}
    assert not any(f"'{name}'" in message for name in forbidden), message
    # Nothing ran: the skill is still installed, at its version.
    assert sh.run("verify").stdout == "✓ demo (clawhub 1.0.0): unchanged\n"


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("uninstal", "uninstall"), ("instal", "install"), ("upin", "unpin"), ("rmove", "remove")],
)
def test_a_near_miss_is_told_the_command_it_is_nearest(sh: Shell, typed: str, meant: str) -> None:
    result = sh.run(typed)
    assert f"Did you mean {meant!r}?" in result.stderr


def test_subcommand_groups_suggest_too(sh: Shell) -> None:
    result = sh.run("drafts", "rejct", "x")
    assert result.exit_code == 2 and "Did you mean 'reject'?" in result.stderr
    result = sh.run("skills", "uninstal", "demo")
    assert result.exit_code == 2 and "Did you mean 'uninstall'?" in result.stderr


@given(st.text(alphabet="abcdeilmnoprstuvx", min_size=1, max_size=12))
def test_suggestions_never_offer_both_sides_of_an_undo(typed: str) -> None:
    names = ["install", "uninstall", "remove", "rm", "pin", "unpin", "list", "update"]
    got = set(suggest(typed, names))
    for doing, undoing in OPPOSITES:
        assert not (got & doing and got & undoing)
    if typed.startswith("un"):
        assert not got & {"install", "pin"}


def test_openclaw_skills_spellings(sh: Shell) -> None:
    """`openclaw skills …` (spec §10), each the skillbook command of the same name."""
    assert sh.run("skills", "install", "demo").stdout == (
        f"Installed demo@1.0.0 -> {sh.project}/skills/demo\n"
    )
    assert sh.run("skills").stdout == sh.run("list").stdout
    assert sh.run("skills", "list", "--json").stdout == sh.run("list", "--json").stdout
    assert sh.run("skills", "info", "demo").stdout == sh.run("info", "demo").stdout
    assert sh.run("skills", "check").stdout == sh.run("check").stdout
    assert sh.run("skills", "search", "dem").stdout == "demo v1.0.0  Demo  Says hello\n"
    updated = sh.run("skills", "update", "--all")
    assert (updated.exit_code, updated.stdout) == (0, "demo already at 1.0.0\n")
    helped = sh.run("skills", "--help").stdout
    for name in ("list", "info", "check", "search", "install", "update"):
        assert f"  {name}" in helped and f"= skillbook {name}" in helped


def test_clawhub_spellings(sh: Shell, hub: ClawHub) -> None:
    hub.state.publish("demo", "1.1.0", DEMO_V2)
    assert sh.run("explore").stdout == sh.run("search").stdout
    pointed = sh.run("inspect", "demo", "--versions")
    assert pointed.exit_code == 2 and pointed.stdout == ""
    assert "`skillbook search SLUG`" in pointed.stderr
    assert "`skillbook info NAME`" in pointed.stderr


def test_help_lists_aliases_on_their_command_row(sh: Shell) -> None:
    rows = sh.run("--help").stdout.split("Commands:")[1]
    words = rows.split()
    # The aliases are no rows of their own, and the hidden pointer is not listed.
    assert "uninstall," in words and "rm." in words and "explore." in words
    assert not any(
        line.startswith(("  uninstall ", "  rm ", "  inspect ")) for line in rows.splitlines()
    )
    remove_row = rows[rows.index("  remove ") :].split("\n  run ")[0]
    assert "Also: uninstall, rm." in " ".join(remove_row.split())
    assert json.loads(sh.run("rm", "ghost", "--json").stdout)["code"] == "registry.not-tracked"
