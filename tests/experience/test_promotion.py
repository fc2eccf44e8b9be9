"""The gate, promotion into skills/auto (visible to the catalog and watchers), rejection."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import pytest
from factories import skill_text

from experience.conftest import Workspace, count_script, run_recorded
from skillbook.experience import ExperienceError, ExperienceNotFound
from skillbook.experience.draft import Draft
from skillbook.experience.engine import Experience
from skillbook.experience.learner import Learned, Learner
from skillbook.experience.procedure import ProcedureStep
from skillbook.experience.promotion import check_draft
from skillbook.experience.replay import render_replay
from skillbook.experience.skill_file import render_skill
from skillbook.pipeline.book import Loader
from skillbook.runtime.session import SkillSession
from skillbook.runtime.watch import ChangeSet


def learned_draft(space: Workspace, name: str = "notes.txt") -> tuple[Experience, Draft]:
    notes = space.data(name, "a b a\n")
    _, record = run_recorded(space.book(), count_script(space, notes, 1), f"Count words in {notes}")
    exp = Experience(space.book())
    draft = exp.learner().learn(record).draft
    assert draft is not None
    return exp, draft


def test_a_draft_is_not_in_the_catalog_until_promoted(space: Workspace) -> None:
    exp, draft = learned_draft(space)
    book = space.book()
    assert draft.name not in [s.name for s in book.skills] and draft.name not in book.prompt
    report = exp.check(draft.id)
    # Strict promotion says once that the timestamped folder is not the name.
    assert report.ok and [d.code for d in report.diagnostics] == ["experience.name-not-folder"]
    done = exp.promote(draft.id)
    assert done.skill_path == space.ws / "skills" / "auto" / draft.id / "SKILL.md"
    assert done.replay_path == space.ws / "scripts" / "auto" / f"{draft.id}.sh"
    assert done.skill_path.read_text(encoding="utf-8") == render_skill(draft)
    assert done.replay_path.read_text(encoding="utf-8") == render_replay(draft)
    after = space.book()
    learned = next(s for s in after.skills if s.name == draft.name == "count-words")
    assert learned.source == "openclaw-workspace" and "count-words" in after.prompt
    assert f"<name>{draft.name}</name>" in after.prompt
    assert exp.queue.drafts() == [] and exp.queue.get(draft.id).status == "promoted"
    assert exp.queue.get(draft.id).promoted_to == str(done.skill_path)
    # Not twice.
    with pytest.raises(ExperienceError) as again:
        exp.promote(draft.id)
    assert again.value.code == "not-pending"


PROFILES = ("openclaw-2026.4", "openclaw-2026.9")


@pytest.mark.parametrize("compat", PROFILES)
def test_a_hand_written_skill_wins_the_name_over_a_learned_one(
    space: Workspace, compat: str
) -> None:
    exp, draft = learned_draft(space)
    exp.promote(draft.id)
    # Written after the promotion: the person's own skill still wins its name.
    mine = space.add_skill(draft.name, skill_text(draft.name, "Mine.", body="Body\n"))
    book = space.book(compat=compat)
    assert next(s for s in book.skills if s.name == draft.name).file_path == mine
    hidden = [str(s.hidden.file_path) for s in book.discovery.shadowed]
    assert hidden == [exp.queue.get(draft.id).promoted_to]


@pytest.mark.parametrize("compat", PROFILES)
def test_a_learned_skill_loads_once_under_each_profile(space: Workspace, compat: str) -> None:
    # 2026.9 scans <ws>/skills recursively; skills/auto is still its own source only.
    exp, draft = learned_draft(space)
    done = exp.promote(draft.id)
    book = space.book(compat=compat)
    (learned,) = [s for s in book.discovery.loaded if s.name == draft.name]
    assert learned.file_path == done.skill_path and learned.source == "openclaw-workspace"
    assert book.discovery.shadowed == () and draft.name in book.prompt
    # Read once: its findings (if any) are not repeated.
    found = [(d.code, d.path) for d in book.diagnostics if draft.id in str(d.path)]
    assert len(found) == len(set(found))


def test_watchers_see_a_promotion(space: Workspace) -> None:
    exp, draft = learned_draft(space)
    loader = Loader(space.ws, env=space.env)
    seen = threading.Event()
    with SkillSession(loader) as session:
        assert draft.name not in [s.name for s in session.current().skills]
        watcher = session.watcher
        assert watcher is not None and watcher.wait_ready(10)

        def changed(change: ChangeSet) -> None:
            if any(draft.id in p for p in change.paths):
                seen.set()

        watcher.on_change = changed
        exp.promote(draft.id)
        assert seen.wait(30), "the watcher did not report the promoted skill"
        assert draft.name in [s.name for s in session.current().skills]


def test_the_gate_shows_every_failure(space: Workspace) -> None:
    _, draft = learned_draft(space)
    bad = replace(draft, description="Counts words.", steps=())
    report = check_draft(bad)
    codes = {d.code for d in report.diagnostics}
    assert not report.ok and {"experience.no-when", "experience.no-steps"} <= codes
    broken = replace(draft, steps=(ProcedureStep("exec", command="if then (", raw="x"),))
    assert "experience.replay-invalid" in {d.code for d in check_draft(broken).diagnostics}
    long_name = replace(draft, skill_name="Bad_Name")
    assert "validate.name-invalid" in {d.code for d in check_draft(long_name).diagnostics}


def test_a_refused_promotion_raises_with_the_findings_and_writes_nothing(space: Workspace) -> None:
    exp, draft = learned_draft(space)
    exp.queue.save(replace(draft, description="Counts words."))
    with pytest.raises(ExperienceError) as refused:
        exp.promote(draft.id)
    assert refused.value.code == "promotion-refused"
    (finding,) = [d for d in refused.value.diagnostics if d.severity == "error"]
    assert finding.code == "experience.no-when"
    assert finding.path == exp.queue.skill_file(draft)
    assert not (space.ws / "skills" / "auto").exists()
    assert exp.queue.get(draft.id).status == "pending"


def test_promotion_never_overwrites_another_file(space: Workspace) -> None:
    exp, draft = learned_draft(space)
    target = space.ws / "skills" / "auto" / draft.id / "SKILL.md"
    target.parent.mkdir(parents=True)
    target.write_text("someone else's skill\n", encoding="utf-8")
    with pytest.raises(ExperienceError) as taken:
        exp.promote(draft.id)
    assert taken.value.code == "target-exists"
    assert target.read_text(encoding="utf-8") == "someone else's skill\n"


def test_rejection_archives_with_the_reason_and_the_procedure_is_not_drafted_again(
    space: Workspace,
) -> None:
    exp, draft = learned_draft(space)
    with pytest.raises(ExperienceError):
        exp.reject(draft.id, "  ")
    done = exp.reject(draft.id, "duplicate of wordcount")
    assert done.status == "rejected" and done.rejected_reason == "duplicate of wordcount"
    assert (exp.queue.root / "archive" / draft.id / "draft.json").is_file()
    assert exp.queue.drafts() == []
    again = learned_draft_again(space)
    assert again.action == "known" and again.draft is not None and again.draft.id == draft.id
    assert exp.queue.get(draft.id).run_count == 2


def learned_draft_again(space: Workspace) -> Learned:
    notes = space.data("again.txt", "x y\n")
    _, record = run_recorded(space.book(), count_script(space, notes, 5), f"Count words in {notes}")
    return Learner.for_book(space.book()).learn(record)


def test_drafts_are_found_by_prefix_and_last(space: Workspace) -> None:
    exp, draft = learned_draft(space)
    assert exp.queue.get("last") == draft
    assert exp.queue.get(draft.id[:12]).id == draft.id
    with pytest.raises(ExperienceNotFound):
        exp.queue.get("nope")


def test_a_damaged_draft_is_reported_not_fatal(space: Workspace) -> None:
    exp, draft = learned_draft(space)
    broken = exp.queue.root / "drafts" / "20990101-000000-broken"
    broken.mkdir()
    (broken / "draft.json").write_text("{not json", encoding="utf-8")
    assert [d.id for d in exp.queue.drafts()] == [draft.id]
    (problem,) = exp.queue.problems
    assert problem.code == "experience.draft-unreadable" and problem.path == broken


def test_no_workspace_no_promotion(space: Workspace, tmp_path: Path) -> None:
    _, draft = learned_draft(space)
    import skillbook

    book = skillbook.load(None, env=space.env)
    with pytest.raises(ExperienceError) as missing:
        Experience(book).promote(draft.id)
    assert missing.value.code == "no-workspace"
