"""A learned skill's name: the task's slug (or --name), never a silent shadow (issue 20)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner, Result
from factories import skill_text, write_skill

from experience.conftest import Workspace, count_script, run_recorded
from experience.test_promotion import learned_draft
from skillbook.cli.app import cli
from skillbook.experience import ExperienceError
from skillbook.experience.engine import Experience
from skillbook.experience.learner import Learner
from skillbook.experience.skill_file import render_skill
from skillbook.pipeline.parse.skill_file import parse_skill_text
from skillbook.pipeline.validation.validate import validate_path


def mine(name: str) -> str:
    return skill_text(name, "Mine. Use when asked.", body="Body\n")


def test_the_name_is_the_slug_and_the_files_keep_the_timestamp(space: Workspace) -> None:
    exp, draft = learned_draft(space)
    done = exp.promote(draft.id)
    assert done.draft.name == "count-words" and draft.id.endswith("-count-words")
    assert done.skill_path == space.ws / "skills" / "auto" / draft.id / "SKILL.md"
    assert done.replay_path is not None and done.replay_path.name == f"{draft.id}.sh"
    assert 'name: "count-words"\n' in done.skill_path.read_text(encoding="utf-8")
    book = space.book()
    # What the user types and the model sees: the task, not a timestamp.
    commands = [c.name for c in book.commands().commands]
    assert "count_words" in commands and not any(c.startswith("2026") for c in commands)
    assert "<name>count-words</name>" in book.prompt
    assert exp.queue.get(draft.id).to_json()["name"] == "count-words"


def test_promote_with_another_name(space: Workspace) -> None:
    exp, draft = learned_draft(space)
    done = exp.promote(draft.id, name="weekly-report-number")
    text = done.skill_path.read_text(encoding="utf-8")
    assert 'name: "weekly-report-number"' in text and done.skill_path.parent.name == draft.id
    assert exp.queue.get(draft.id).skill_name == "weekly-report-number"
    assert "weekly_report_number" in [c.name for c in space.book().commands().commands]


@pytest.mark.parametrize("bad", ["Weekly", "a--b", "-x", "x_y", "a" * 65, ""])
def test_a_name_that_breaks_the_rules_is_refused(space: Workspace, bad: str) -> None:
    exp, draft = learned_draft(space)
    with pytest.raises(ExperienceError) as refused:
        exp.promote(draft.id, name=bad)
    assert refused.value.code == "invalid-name"
    assert not (space.ws / "skills" / "auto").exists()


def test_a_taken_name_is_refused_whatever_the_source(space: Workspace) -> None:
    exp, draft = learned_draft(space)
    # A bundled skill: the lowest source; a learned one would shadow it silently.
    write_skill(space.root / "bundled" / "count-words", text=mine("count-words"))
    exp = Experience(space.book())  # the names of the book it is given
    with pytest.raises(ExperienceError) as taken:
        exp.promote(draft.id)
    assert taken.value.code == "name-taken" and "--suffix" in str(taken.value)
    assert not (space.ws / "skills" / "auto").exists()
    assert exp.queue.get(draft.id).status == "pending"
    # The hand-written workspace skill (wordcount) too.
    with pytest.raises(ExperienceError) as also:
        exp.promote(draft.id, name="wordcount")
    assert also.value.code == "name-taken"


def test_a_shadowed_name_is_taken_too(space: Workspace) -> None:
    _, draft = learned_draft(space)
    write_skill(space.root / "bundled" / "twice", text=mine("twice"))
    space.add_skill("twice", mine("twice"))  # shadows the bundled one
    assert [s.hidden.name for s in space.book().discovery.shadowed] == ["twice"]
    with pytest.raises(ExperienceError) as taken:
        Experience(space.book()).promote(draft.id, name="twice")
    assert taken.value.code == "name-taken"


def test_suffix_takes_the_next_free_name(space: Workspace) -> None:
    _, draft = learned_draft(space)
    space.add_skill("count-words", mine("count-words"))
    space.add_skill("count-words-2", mine("count-words-2"))
    done = Experience(space.book()).promote(draft.id, suffix=True)
    assert done.draft.name == "count-words-3"
    names = [s.name for s in space.book().skills]
    assert {"count-words", "count-words-2", "count-words-3"} <= set(names)
    assert space.book().discovery.shadowed == ()


def test_strict_mode_says_the_folder_is_not_the_name(space: Workspace) -> None:
    exp, draft = learned_draft(space)
    report = exp.check(draft.id)
    (note,) = report.diagnostics
    assert report.ok and note.code == "experience.name-not-folder" and note.severity == "warning"
    assert "--strict-name" in note.message
    done = exp.promote(draft.id)
    # As the warning said: the timestamped folder fails the standard's rule.
    codes = [d.code for d in validate_path(done.skill_path.parent, mode="strict").diagnostics]
    assert codes == ["validate.name-mismatch"]


def test_strict_name_names_the_folder_after_the_skill(space: Workspace) -> None:
    exp, draft = learned_draft(space)
    assert exp.check(draft.id, strict_name=True).diagnostics == ()
    done = exp.promote(draft.id, strict_name=True)
    assert done.skill_path == space.ws / "skills" / "auto" / "count-words" / "SKILL.md"
    assert done.replay_path == space.ws / "scripts" / "auto" / f"{draft.id}.sh"
    assert validate_path(done.skill_path.parent, mode="strict").ok
    assert "count-words" in [s.name for s in space.book().skills]


def test_strict_name_in_mixed_mode_names_the_file(space: Workspace) -> None:
    space.config('{skills: {load: {mode: "mixed"}}}')
    exp, draft = learned_draft(space)
    done = exp.promote(draft.id, strict_name=True)
    assert done.skill_path == space.ws / "skills" / "auto" / "count-words.md"
    assert "count-words" in [s.name for s in space.book().skills]


def test_automatic_promotion_never_takes_a_used_name(space: Workspace) -> None:
    space.config("{skills: {experience: {review: false}}}")
    space.add_skill("count-words", mine("count-words"))
    notes = space.data("notes.txt", "a b a\n")
    _, record = run_recorded(space.book(), count_script(space, notes, 1), f"Count words in {notes}")
    learned = Learner.for_book(space.book()).learn(record)
    assert learned.action == "created" and learned.draft is not None
    codes = [d.code for d in learned.diagnostics]
    assert "experience.not-promoted" in codes
    assert learned.draft.status == "pending" and not (space.ws / "skills" / "auto").exists()


def test_an_old_draft_without_a_name_reads_as_its_slug() -> None:
    from skillbook.experience.draft import Draft

    old = {"id": "20260105-143000-count-words", "slug": "count-words", "mode": "openclaw"}
    draft = Draft.from_json(old)
    assert draft.name == "count-words" and draft.workspace is None
    parsed = parse_skill_text(render_skill(draft))
    assert parsed.frontmatter.data["name"] == "count-words"


# ---------------------------------------------------------------------------- CLI


@pytest.fixture
def box(space: Workspace, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    for name, value in space.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(space.root)
    return space


def sb(space: Workspace, *args: str) -> Result:
    return CliRunner().invoke(cli, [*args, "-w", str(space.ws)], prog_name="skillbook")


def test_cli_promote_name_collision_suffix_and_strict_name(box: Workspace) -> None:
    _, draft = learned_draft(box)
    box.add_skill("count-words", mine("count-words"))
    taken = sb(box, "drafts", "promote", draft.id)
    assert taken.exit_code == 2 and "already exists" in taken.output
    as_json = json.loads(sb(box, "drafts", "promote", draft.id, "--json").output)
    assert as_json["code"] == "name-taken"
    bad = sb(box, "drafts", "promote", draft.id, "--name", "Bad Name")
    assert bad.exit_code == 2 and "not a skill name" in bad.output
    done = sb(box, "drafts", "promote", draft.id, "--name", "tally", "--strict-name")
    assert done.exit_code == 0, done.output
    assert f"promoted {draft.id} as tally" in done.output
    assert "name-not-folder" not in done.output
    assert (box.ws / "skills" / "auto" / "tally" / "SKILL.md").is_file()


def test_cli_promote_warns_about_the_folder_in_strict_mode(box: Workspace) -> None:
    _, draft = learned_draft(box)
    done = sb(box, "drafts", "promote", draft.id, "--suffix")
    assert done.exit_code == 0, done.output
    assert f"promoted {draft.id} as count-words" in done.output
    assert "[experience.name-not-folder]" in done.output and "--strict-name" in done.output
