"""Usage counters, stale skills (with a clock), pins, and ``skills.experience`` validation."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

import pytest
from factories import skill_text

from experience.conftest import Workspace, count_script, run_recorded
from skillbook.config.file import Config
from skillbook.config.mode import Mode
from skillbook.errors import ConfigError
from skillbook.experience.engine import Experience
from skillbook.experience.usage import UsageStore, stale_skills

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def age(path: os.PathLike[str], days: int) -> None:
    stamp = (NOW - timedelta(days=days)).timestamp()
    os.utime(path, (stamp, stamp))


def test_stale_skills_use_last_use_tracking_start_and_file_age(space: Workspace) -> None:
    old = space.add_skill("old", skill_text("old", "Old.", body="Body\n"))
    fresh = space.add_skill("fresh", skill_text("fresh", "Fresh.", body="Body\n"))
    age(old, 400)
    age(fresh, 5)
    age(space.ws / "skills" / "wordcount" / "SKILL.md", 400)
    book = space.book()
    store = UsageStore(space.state)
    # Nothing recorded yet: staleness cannot be known.
    assert stale_skills(book.skills, store.load(), after_days=90, now=NOW) == []
    notes = space.data("n.txt", "a\n")
    run_recorded(book, count_script(space, notes, 1), f"count {notes}")
    report = store.load()
    assert report.since is not None
    # Counting started today: nothing is 90 days idle yet.
    assert stale_skills(book.skills, report, after_days=90, now=NOW - timedelta(days=300)) == []
    later = datetime.now(UTC) + timedelta(days=120)
    found = {s.name: s for s in stale_skills(book.skills, report, after_days=90, now=later)}
    assert set(found) == {"old", "fresh", "wordcount"}
    assert found["old"].last_used is None and found["wordcount"].last_used is not None
    assert found["old"].idle_days >= 119
    pinned = stale_skills(book.skills, report, after_days=90, now=later, pinned=["old"])
    assert "old" not in {s.name for s in pinned}
    assert stale_skills(book.skills, report, after_days=0, now=later) == []
    bundled = {s.name for s in stale_skills(book.skills, report, after_days=1, now=later)}
    assert not any(s.source == "openclaw-bundled" and s.name in bundled for s in book.skills)


def test_pins_are_kept_in_the_usage_file(space: Workspace) -> None:
    store = UsageStore(space.state)
    store.pin("deploy")
    store.pin("weather")
    store.pin("deploy", on=False)
    assert store.load().pinned == ("weather",)


def test_the_config_section_is_validated_with_key_paths() -> None:
    exp = Config.from_mapping(
        {
            "skills": {
                "experience": {
                    "learn": False,
                    "review": False,
                    "promoteMode": "mixed",
                    "sessions": {"keep": 5, "maxAgeDays": 7},
                    "staleAfterDays": 0,
                    "pinned": [" a ", ""],
                }
            }
        }
    ).skills.experience
    assert (exp.learn, exp.review, exp.promote_mode, exp.keep_sessions, exp.max_age_days) == (
        False,
        False,
        Mode.MIXED,
        5,
        7,
    )
    assert exp.stale_after_days == 0 and exp.pinned == ("a",) and exp.record
    for bad, message in [
        ({"sessions": {"keep": 0}}, "skills.experience.sessions.keep: expected int >= 1, got 0"),
        ({"record": "yes"}, 'skills.experience.record: expected boolean, got "yes"'),
        ({"staleAfterDays": -1}, "skills.experience.staleAfterDays: expected int >= 0, got -1"),
        ({"promoteMode": "x"}, "skills.experience.promoteMode: expected one of"),
        ({"retention": 3}, "skills.experience.retention: unknown key"),
    ]:
        with pytest.raises(ConfigError) as err:
            Config.from_mapping({"skills": {"experience": bad}})
        assert message in str(err.value)
        assert err.value.key_path is not None and err.value.key_path.startswith("skills.experience")


def test_stale_uses_the_config(space: Workspace) -> None:
    space.config('{skills: {experience: {staleAfterDays: 1, pinned: ["wordcount"]}}}')
    exp = Experience(space.book())
    assert exp.config.stale_after_days == 1 and exp.stale() == []
