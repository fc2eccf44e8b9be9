"""SkillSession: per-turn refresh of a workspace's skills (spec §7.4, §12 "Snapshot / refresh")."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from factories import WAIT_S, notifying, wait_until, write_skill, write_skills

from skillbook.config.file import Config
from skillbook.pipeline.book import Loader
from skillbook.pipeline.snapshot import SkillSnapshot, SnapshotVersions
from skillbook.runtime.reload_report import ReloadReport, StatusChange
from skillbook.runtime.session import SkillSession
from skillbook.runtime.watch import WatcherRegistry


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    write_skills(workspace / "skills", {"alpha": "First", "beta": "Second"})
    return workspace


def make_loader(
    tmp_path: Path, ws: Path, config: dict[str, Any] | None = None, **kw: Any
) -> Loader:
    env = {
        "HOME": str(tmp_path / "home"),
        "SKILLBOOK_BUNDLED_SKILLS_DIR": str(tmp_path / "no-bundled"),
        "PATH": "",
    }
    cfg = Config.from_mapping(config or {})
    return Loader(ws, config=cfg, env=env, cwd=tmp_path, **kw)


@pytest.fixture
def session(tmp_path: Path, ws: Path) -> Iterator[SkillSession]:
    with SkillSession(
        make_loader(tmp_path, ws, {"skills": {"load": {"watchDebounceMs": 50}}})
    ) as s:
        yield s


def names(skills: Any) -> list[str]:
    return [s.name for s in skills]


def test_edit_is_seen_by_the_next_current(session: SkillSession, ws: Path) -> None:
    """A watcher bump makes the next turn's ``current()`` rebuild (hot reload)."""
    book = session.current()
    assert book.get("alpha").description == "First"
    watcher = session.watcher
    assert watcher is not None and watcher.wait_ready(WAIT_S)
    before = session.versions.get(ws)
    bumped = notifying(session.versions.subscribe)
    write_skill(ws / "skills" / "alpha", description="First, edited")
    assert wait_until(lambda: session.versions.get(ws) > before, changed=bumped)
    fresh = session.current()
    assert fresh is not book
    assert fresh.get("alpha").description == "First, edited"
    # The book a running turn holds never changes under it.
    assert book.get("alpha").description == "First"
    assert session.snapshot().version == session.versions.get(ws)


def test_current_reuses_the_book_while_nothing_changed(session: SkillSession) -> None:
    book = session.current()
    assert session.current() is book
    assert session.refresh() is None
    assert not session.is_stale()


def test_edit_without_a_bump_waits_for_the_next_version(tmp_path: Path, ws: Path) -> None:
    """``watch=False``: changes show only after someone bumps the version (or ``reload()``)."""
    versions = SnapshotVersions()
    with SkillSession(make_loader(tmp_path, ws), versions=versions, watch=False) as session:
        book = session.current()
        assert session.watcher is None
        write_skill(ws / "skills" / "gamma")
        assert session.current() is book
        versions.bump(ws, reason="manual")
        assert "gamma" in names(session.current().skills)


def test_filter_change_refreshes(tmp_path: Path, ws: Path) -> None:
    """§12 Snapshot / refresh: refresh on filter change; reuse when version and filter equal."""
    config = {
        "agents": {
            "list": [{"id": "a", "skills": ["alpha"]}, {"id": "b", "skills": ["beta", " beta "]}]
        }
    }
    loader = make_loader(tmp_path, ws, config, agent="a")
    with SkillSession(loader, watch=False) as session:
        book = session.current()
        assert names(book.eligible) == ["alpha"]
        assert session.current() is book
        loader.agent = "b"
        assert session.is_stale()
        assert names(session.current().eligible) == ["beta"]
        assert session.snapshot().skill_filter == ("beta", "beta")
        assert not session.is_stale()


def test_new_config_object_refreshes(tmp_path: Path, ws: Path) -> None:
    """A config swapped on the loader (e.g. new extraDirs) applies on the next turn."""
    extra = tmp_path / "extra"
    write_skill(extra / "from-extra")
    loader = make_loader(tmp_path, ws)
    with SkillSession(loader, watch=False) as session:
        assert "from-extra" not in names(session.current().skills)
        loader.config = Config.from_mapping({"skills": {"load": {"extraDirs": [str(extra)]}}})
        assert "from-extra" in names(session.current().skills)


