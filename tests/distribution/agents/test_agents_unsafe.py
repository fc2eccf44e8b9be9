"""Fast lane: where ``--for`` differs from the ``skills`` CLI on purpose because the CLI's
behaviour is unsafe (docs/multiple-agents.md); the twin tests show the CLI's side.

- a link back into the skill (a loop) is refused, exit 1, and nothing is placed;
- a ``skills-lock.json`` with merge-conflict markers is an error naming the file, and
  nothing is written or removed.

And one rule kept as the CLI keeps it: a SKILL.md without a name or a description is
skipped with a warning (all of them: ``agents.no-skill``), never installed under its
folder's name.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from factories import skill_text, write_file
from hypothesis import given
from hypothesis import strategies as st

from skillbook.cli.app import cli
from skillbook.distribution.agents import AgentsError
from skillbook.distribution.agents.layout import check_copyable
from skillbook.distribution.agents.lock import read_lock

CONFLICTED = """{
  "version": 1,
  "skills": {
<<<<<<< HEAD
    "ours": {"source": "o/r", "sourceType": "github", "computedHash": "aa"}
=======
    "theirs": {"source": "o/t", "sourceType": "github", "computedHash": "bb"}
>>>>>>> feature
  }
}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    for var, value in (
        ("HOME", home),
        ("XDG_CONFIG_HOME", home / ".config"),
        ("XDG_STATE_HOME", tmp_path / "state"),
    ):
        monkeypatch.setenv(var, str(value))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        monkeypatch.delenv(var, raising=False)
    root = tmp_path / "project"
    root.mkdir()
    return root


def skill(folder: Path, name: str) -> Path:
    write_file(folder / "SKILL.md", skill_text(name, "Demo.", body="Body.\n"))
    return folder


def run(project: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--workspace", str(project), *args])
    return result.exit_code, result.output


def files_under(root: Path) -> list[str]:
    return sorted(
        (Path(d) / n).relative_to(root).as_posix() for d, ds, fs in os.walk(root) for n in ds + fs
    )


@pytest.mark.parametrize("link", [".", "..", "loop", "scripts/../."])
def test_a_link_looping_back_is_refused_and_nothing_is_placed(
    project: Path, tmp_path: Path, link: str
) -> None:
    pack = tmp_path / "src" / "pack"
    skill(pack / "a-first", "first")  # Fine on its own: must not be placed either.
    bad = skill(pack / "b-second", "second")
    (bad / "scripts").mkdir()
    os.symlink(link, bad / "scripts" / "again" if "/" in link else bad / "again")
    if link == "loop":
        os.symlink("loop", bad / "loop")
    if link == "..":
        os.replace(bad / "again", bad / "scripts" / "again")
    code, out = run(project, "install", str(pack), "--for", "claude-code", "--for", "windsurf")
    assert code == 1, out
    assert "remove it" in out or "remove the link" in out
    assert files_under(project) == []


def test_check_copyable_names_the_link_and_its_code(tmp_path: Path) -> None:
    folder = skill(tmp_path / "s", "s")
    os.symlink(".", folder / "self")
    with pytest.raises(AgentsError) as caught:
        check_copyable(folder)
    assert caught.value.code == "agents.symlink-loop"
    assert str(folder / "self") in caught.value.message


def test_a_link_to_a_sibling_folder_is_copied(project: Path, tmp_path: Path) -> None:
    folder = skill(tmp_path / "s", "s")
    write_file(folder / "docs" / "a.md", "a\n")
    os.symlink("docs", folder / "more")
    code, out = run(project, "install", str(folder), "--for", "claude-code")
    assert code == 0, out
    assert (project / ".claude/skills/s/more/a.md").read_text() == "a\n"


@pytest.mark.parametrize("command", ["install", "remove", "list"])
def test_a_conflicted_lock_is_an_error_naming_it_and_nothing_is_written(
    project: Path, tmp_path: Path, command: str
) -> None:
    source = skill(tmp_path / "src" / "s", "s")
    if command != "install":
        assert run(project, "install", str(source), "--for", "claude-code")[0] == 0
    lock = project / "skills-lock.json"
    lock.write_text(CONFLICTED)
    before = files_under(project)
    args = {
        "install": ["install", str(source), "--for", "claude-code", "--for", "codex"],
        "remove": ["remove", "s", "--for", "claude-code"],
        "list": ["list", "--for", "claude-code"],
    }[command]
    code, out = run(project, *args)
    assert code == 1, out
    assert str(lock) in out and "merge-conflict markers" in out
    assert lock.read_text() == CONFLICTED
    assert files_under(project) == before
    code, out = run(project, *args, "--json")
    assert code == 1 and '"code": "agents.lock-conflict"' in out


@pytest.mark.parametrize("marker", ["<<<<<<< HEAD", "=======", ">>>>>>> b", "||||||| base"])
def test_each_conflict_marker_is_recognised(tmp_path: Path, marker: str) -> None:
    (tmp_path / "skills-lock.json").write_text(f'{{"version": 1,\n{marker}\n"skills": {{}}}}\n')
    with pytest.raises(AgentsError) as caught:
        read_lock(tmp_path)
    assert caught.value.code == "agents.lock-conflict"


@given(st.text(st.characters(exclude_categories=["Cs"]), max_size=80))
def test_text_without_markers_is_never_a_conflict(text: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "skills-lock.json").write_text(
            text.replace("<" * 7, "<")
            .replace("=" * 7, "=")
            .replace(">" * 7, ">")
            .replace("|" * 7, "|"),
            "utf-8",
        )
        assert isinstance(read_lock(Path(folder)), dict)


def test_a_skill_without_name_or_description_is_skipped(project: Path, tmp_path: Path) -> None:
    pack = tmp_path / "src" / "pack"
    skill(pack / "good", "good")
    write_file(pack / "nameless" / "SKILL.md", "---\ndescription: No name.\n---\n")
    write_file(pack / "mute" / "SKILL.md", "---\nname: mute\n---\n")
    result = CliRunner().invoke(
        cli, ["--workspace", str(project), "install", str(pack), "--for", "claude-code"]
    )
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (project / ".claude/skills").iterdir()) == ["good"]
    assert f"skipped {pack / 'mute' / 'SKILL.md'}" in result.stderr
    code, out = run(project, "install", str(pack / "nameless"), "--for", "claude-code")
    assert code == 1 and "no valid skill in" in out
