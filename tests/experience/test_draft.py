"""Drafts: frontmatter per mode, the body, and strict validity (ours and skills-ref's)."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from factories import write_skill
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import skillbook
from experience.conftest import Workspace, count_script, run_recorded
from skillbook.config.file import Config
from skillbook.config.mode import Mode
from skillbook.experience.draft import build_draft, draft_slug
from skillbook.experience.learner import Learner
from skillbook.experience.procedure import reconstruct
from skillbook.experience.record import Outcome, SessionRecord, ToolEntry
from skillbook.experience.skill_file import render_skill
from skillbook.pipeline.parse.skill_file import parse_skill_text
from skillbook.pipeline.validation.validate import validate_path
from skillbook.runtime.providers.scripted import call

skills_ref = pytest.importorskip("skills_ref", reason="skills-ref is not installed")
NOW = datetime(2026, 1, 5, 14, 30, tzinfo=UTC)


def session(request: str, command: str = "wc -w /tmp/x/a.txt") -> SessionRecord:
    return SessionRecord(
        id="20260105-143000-abcdef",
        started="2026-01-05T14:30:00Z",
        request=request,
        tools=(ToolEntry("c1", "exec", {"command": command}, step=1, result="3\n"),),
        outcome=Outcome("answer", "3 words"),
    )


def test_a_learned_draft_has_the_frontmatter_and_body(space: Workspace) -> None:
    notes = space.data("notes.txt", "a b a\n")
    _, record = run_recorded(
        space.book(),
        count_script(space, notes, 2),
        f"Count the words in {notes} and show the top 2",
    )
    learned = Learner.for_book(space.book()).learn(record)
    draft = learned.draft
    assert draft is not None and learned.action == "created"
    parsed = parse_skill_text(render_skill(draft))
    # The name is the task's; the id (file and folder names) keeps the timestamp.
    assert parsed.name == draft.name == "count-words-top"
    assert draft.id == f"{draft.id[:15]}-count-words-top"
    assert "Use when" in parsed.description
    meta = parsed.frontmatter.data["metadata"]
    assert meta == {
        "source_session": record.id,
        "behavior_fingerprint": draft.fingerprint,
        "created": draft.created,
        "skills_used": "wordcount",
        "run_count": "1",
        "generated_by": "skillbook",
    }
    body = parsed.body
    assert "## Procedure" in body and "## Checks" in body and "## Parameters" in body
    assert 'wc -w < "${file}"' in body and 'head -n "${top}"' in body
    assert "- `file` (file): values seen" in body and "- `top` (number)" in body
    assert "Read `SKILL.md` of the `wordcount` skill" in body
    assert "The last command prints `2 a`." in body
    # Every program of a pipeline, not only the first word of the command.
    assert "- Programs run: `wc`, `tr`, `sort`, `uniq`, `head`" in body


def test_pitfalls_are_failed_attempts_that_were_retried(space: Workspace) -> None:
    lines = space.data("lines.txt", "one\n")
    script = [
        call("exec", command=f"wc --bogus-flag {lines}"),
        call("exec", command=f"wc -l {lines}"),
        "one line",
    ]
    _, record = run_recorded(space.book(), script, f"count the lines of {lines}")
    draft = Learner.for_book(space.book()).learn(record).draft
    assert draft is not None
    (pit,) = draft.pitfalls
    assert pit.attempt == f"wc --bogus-flag {lines}" and pit.fixed_by == f"wc -l {lines}"
    assert "exit code" in pit.error
    assert "## Pitfalls" in render_skill(draft)
    assert [s.raw for s in draft.steps] == [f"wc -l {lines}"]
    assert [s.command for s in draft.steps] == ['wc -l "${file}"']


@pytest.mark.parametrize("mode", [Mode.MIXED, Mode.LEGACY])
def test_mixed_and_legacy_drafts_are_standalone_markdown_files(mode: Mode) -> None:
    record = session("count words in /tmp/x/a.txt")
    draft = build_draft(record, reconstruct(record), mode=mode, now=NOW)
    assert draft.standalone and draft.skill_filename == f"{draft.id}.md"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / draft.skill_filename
        path.write_text(render_skill(draft), encoding="utf-8")
        assert validate_path(path, mode=mode).ok
        # The loader of that mode finds it in a skills folder.
        config = Config.from_mapping({"skills": {"load": {"extraDirs": [tmp]}}})
        book = skillbook.load(env={"HOME": tmp}, mode=mode, config=config)
        assert draft.name in [s.name for s in book.skills]


REQUESTS = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")),
    min_size=1,
    max_size=120,
) | st.sampled_from(
    [
        'say "---" now',
        "key: value: more",
        "# heading",
        "- item",
        "{json}",
        "[list]",
        "a'b\"c",
        "ünïcödé ⚠️",
    ]
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request=REQUESTS)
def test_strict_drafts_pass_strict_validation_and_skills_ref(request: str) -> None:
    record = session(request)
    draft = build_draft(record, reconstruct(record), mode=Mode.STRICT, now=NOW)
    assert draft_slug(request)  # never empty
    with tempfile.TemporaryDirectory() as tmp:
        # Strict: the folder named after the skill (promote --strict-name).
        folder = write_skill(Path(tmp) / draft.name, text=render_skill(draft))
        result = validate_path(folder, mode=Mode.STRICT)
        assert result.ok, [d.message for d in result.diagnostics]
        assert list(skills_ref.validate(folder)) == []


PIECES = ["`", "``", "```", "````", "~~~", "\n", "\r\n", " ", "echo", "x", "#", "-"]


# No deadline: no timed assertions (a first call under load took 318 ms on two shared cores).
@settings(max_examples=150, deadline=None)
@given(
    command=st.lists(st.sampled_from(PIECES), min_size=1, max_size=12)
    .map("".join)
    .filter(lambda c: c.strip() != "")
)
def test_a_command_never_escapes_its_code_block(command: str) -> None:
    from markdown_it import MarkdownIt

    record = session("do it", command)
    text = render_skill(build_draft(record, reconstruct(record), mode=Mode.OPENCLAW, now=NOW))
    body = text.split("\n---\n", 1)[1]
    fences = [t for t in MarkdownIt("commonmark").parse(body) if t.type == "fence"]
    # The first is how to run the replay helper.
    assert fences[0].content.startswith("bash ../../../scripts/auto/")
    assert [t.content for t in fences[1:]] == [command.replace("\r\n", "\n") + "\n"]


def test_backticks_in_a_command_get_a_longer_fence_and_spans() -> None:
    command = "echo ```done``` `date`"
    record = SessionRecord(
        id="20260105-143000-abcdef",
        started="2026-01-05T14:30:00Z",
        request="do it",
        tools=(
            ToolEntry("c0", "exec", {"command": "false `x`"}, step=1, result="no", is_error=True),
            ToolEntry("c1", "exec", {"command": command}, step=2, result="```done``` `x`\n"),
        ),
        outcome=Outcome("answer", "ok"),
    )
    text = render_skill(build_draft(record, reconstruct(record), mode=Mode.OPENCLAW, now=NOW))
    assert f"   ````sh\n   {command}\n   ````\n" in text
    assert "prints ```` ```done``` `x` ````." in text
    assert "- `` false `x` `` failed (no); what worked: ```` echo ```done``` `date` ````" in text