@pytest.mark.parametrize(
    ("cached", "bumps", "stale"),
    [
        (42, 0, True),  # process restarted: version 0 but a snapshot persisted at 42
        (0, 0, False),  # version and filter equal: reuse
        (None, 0, False),  # no version counts as 0
        (0, 1, True),  # the watcher bumped since
    ],
)
def test_persisted_snapshot_version_rule(
    tmp_path: Path, ws: Path, cached: int | None, bumps: int, stale: bool
) -> None:
    """§12 Snapshot / refresh: refresh when process version is 0 but cached version 42."""
    versions = SnapshotVersions()
    for _ in range(bumps):
        versions.bump(ws)
    persisted = SkillSnapshot(prompt="old prompt", skills=(), version=cached)
    loader = make_loader(tmp_path, ws)
    with SkillSession(loader, versions=versions, watch=False, snapshot=persisted) as session:
        assert session.is_stale() is stale
        snap = session.snapshot()
        if stale:
            assert snap is not persisted
            assert snap.version == versions.get(ws)
            assert "alpha" in snap.prompt
        else:
            assert snap is persisted


def test_persisted_snapshot_with_another_filter_is_stale(tmp_path: Path, ws: Path) -> None:
    persisted = SkillSnapshot(prompt="", skills=(), skill_filter=("alpha",), version=0)
    loader = make_loader(tmp_path, ws)
    with SkillSession(loader, watch=False, snapshot=persisted) as session:
        assert session.is_stale()
        assert session.snapshot().skill_filter is None


def test_reload_report_contents(tmp_path: Path, ws: Path) -> None:
    loader = make_loader(tmp_path, ws)
    with SkillSession(loader, watch=False) as session:
        first = session.reload()
        assert first.added == ("alpha", "beta") and first.removed == ()
        assert first.prompt_changed and first.reparsed == 2

        assert session.reload().empty

        write_skill(ws / "skills" / "gamma", description="Third")
        (ws / "skills" / "beta" / "SKILL.md").unlink()
        (ws / "skills" / "beta").rmdir()
        write_skill(ws / "skills" / "alpha", description="First, reworded")
        report = session.reload()
        assert report.added == ("gamma",)
        assert report.removed == ("beta",)
        assert report.changed == ("alpha",)
        assert report.status_changed == ()
        assert report.prompt_changed
        assert report.reparsed == 2
        assert report.book is session.current()
        assert session.last_report is report

        # A body-only edit is a change the prompt does not show.
        path = ws / "skills" / "gamma" / "SKILL.md"
        path.write_text(path.read_text() + "\nMore body.\n")
        body = session.reload()
        assert body.changed == ("gamma",) and not body.prompt_changed

        loader.config = Config.from_mapping({"skills": {"entries": {"gamma": {"enabled": False}}}})
        status = session.reload()
        assert status.status_changed == (StatusChange("gamma", "ready", "disabled"),)
        assert status.changed == () and status.prompt_changed
        assert status.reparsed == 0


def test_refresh_after_one_edit_among_200_reparses_one_file(tmp_path: Path) -> None:
    """The loader's cache: listing and stat-ing again, but parsing only the changed file."""
    ws = tmp_path / "ws"
    for i in range(200):
        write_skill(ws / "skills" / f"skill-{i:03d}", description=f"Skill number {i}")
    loader = make_loader(tmp_path, ws)
    versions = SnapshotVersions()
    with SkillSession(loader, versions=versions, watch=False) as session:
        assert len(session.current().skills) == 200
        assert loader.cache.misses == 200
        hits, misses = loader.cache.hits, loader.cache.misses
        write_skill(ws / "skills" / "skill-123", description="Skill number 123, edited")
        versions.bump(ws, reason="watch")
        report = session.refresh()
        assert isinstance(report, ReloadReport)
        assert loader.cache.misses - misses == 1
        assert loader.cache.hits - hits == 199
        assert report.reparsed == 1
        assert report.changed == ("skill-123",)
        assert report.added == () and report.removed == ()


def test_watch_false_in_config_starts_no_watcher(tmp_path: Path, ws: Path) -> None:
    loader = make_loader(tmp_path, ws, {"skills": {"load": {"watch": False}}})
    with SkillSession(loader) as session:
        session.current()
        assert session.watcher is None


def test_sessions_share_one_watcher_per_workspace(tmp_path: Path, ws: Path) -> None:
    versions = SnapshotVersions()
    with WatcherRegistry(versions) as registry:
        one = SkillSession(make_loader(tmp_path, ws), versions=versions, watchers=registry)
        two = SkillSession(make_loader(tmp_path, ws), versions=versions, watchers=registry)
        one.current()
        two.current()
        assert one.watcher is not None and one.watcher is two.watcher
        assert len(registry) == 1
        one.close()  # does not own the registry: the shared watcher keeps running
        assert two.watcher is not None and two.watcher.running
    assert len(registry) == 0


def test_close_stops_the_watcher(session: SkillSession) -> None:
    session.current()
    watcher = session.watcher
    assert watcher is not None and watcher.running
    session.close()
    assert not watcher.running
