"""From a session to a draft: create, update by fingerprint, skip, risk, duplicates, refine."""

from __future__ import annotations

import asyncio
import inspect
import json
import re
from pathlib import Path

import pytest

from experience.conftest import Workspace, count_script, new_space, run_recorded
from skillbook.config.mode import Mode
from skillbook.experience.engine import Experience
from skillbook.experience.learner import Learned, Learner
from skillbook.experience.skill_file import render_skill
from skillbook.experience.usage import UsageStore
from skillbook.runtime import ModelError
from skillbook.runtime.providers.base import ToolCall
from skillbook.runtime.providers.scripted import ScriptedModel, call


def count_task(space: Workspace, name: str, text: str, top: int) -> tuple[Learner, Learned]:
    notes = space.data(name, text)
    _, record = run_recorded(
        space.book(),
        count_script(space, notes, top),
        f"Count the words in {notes} and show the top {top}",
    )
    learner = Learner.for_book(space.book())
    return learner, learner.learn(record)


def test_the_same_task_with_other_inputs_updates_the_same_draft(space: Workspace) -> None:
    _, first = count_task(space, "a.txt", "a b a\n", 2)
    _, second = count_task(space, "b.txt", "x y z\n", 1)
    assert first.draft is not None and second.draft is not None
    assert (first.action, second.action) == ("created", "updated")
    assert second.draft.id == first.draft.id and second.draft.fingerprint == first.draft.fingerprint
    queue = Learner.for_book(space.book()).queue
    (draft,) = queue.drafts()
    assert draft.run_count == 2 and len(draft.sessions) == 2
    assert [e["top"] for e in draft.examples] == ["2", "1"]
    assert [e["file"].rsplit("/", 1)[-1] for e in draft.examples] == ["a.txt", "b.txt"]
    assert 'run_count: "2"' in render_skill(draft)
    assert (queue.folder(draft.id) / "previous.md").is_file()
    assert "updated draft" in second.message()


@pytest.mark.parametrize("folder", ["pytest-1", "pytest-2"])
def test_a_number_of_the_request_in_the_workspace_path_is_not_a_parameter_there(
    tmp_path: Path, folder: str
) -> None:
    # Once in 17 fast-lane runs the test above gave created/created: pytest's basetemp was
    # pytest-1 or pytest-2, so "top 1" or "top 2" also matched the 1 or 2 of the skill's
    # folder, and one run's fingerprint masked the folder and the other's did not.
    space = new_space(tmp_path / folder)
    _, first = count_task(space, "a.txt", "a b a\n", 2)
    _, second = count_task(space, "b.txt", "x y z\n", 1)
    assert (first.action, second.action) == ("created", "updated")


def test_a_failed_run_leaves_no_draft(space: Workspace) -> None:
    script = [call("exec", command="false", skill="wordcount"), "it failed"]
    _, record = run_recorded(space.book(), script, "do the thing")
    learned = Learner.for_book(space.book()).learn(record)
    assert learned.action == "skipped" and learned.draft is None and not learned.quiet
    assert learned.diagnostics[0].code == "experience.not-learned"
    assert "failed" in learned.message()
    assert Learner.for_book(space.book()).queue.drafts() == []


def test_a_run_that_only_read_files_has_nothing_to_repeat(space: Workspace) -> None:
    skill = space.ws / "skills" / "wordcount" / "SKILL.md"
    _, record = run_recorded(space.book(), [call("read", path=str(skill)), "read it"], "read")
    learned = Learner.for_book(space.book()).learn(record)
    assert learned.action == "skipped" and learned.quiet


def test_reading_a_credential_file_without_approval_gets_the_risk_marker(space: Workspace) -> None:
    creds = space.home / ".aws" / "credentials"
    creds.parent.mkdir(parents=True)
    creds.write_text("[default]\naws_access_key_id = AKIAEXAMPLE\n", encoding="utf-8")
    script = [call("exec", command=f"grep -c aws_access_key_id {creds}"), "one key"]
    _, record = run_recorded(space.book(), script, "how many AWS keys do I have?")
    exp = Experience(space.book())
    draft = exp.learner().learn(record).draft
    assert draft is not None
    (risk,) = draft.risks
    assert risk.capability == "credential-files" and str(creds) in risk.evidence
    text = render_skill(draft)
    assert "⚠️ **Warning:**" in text and 'risk: "credential-files"' in text
    report = exp.check(draft.id)
    assert [d.code for d in report.diagnostics if d.severity == "error"] == [
        "experience.risk-unacknowledged"
    ]
    # The message names the flag and the keyword that really exist (issue 18 §6).
    (message,) = [d.message for d in report.diagnostics if d.severity == "error"]
    keywords = re.findall(r"\b([a-z_]+)=True", message)
    assert keywords == ["accept_risk"] and "--accept-risk" in message
    assert all(k in inspect.signature(exp.promote).parameters for k in keywords)
    assert exp.check(draft.id, accept_risk=True).ok
    assert exp.promote(draft.id, accept_risk=True).skill_path.is_file()


def test_an_approved_risky_command_gets_no_marker(space: Workspace) -> None:
    creds = space.home / ".netrc"
    creds.write_text("machine x login y\n", encoding="utf-8")
    script = [call("exec", command=f"wc -l {creds}"), "one"]
    _, record = run_recorded(space.book(), script, "count netrc lines", approve=lambda c: True)
    draft = Learner.for_book(space.book()).learn(record).draft
    assert draft is not None and draft.risks == ()


