"""Colour (--color, NO_COLOR, FORCE_COLOR) and the ASCII fallback, unit and end to end."""

from __future__ import annotations

import io
import json

import pytest
from factories import write_skill

from cli.conftest import Shell
from skillbook.cli.style import Style, color_wanted, locale_is_ascii, to_ascii

ESC = "\x1b["


class _Tty(io.StringIO):
    encoding = "utf-8"

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("choice", "env", "tty", "expected"),
    [
        ("auto", {}, True, True),
        ("auto", {}, False, False),
        ("auto", {"NO_COLOR": "1"}, True, False),
        ("auto", {"NO_COLOR": ""}, True, True),  # empty means unset (no-color.org)
        ("auto", {"FORCE_COLOR": "1"}, False, True),
        ("auto", {"FORCE_COLOR": "0"}, False, False),
        ("auto", {"NO_COLOR": "1", "FORCE_COLOR": "1"}, True, False),
        ("auto", {"TERM": "dumb"}, True, False),
        ("always", {"NO_COLOR": "1"}, False, True),
        ("never", {"FORCE_COLOR": "1"}, True, False),
    ],
)
def test_color_rules(choice: str, env: dict[str, str], tty: bool, expected: bool) -> None:
    stream = _Tty() if tty else io.StringIO()
    assert color_wanted(choice, stream, env) is expected


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, False),
        ({"LANG": "C"}, True),
        ({"LANG": "POSIX"}, True),
        ({"LANG": "en_US.UTF-8"}, False),
        ({"LANG": "en_US.utf8"}, False),
        ({"LANG": "de_DE.ISO-8859-1"}, True),
        ({"LANG": "en_US"}, False),
        ({"LC_ALL": "C", "LANG": "en_US.UTF-8"}, True),
        ({"LC_ALL": "", "LC_CTYPE": "C.UTF-8", "LANG": "C"}, False),
    ],
)
def test_locale_rules(env: dict[str, str], expected: bool) -> None:
    assert locale_is_ascii(env) is expected


def test_to_ascii() -> None:
    assert to_ascii("✓ ready") == "ready"
    assert to_ascii("△ needs setup") == "needs setup"
    assert to_ascii("🚫 blocked") == "blocked"
    assert to_ascii("📦 weather") == "weather"
    assert to_ascii("🛠️ skill-author") == "skill-author"
    assert to_ascii("Binaries: ✓ git, ✗ helm") == "Binaries: ok git, x helm"
    assert to_ascii("Keep it tidy…") == "Keep it tidy..."
    assert to_ascii("→ Install helm (brew)") == "-> Install helm (brew)"
    assert to_ascii("café 東京") == "cafe ??"
    assert to_ascii("plain") == "plain"


def test_style_detects_an_ascii_stream() -> None:
    latin = io.TextIOWrapper(io.BytesIO(), encoding="latin-1")
    assert Style.detect(stream=latin, env={}).ascii
    utf8 = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    assert not Style.detect(stream=utf8, env={}).ascii
    assert Style.detect(stream=utf8, env={"LANG": "C"}).ascii


def test_paint_colours_statuses_marks_and_headings() -> None:
    paint = Style.paint
    assert paint("✓ ready         📦 x").startswith(f"{ESC}32m✓ ready{ESC}0m")
    assert paint("needs setup   x").startswith(f"{ESC}33mneeds setup{ESC}0m")
    assert paint("Requirements:") == f"{ESC}1mRequirements:{ESC}0m"
    assert f"{ESC}31m✗{ESC}0m helm" in paint("  Binaries: ✓ git, ✗ helm")
    assert f"{ESC}31merror{ESC}0m [" in paint("    a/SKILL.md:3: error [validate.path] m")
    assert paint("just text") == "just text"


@pytest.fixture
def one_skill(shell: Shell) -> Shell:
    write_skill(
        shell.project / "skills" / "deploy",
        description="Ship it — fast… and “safely”.",
        metadata={"openclaw": {"emoji": "🚀", "requires": {"bins": ["helm"]}}},
    )
    write_skill(shell.project / "skills" / "notes", description="Take notes — “quickly”.")
    return shell


def test_color_on_the_command_line(one_skill: Shell) -> None:
    shell = one_skill
    assert ESC not in shell.run("list").stdout  # not a terminal
    coloured = shell.run("list", "--color", "always").stdout
    assert f"{ESC}33m△ needs setup{ESC}0m" in coloured
    assert f"{ESC}1mSkills (1/2 ready){ESC}0m" in coloured
    assert ESC in shell.run("list", env={"FORCE_COLOR": "1"}).stdout
    assert ESC not in shell.run("--color", "never", "list", env={"FORCE_COLOR": "1"}).stdout
    assert ESC not in shell.run("list", env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout
    # JSON is never coloured.
    assert ESC not in shell.run("list", "--json", "--color", "always").stdout


@pytest.mark.parametrize(
    ("charset", "env"), [("ascii", {}), ("utf-8", {"LANG": "C"}), ("utf-8", {"LC_ALL": "POSIX"})]
)
def test_ascii_fallback(one_skill: Shell, charset: str, env: dict[str, str]) -> None:
    shell = one_skill
    result = shell.run("list", env=env, charset=charset)
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert text.isascii()
    lines = text.splitlines()
    assert lines[0] == "Skills (1/2 ready)"
    assert set(lines[2]) == {"-"}
    rows = [line for line in lines[3:] if line]
    assert rows[0].startswith("needs setup   deploy ")
    assert rows[1].startswith("ready         notes ")
    # Columns still line up: the source column starts at the same place in every row.
    starts = {row.index("workspace") for row in rows}
    assert len(starts) == 1
    info = shell.run("info", "deploy", env=env, charset=charset).stdout
    assert info.isascii() and "Binaries: x helm" in info and "Needs setup" in info
    assert "--" in info and '"safely"' in info
    data = shell.run("list", "--json", env=env, charset=charset).stdout
    assert data.isascii() and "\\u2014" in data and json.loads(data)["skills"][0]["emoji"] == "🚀"


def test_prompt_stays_byte_exact_where_the_locale_is_ascii(one_skill: Shell) -> None:
    import skillbook

    result = one_skill.run("prompt", charset="ascii")
    assert result.exit_code == 0
    book = skillbook.load(one_skill.project)
    assert result.stdout_bytes == (book.prompt + "\n").encode("utf-8")
    assert "“quickly”".encode() in result.stdout_bytes
