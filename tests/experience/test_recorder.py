"""Sessions as JSON Lines: what the recorder writes, redaction, approvals, outcomes, retention."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import pytest
from factories import WAIT_S, skill_text

from experience.conftest import Workspace, count_script, run_recorded
from skillbook.experience.engine import Experience
from skillbook.experience.hints import UiTarget
from skillbook.experience.procedure import LOOKUP_TOOLS
from skillbook.experience.record import SessionRecord
from skillbook.experience.recorder import SessionRecorder
from skillbook.experience.store import SessionStore
from skillbook.runtime import ModelError
from skillbook.runtime.agent import Agent
from skillbook.runtime.approval import ExecPolicy
from skillbook.runtime.find_skills import FindSkillsTool
from skillbook.runtime.providers.base import ToolCall
from skillbook.runtime.providers.scripted import ScriptedModel, call
from skillbook.runtime.tools import ToolResult

SECRET = "sk-live-0123456789abcdef"
KEYED = skill_text(
    "keyed",
    "Print the configured API key's length.",
    metadata={"openclaw": {"primaryEnv": "KEYED_API_KEY"}},
    body="Run `echo $KEYED_API_KEY` as skill keyed.\n",
)


def lines_of(record: SessionRecord) -> list[dict[str, Any]]:
    assert record.path is not None
    return [json.loads(x) for x in record.path.read_text(encoding="utf-8").splitlines()]


def test_a_run_is_written_as_json_lines_in_the_state_dir(space: Workspace) -> None:
    notes = space.data("notes.txt", "a b c a b a\n")
    _, record = run_recorded(space.book(), count_script(space, notes, 2), f"Count {notes}")
    assert record.path == space.state / "sessions" / f"{record.id}.jsonl"
    kinds = [line["type"] for line in lines_of(record)]
    assert kinds[:2] == ["session", "request"]
    assert kinds.count("step") == 4 and kinds.count("tool") == 3 and kinds[-1] == "outcome"
    head = lines_of(record)[0]
    assert (
        head["version"] == 1 and head["workspace"] == str(space.ws) and head["model"] == "scripted"
    )
    assert head["skills"] == {"wordcount": str(space.ws / "skills" / "wordcount")}
    assert record.request == f"Count {notes}"
    assert record.stop == "answer" and record.outcome is not None
    assert record.outcome.text == "Most frequent: a"
    assert record.skills_read == ("wordcount",)
    reads, first, second = record.tools
    assert reads.name == "read" and reads.step == 1 and reads.result.startswith("---")
    assert (first.step, second.step) == (2, 3)
    assert first.result.strip() == "6" and first.cwd == str(space.ws / "skills" / "wordcount")
    assert first.hints == (
        {"kind": "command", "command": first.command, "skill": "wordcount", "cwd": first.cwd},
    )
    assert [s.calls for s in record.steps][3] == ()
    # Reading it back gives the same record.
    assert SessionStore(space.state).load(record.id) == record


def test_secrets_are_redacted_as_in_exec_output(
    space: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    space.add_skill("keyed", KEYED)
    space.config(json.dumps({"skills": {"entries": {"keyed": {"apiKey": SECRET}}}}))
    monkeypatch.setenv("OTHER_SERVICE_TOKEN", "tok-abcdefgh-999")
    script = [
        call("exec", command="echo key=$KEYED_API_KEY", skill="keyed"),
        # The model repeats a secret it should not know; the record still hides it.
        call("exec", command=f"echo {SECRET} $OTHER_SERVICE_TOKEN", skill="keyed"),
        f"done {SECRET}",
    ]
    _, record = run_recorded(space.book(), script, f"show {SECRET} and tok-abcdefgh-999")
    text = record.path.read_text(encoding="utf-8") if record.path else ""
    assert SECRET not in text and "tok-abcdefgh-999" not in text
    first, second = record.tools
    assert first.result.strip() == "key=***"  # exec itself redacted it
    assert second.command == "echo *** $OTHER_SERVICE_TOKEN"
    assert second.result.strip() == "*** ***"
    assert first.secret_env == ("KEYED_API_KEY",)
    assert record.request == "show *** and ***" and record.outcome is not None
    assert record.outcome.text == "done ***"


def test_approvals_and_refusals_are_recorded(space: Workspace) -> None:
    answers = iter([True, False])
    script = [
        [call("exec", command="echo one"), call("exec", command="echo two")],
        "ok",
    ]
    _, record = run_recorded(space.book(), script, "two commands", approve=lambda c: next(answers))
    ran, refused = record.tools
    assert (ran.approved, ran.ok, ran.result.strip()) == (True, True, "one")
    assert (refused.approved, refused.declined, refused.ok) == (False, True, False)
    kinds = [x["type"] for x in lines_of(record)]
    assert kinds.count("approval") == 2


class TapTool:
    """A UI tool that contributes ``ui_target`` hints."""

    name = "tap"
    description = "Tap a UI element."
    schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    }

    def run(self, args: Mapping[str, Any]) -> ToolResult:
        return ToolResult(f"tapped {args['text']}")

    async def arun(self, args: Mapping[str, Any]) -> ToolResult:
        return self.run(args)

    def procedure_hints(self, call: ToolCall, result: ToolResult) -> Sequence[Any]:
        text = call.arguments["text"]
        return [
            UiTarget(
                text=text,
                resource_id="android:id/button1",
                class_name="Button",
                clickable=True,
                action="tap",
            ),
            {"kind": "screen", "title": "Settings"},
            "not a hint",
        ]


class BrokenHints(TapTool):
    name = "broken"

    def procedure_hints(self, call: ToolCall, result: ToolResult) -> Sequence[Any]:
        raise RuntimeError("bug in a tool's hook")


def test_tools_contribute_structured_hints(space: Workspace) -> None:
    script = [call("tap", text="OK"), call("broken", text="x"), "tapped"]
    _, record = run_recorded(space.book(), script, "tap OK", tools=[TapTool(), BrokenHints()])
    tap, broken = record.tools
    assert tap.hints == (
        {
            "kind": "ui_target",
            "action": "tap",
            "text": "OK",
            "resourceId": "android:id/button1",
            "className": "Button",
            "clickable": True,
        },
        {"kind": "screen", "title": "Settings"},
    )
    assert broken.hints == () and broken.ok


def test_a_failed_request_and_a_cancelled_one_are_recorded(space: Workspace) -> None:
    book = space.book()
    exp = Experience(book)
    agent = Agent(book, ScriptedModel([ModelError("boom")]), recorder=exp.recorder())
    with pytest.raises(ModelError):
        asyncio.run(agent.invoke("hello"))
    failed = exp.last_session()
    assert failed is not None and failed.stop == "error"
    assert failed.outcome is not None and "boom" in (failed.outcome.error or "")

    async def cancel() -> None:
        streaming = asyncio.Event()

        def reply(_request: object) -> str:
            streaming.set()
            return "x" * 200

        slow = Agent(book, ScriptedModel([reply], delay_s=0.05), recorder=exp.recorder())
        task = asyncio.create_task(slow.invoke("slow"))
        # Cancel once the model is answering: the session has started by then.
        await asyncio.wait_for(streaming.wait(), WAIT_S)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel())
    cancelled = exp.last_session()
    assert cancelled is not None and cancelled.stop == "cancelled"


def test_a_failing_recorder_never_breaks_the_turn(space: Workspace) -> None:
    class Broken(SessionRecorder):
        def event(self, event: Any) -> None:
            raise RuntimeError("disk on fire")

    recorder = Broken(SessionStore(space.state))
    agent = Agent(
        space.book(),
        ScriptedModel([call("exec", command="echo hi"), "fine"]),
        recorder=recorder,
        exec_policy=ExecPolicy.allow_all(),
    )
    result = asyncio.run(agent.invoke("hi"))
    assert result.text == "fine"
    assert recorder.last is not None and recorder.last.stop == "answer"


def test_slash_commands_typed_by_the_user_are_recorded_as_dispatched(space: Workspace) -> None:
    space.add_skill(
        "shout",
        skill_text(
            "shout",
            "Echo loudly.",
            body="Body\n",
            metadata={"skillbook": {"commandExec": 'echo "$1!"'}},
        ),
    )
    _, record = run_recorded(space.book(), [], "/shout hey")
    assert record.stop == "dispatched" and record.request == "/shout hey"
    (entry,) = record.tools
    assert entry.step == 0 and entry.result.strip() == "hey!"


def test_retention_keeps_the_newest_sessions(space: Workspace) -> None:
    space.config("{skills: {experience: {sessions: {keep: 2}}}}")
    book = space.book()
    ids = []
    for n in range(4):
        _, record = run_recorded(book, [f"answer {n}"], f"question {n}")
        ids.append(record.id)
    assert SessionStore(space.state).ids() == sorted(ids, reverse=True)[:2]


def test_recording_can_be_turned_off(space: Workspace) -> None:
    space.config("{skills: {experience: {record: false}}}")
    assert Experience(space.book()).recorder() is None


def test_selection_block_and_find_skills_are_recorded_but_not_learned(space: Workspace) -> None:
    # skills.selection puts a skills block before the request and offers find_skills.
    space.config(
        '{skills: {selection: {mode: "always", backend: "bm25", minScore: 0.01, indexDir: "%s"}}}'
        % (space.root / "index")
    )
    for name, what in [("weather", "Weather forecasts for a city."), ("pdf", "Merge PDF files.")]:
        space.add_skill(name, skill_text(name, what, body="Body\n"))
    notes = space.data("notes.txt", "a b a\n")
    request = f"Count the words in {notes}"
    model = ScriptedModel(
        [call("find_skills", query="count words"), *count_script(space, notes, 1)]
    )
    exp = Experience(space.book())
    agent = Agent(space.book(), model, recorder=exp.recorder(), exec_policy=ExecPolicy.allow_all())
    asyncio.run(agent.invoke(request))
    sent = model.requests[0].messages[-1].content
    assert "<available_skills>" in sent and sent.endswith(request)
    record = exp.last_session()
    assert record is not None and record.request == request
    found, *rest = record.tools
    assert (found.name, dict(found.arguments), found.ok) == (
        "find_skills",
        {"query": "count words"},
        True,
    )
    assert "<name>wordcount</name>" in found.result
    assert [t.name for t in rest] == ["read", "exec", "exec"]
    # The lookup is not part of the learned procedure: same fingerprint as without it.
    assert FindSkillsTool.name in LOOKUP_TOOLS
    draft = exp.learner().learn(record).draft
    assert draft is not None and "find_skills" not in [s.tool for s in draft.steps]
    _, plain = run_recorded(space.book(), count_script(space, notes, 1), request)
    assert exp.learner().learn(plain).action == "updated"
