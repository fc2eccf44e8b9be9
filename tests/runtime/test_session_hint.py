"""SkillSession hands the watcher's changed paths to the loader, and walks in full on any doubt."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest
from factories import WAIT_S, notifying, wait_until, write_skill, write_skills

from skillbook.config.file import Config
from skillbook.pipeline.book import Loader
from skillbook.runtime import reload_report
from skillbook.runtime._watch_journal import ChangeJournal
from skillbook.runtime.reload_report import ReloadReport
from skillbook.runtime.session import SkillSession
from skillbook.runtime.watch import SkillsWatcher

CONFIG = {"skills": {"load": {"watchDebounceMs": 50}}}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    write_skills(workspace / "skills", {"alpha": "First", "beta": "Second"})
    return workspace


@pytest.fixture
def session(tmp_path: Path, ws: Path) -> Iterator[SkillSession]:
    env = {
        "HOME": str(tmp_path / "home"),
        "SKILLBOOK_BUNDLED_SKILLS_DIR": str(tmp_path / "no-bundled"),
        "PATH": "",
    }
    loader = Loader(ws, config=Config.from_mapping(CONFIG), env=env, cwd=tmp_path, cache=False)
    with SkillSession(loader) as s:
        s.current()
        watcher = s.watcher
        assert watcher is not None and watcher.wait_ready(WAIT_S)
        # The first build ran before the watches were armed: it cannot be a base.
        assert s.last_report is not None and s.last_report.hinted is None
        assert s.reload().hinted is None
        yield s


def watcher_of(session: SkillSession) -> SkillsWatcher:
    watcher = session.watcher
    assert watcher is not None
    return watcher


def edit_and_refresh(session: SkillSession, ws: Path, name: str, text: str) -> ReloadReport:
    before = session.versions.get(ws)
    bumped = notifying(session.versions.subscribe)
    write_skill(ws / "skills" / name, description=text)
    assert wait_until(lambda: session.versions.get(ws) > before, changed=bumped)
    report = session.refresh()
    assert report is not None
    assert session.current().get(name).description == text
    return report


def test_watched_edit_rebuilds_from_the_reported_paths(session: SkillSession, ws: Path) -> None:
    report = edit_and_refresh(session, ws, "alpha", "First, edited")
    assert report.hinted is not None
    assert str(ws / "skills" / "alpha" / "SKILL.md") in report.hinted
    assert report.changed == ("alpha",) and report.reparsed == 1
    # And again: each build is the base of the next.
    again = edit_and_refresh(session, ws, "beta", "Second, edited")
    assert again.hinted is not None and str(ws / "skills" / "beta" / "SKILL.md") in again.hinted


def test_watched_edit_is_reported_from_the_edited_position(
    session: SkillSession, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report and snapshot of a hinted refresh come from the edited position alone."""

    def compared_in_full(*args: object) -> NoReturn:
        raise AssertionError("every skill compared by name after an edit in place")

    monkeypatch.setattr(reload_report, "_by_name", compared_in_full)
    monkeypatch.setattr(reload_report, "_statuses_by_name", compared_in_full)
    report = edit_and_refresh(session, ws, "beta", "Second, edited")
    assert report.hinted is not None
    assert (report.added, report.removed, report.changed) == ((), (), ("beta",))
    assert report.status_changed == () and report.prompt_changed
    assert session.snapshot() == report.book.snapshot(version=report.version)


def test_added_folder_is_seen_through_the_hint(session: SkillSession, ws: Path) -> None:
    report = edit_and_refresh(session, ws, "gamma", "Third")
    assert report.hinted is not None and report.added == ("gamma",)


def test_bump_from_elsewhere_means_a_full_walk(session: SkillSession, ws: Path) -> None:
    write_skill(ws / "skills" / "beta", description="Second, unwatched")
    session.versions.bump(ws, reason="manual")
    report = session.refresh()
    assert report is not None and report.hinted is None
    assert session.current().get("beta").description == "Second, unwatched"


def test_config_change_means_a_full_walk(session: SkillSession, ws: Path) -> None:
    session.loader.config = Config.from_mapping(CONFIG)
    report = session.refresh()
    assert report is not None and report.hinted is None


def test_rearmed_watcher_means_a_full_walk(session: SkillSession, ws: Path) -> None:
    watcher_of(session).journal.rearmed()  # as after a restart of the OS watches
    assert edit_and_refresh(session, ws, "alpha", "First, again").hinted is None


def test_unknown_event_kind_means_a_full_walk(session: SkillSession, ws: Path) -> None:
    watcher = watcher_of(session)
    with watcher.journal.lock:
        version = session.versions.bump(ws, reason="watch")
        watcher.journal.record(version, ((str(ws / "skills" / "alpha"), "renamed"),))
    report = session.refresh()
    assert report is not None and report.hinted is None


def test_symlink_among_the_paths_means_a_full_walk(
    session: SkillSession, ws: Path, tmp_path: Path
) -> None:
    watcher = watcher_of(session)
    link = ws / "skills" / "linked"
    link.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with watcher.journal.lock:
        version = session.versions.bump(ws, reason="watch")
        watcher.journal.record(version, ((str(link), "added"),))
    report = session.refresh()
    assert report is not None and report.hinted is None


def test_journal_overflow_and_ranges() -> None:
    journal = ChangeJournal(limit=2)
    journal.record(1, (("/a", "added"),))
    journal.record(2, (("/b", "modified"),))
    assert journal.since(0, 2) == [("/a", "added"), ("/b", "modified")]
    assert journal.since(1, 1) == []
    journal.record(3, (("/c", "deleted"),))  # over the limit: version 1 is dropped
    assert journal.since(0, 3) is None
    assert journal.since(1, 3) == [("/b", "modified"), ("/c", "deleted")]