def test_a_command_an_allowlist_let_run_unasked_counts_as_unapproved(space: Workspace) -> None:
    # The user could have been asked, but skills.exec.allow ran it without a question.
    space.config('{skills: {exec: {allow: ["wc -l"]}}}')
    creds = space.home / ".netrc"
    creds.write_text("machine x login y\n", encoding="utf-8")
    asked: list[ToolCall] = []

    def approve(c: ToolCall) -> bool:
        asked.append(c)
        return True

    script = [call("exec", command=f"wc -l {creds}"), "one"]
    _, record = run_recorded(space.book(), script, "count netrc lines", approve=approve)
    (entry,) = record.tools
    assert asked == [] and entry.ok and entry.approved is None
    draft = Learner.for_book(space.book()).learn(record).draft
    assert draft is not None
    assert [r.capability for r in draft.risks] == ["credential-files"]


def test_near_duplicates_are_reported_with_what_they_resemble(space: Workspace) -> None:
    first = count_task(space, "a.txt", "a b a\n", 2)[1].draft
    assert first is not None
    notes = space.data("c.txt", "q q r\n")
    script = [
        call("read", path=str(space.ws / "skills" / "wordcount" / "SKILL.md")),
        call("exec", command=f"wc -w < {notes}", skill="wordcount"),
        call(
            "exec",
            command=f"tr -s ' ' '\\n' < {notes} | sort | uniq -c | sort -n",
            skill="wordcount",
        ),
        "done",
    ]
    _, record = run_recorded(space.book(), script, f"Count the words of {notes}, least first")
    learned = Learner.for_book(space.book()).learn(record)
    assert learned.action == "created"
    assert learned.draft is not None
    kinds = {(d.kind, d.of) for d in learned.draft.near_duplicates}
    assert ("steps", first.id) in kinds and ("description", "wordcount") in kinds
    assert {d.code for d in learned.diagnostics} == {"experience.near-duplicate"}


def test_with_review_off_a_clean_draft_is_promoted_at_once(space: Workspace) -> None:
    space.config("{skills: {experience: {review: false}}}")
    _, learned = count_task(space, "a.txt", "a b\n", 1)
    assert learned.draft is not None
    assert learned.action == "promoted" and learned.promotion is not None
    assert learned.promotion.skill_path.is_file()
    assert learned.draft.name in [s.name for s in space.book().skills]


def test_mixed_mode_drafts_are_standalone_files_and_load_after_promotion(space: Workspace) -> None:
    space.config('{skills: {load: {mode: "mixed"}}}')
    learner, learned = count_task(space, "a.txt", "a b\n", 1)
    draft = learned.draft
    assert draft is not None
    assert (
        draft.mode == Mode.MIXED and (learner.queue.folder(draft.id) / f"{draft.id}.md").is_file()
    )
    done = Experience(space.book()).promote(draft.id)
    assert done.skill_path == space.ws / "skills" / "auto" / f"{draft.id}.md"
    assert draft.name in [s.name for s in space.book().skills]


REFINED = {
    "slug": "word-frequencies",
    "title": "List the most frequent words of a file",
    "description": "Counts words in a text file. Use when the user asks which words are most frequent.",
    "triggers": ["which words are most frequent"],
    "notes": ["Read the skill.", "Count all words.", "Rank the words."],
    "checks": ["The last command prints one line per word, most frequent first."],
}


def refine(space: Workspace, reply: str | BaseException) -> tuple[Learner, Learned]:
    notes = space.data("a.txt", "a b a\n")
    _, record = run_recorded(space.book(), count_script(space, notes, 1), f"count {notes}")
    learner = Learner.for_book(space.book())
    return learner, asyncio.run(learner.alearn(record, refine_with=ScriptedModel([reply])))


def test_refinement_improves_the_texts_and_keeps_the_commands(space: Workspace) -> None:
    learner, learned = refine(space, "Here:\n" + json.dumps(REFINED))
    draft = learned.draft
    assert draft is not None
    assert draft.refined and draft.id.endswith("-word-frequencies")
    assert draft.title == REFINED["title"] and draft.description == REFINED["description"]
    assert [s.note for s in draft.steps] == REFINED["notes"]
    unrefined = learner.queue.unrefined(draft)
    assert unrefined is not None and not unrefined.refined
    assert [s.command for s in draft.steps] == [s.command for s in unrefined.steps]
    assert draft.fingerprint == unrefined.fingerprint
    diff = Experience(space.book()).diff(draft.id)
    assert "(unrefined)" in diff and "+# List the most frequent words of a file" in diff


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (ModelError("server down"), "model request failed"),
        ("no json here", "did not answer with a JSON object"),
        (json.dumps({**REFINED, "slug": "Bad Slug"}), "breaks the name rules"),
        (json.dumps({**REFINED, "description": "No trigger."}), "does not say when"),
    ],
)
def test_a_failed_refinement_keeps_the_unrefined_draft(
    space: Workspace, reply: str | BaseException, why: str
) -> None:
    learner, learned = refine(space, reply)
    draft = learned.draft
    assert draft is not None
    assert learned.action == "created" and not draft.refined and why in (draft.refine_error or "")
    assert [d.code for d in learned.diagnostics] == ["experience.refine-failed"]
    assert learner.queue.get(draft.id).refine_error == draft.refine_error


def test_usage_counters_come_from_sessions(space: Workspace) -> None:
    count_task(space, "a.txt", "a b\n", 1)
    count_task(space, "b.txt", "c d\n", 2)
    report = UsageStore(space.state).load()
    used = report.skills["wordcount"]
    assert (used.reads, used.runs) == (2, 4) and used.last_used is not None
    assert report.since is not None and len(used.commands) == 4
