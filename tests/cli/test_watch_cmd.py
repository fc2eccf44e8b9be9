"""``skillbook watch`` says why a skill changed: the diagnostic behind each change."""

from __future__ import annotations

from pathlib import Path

from factories import write_skill

from skillbook.cli.watch_cmd import change_lines
from skillbook.pipeline.book import Loader
from skillbook.runtime.session import SkillSession


def _loader(tmp_path: Path) -> Loader:
    env = {
        "HOME": str(tmp_path / "home"),
        "PATH": str(tmp_path / "bin"),
        "SKILLBOOK_BUNDLED_SKILLS_DIR": str(tmp_path / "none"),
    }
    return Loader(tmp_path / "ws", env=env, cwd=tmp_path)


def test_a_skill_gone_because_its_frontmatter_broke_shows_the_parse_error(
    tmp_path: Path,
) -> None:
    skills = tmp_path / "ws" / "skills"
    file = write_skill(skills / "notes", description="Take notes.") / "SKILL.md"
    write_skill(skills / "other", description="Other.")
    with SkillSession(_loader(tmp_path), watch=False) as session:
        before = session.current()
        file.write_text("---\nname: notes\ndescriptio: typo\n---\nBody\n", encoding="utf-8")
        report = session.reload()
        lines = change_lines(report, before)
    assert lines[0] == "- notes"
    assert lines[1].startswith(f"    {file}:")
    assert "[parse.missing-description]" in lines[1]
    assert len(lines) == 2  # the unchanged skill says nothing


def test_a_status_change_shows_what_is_missing(tmp_path: Path) -> None:
    skills = tmp_path / "ws" / "skills"
    file = write_skill(skills / "deploy", description="Deploy.") / "SKILL.md"
    with SkillSession(_loader(tmp_path), watch=False) as session:
        before = session.current()
        file.write_text(
            "---\nname: deploy\ndescription: Deploy.\n"
            'metadata: {"openclaw": {"requires": {"bins": ["helm"]}}}\n---\n',
            encoding="utf-8",
        )
        lines = change_lines(session.reload(), before)
    assert lines == ["~ deploy (ready → needs-setup)", "    missing: bins: helm"]


def test_a_new_folder_that_does_not_load_is_reported(tmp_path: Path) -> None:
    skills = tmp_path / "ws" / "skills"
    write_skill(skills / "fine", description="Fine.")
    with SkillSession(_loader(tmp_path), watch=False) as session:
        before = session.current()
        broken = write_skill(skills / "broken", description=None) / "SKILL.md"
        added = write_skill(skills / "new-one", description="New.") / "SKILL.md"
        lines = change_lines(session.reload(), before)
    assert lines[0] == "+ new-one (openclaw-workspace)"
    assert lines[1].startswith(f"! {broken}:") and "[parse.missing-description]" in lines[1]
    assert added.is_file() and len(lines) == 2
