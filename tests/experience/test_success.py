"""The documented success rule, and replacing it from Python."""

from __future__ import annotations

from dataclasses import replace

import pytest

from experience.conftest import Workspace, count_script, run_recorded
from skillbook.experience.learner import Learner
from skillbook.experience.record import Outcome, SessionRecord, ToolEntry
from skillbook.experience.success import Verdict, default_success


def record(stop: str, *tools: ToolEntry, feedback: str | None = None) -> SessionRecord:
    return SessionRecord(
        id="20260101-000000-abcdef",
        started="2026-01-01T00:00:00Z",
        request="do it",
        tools=tools,
        outcome=Outcome(stop),
        feedback=feedback,
    )


def tool(call_id: str, step: int, *, error: bool = False, declined: bool = False) -> ToolEntry:
    return ToolEntry(
        call_id, "exec", {"command": "true"}, step=step, is_error=error, declined=declined
    )


@pytest.mark.parametrize(
    ("rec", "ok", "reason"),
    [
        (record("answer", tool("a", 1)), True, "no tool call failed"),
        (record("answer", tool("a", 1, error=True), tool("b", 2)), True, "no tool call failed"),
        (record("answer", tool("a", 1), tool("b", 2, error=True)), False, "(exec) failed"),
        (record("answer", tool("a", 2, error=True), tool("b", 2)), False, "(exec) failed"),
        (record("answer", tool("a", 1, declined=True)), False, "was refused"),
        (record("max-steps", tool("a", 1)), False, "step limit"),
        (record("error"), False, "the request failed"),
        (record("cancelled"), False, "cancelled"),
        (record("dispatched", tool("a", 0)), False, "without the model"),
        (record("answer", tool("a", 1), feedback="bad"), False, "marked the result bad"),
        (replace(record("answer"), outcome=None), False, "interrupted"),
    ],
)
def test_the_default_rule(rec: SessionRecord, ok: bool, reason: str) -> None:
    verdict = default_success(rec)
    assert verdict.success is ok and bool(verdict) is ok
    assert reason in verdict.reason


def test_the_rule_can_be_replaced_from_python(space: Workspace) -> None:
    notes = space.data("notes.txt", "a b a\n")
    _, rec = run_recorded(space.book(), count_script(space, notes, 1), f"count {notes}")

    def needs_answer_about_a(r: SessionRecord) -> Verdict:
        text = r.outcome.text if r.outcome else ""
        return Verdict("b" in text, "the answer must name b")

    learner = Learner.for_book(space.book(), success=needs_answer_about_a)
    learned = learner.learn(rec)
    assert learned.action == "skipped" and learned.verdict.reason == "the answer must name b"
    assert learner.queue.drafts() == []
    assert Learner.for_book(space.book()).learn(rec).action == "created"
