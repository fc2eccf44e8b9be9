"""The skills watcher: real files, a real OS watcher (spec §7.3, §12 "Snapshot / refresh").

Tests wait on the events themselves (a condition the recorder notifies, bounded by 10 s),
never for a fixed time. "Nothing happened" is checked with a sentinel: a change made after
the one that must not bump, whose bump proves the watcher has reported everything before it.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from factories import WAIT_S, wait_until, write_skill

from skillbook.config.file import Config
from skillbook.config.paths import Paths
from skillbook.pipeline.snapshot import SkillsChangeEvent, SnapshotVersions
from skillbook.runtime._watch_parts import IGNORED_SEGMENTS, is_ignored
from skillbook.runtime.watch import (
    DEFAULT_DEBOUNCE_MS,
    ChangeSet,
    SkillsWatcher,
    WatcherRegistry,
    debounce_ms_of,
    watch_roots,
    watch_targets,
)

FAST_DEBOUNCE_MS = 100


class Recorder:
    """A SnapshotVersions and every bump event and ChangeSet it saw.

    Each event and change notifies :attr:`changed`, so a test waits on the events
    themselves (:meth:`wait`), never for a fixed time.
    """

    def __init__(self) -> None:
        self.versions = SnapshotVersions()
        self.events: list[SkillsChangeEvent] = []
        self.changes: list[ChangeSet] = []
        self.changed = threading.Condition()
        self.versions.subscribe(self._on_event)

    def _on_event(self, event: SkillsChangeEvent) -> None:
        with self.changed:
            self.events.append(event)
            self.changed.notify_all()

    def on_change(self, change: ChangeSet) -> None:
        with self.changed:
            self.changes.append(change)
            self.changed.notify_all()

    def paths(self) -> list[str]:
        with self.changed:
            return [p for c in self.changes for p in c.paths]

    def wait(self, predicate: Callable[[], bool]) -> bool:
        """Whether ``predicate`` held within :data:`WAIT_S`, checked on every event."""
        return wait_until(predicate, WAIT_S, changed=self.changed)

    def wait_for_path(self, folder: Path) -> None:
        """Wait for a change at or below ``folder`` (the sentinel that ends a quiet check)."""
        below = str(folder)
        assert self.wait(lambda: any(p.startswith(below) for p in self.paths())), self.paths()

    def wait_for_bump_below(self, folder: Path) -> None:
        """Wait for a bump whose ``changed_path`` is at or below ``folder``."""
        below = str(folder)

        def seen() -> bool:
            return any((e.changed_path or "").startswith(below) for e in self.events)

        assert self.wait(seen), f"no bump below {folder}; saw {self.events}"

    def wait_for_bump(self, path: Path) -> SkillsChangeEvent:
        """The first bump whose ``changed_path`` is ``path``."""
        found: list[SkillsChangeEvent] = []

        def seen() -> bool:
            found[:] = [e for e in self.events if e.changed_path == str(path)]
            return bool(found)

        assert self.wait(seen), f"no bump for {path}; saw {self.events}"
        return found[0]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / "skills").mkdir(parents=True)
    return workspace


@pytest.fixture
def rec() -> Recorder:
    return Recorder()


@pytest.fixture
def watcher(ws: Path, rec: Recorder) -> Iterator[SkillsWatcher]:
    w = SkillsWatcher(
        [ws / "skills", ws / ".agents" / "skills"],
        versions=rec.versions,
        workspace=ws,
        debounce_ms=FAST_DEBOUNCE_MS,
        on_change=rec.on_change,
    )
    with w:
        assert w.wait_ready(WAIT_S)
        yield w


def assert_watch_bump(rec: Recorder, ws: Path, path: Path) -> None:
    event = rec.wait_for_bump(path)
    assert event.reason == "watch"
    assert event.workspace == str(ws)
    assert rec.versions.get(ws) > 0


# --------------------------------------------------------------------------- changes


def test_creating_a_skill_bumps_the_version(
    ws: Path, rec: Recorder, watcher: SkillsWatcher
) -> None:
    path = write_skill(ws / "skills" / "alpha") / "SKILL.md"
    assert rec.wait(lambda: bool(rec.events))
    # mkdir + write in one go: the folder event may be the only one the OS reports.
    assert rec.wait(lambda: str(ws / "skills" / "alpha") in rec.paths() or str(path) in rec.paths())
    event = rec.events[0]
    assert event.reason == "watch"
    assert event.workspace == str(ws)
    assert event.changed_path in (str(path), str(ws / "skills" / "alpha"))
    # The OS reports the new folder or file as added, and the write that follows as a
    # modification; which of them lands last in the debounce window varies.
    kinds = {k for c in rec.changes for k in c.kinds}
    assert kinds and kinds <= {"added", "modified"}


def test_editing_skill_md_bumps_with_the_changed_path(
    ws: Path, rec: Recorder, watcher: SkillsWatcher
) -> None:
    path = write_skill(ws / "skills" / "alpha") / "SKILL.md"
    assert rec.wait(lambda: bool(rec.events))
    before = rec.versions.get(ws)
    count = len(rec.events)
    path.write_text(path.read_text() + "more\n")
    assert rec.wait(lambda: len(rec.events) > count)
    assert rec.events[-1].changed_path == str(path)
    assert rec.events[-1].reason == "watch"
    assert rec.versions.get(ws) > before
    assert rec.changes[-1].kinds == ("modified",)


def test_deleting_a_skill_bumps(ws: Path, rec: Recorder, tmp_path: Path) -> None:
    write_skill(ws / "skills" / "alpha")
    with SkillsWatcher(
        [ws / "skills"], versions=rec.versions, workspace=ws, on_change=rec.on_change
    ) as w:
        assert w.wait_ready(WAIT_S)
        shutil.rmtree(ws / "skills" / "alpha")
        assert rec.wait(lambda: bool(rec.events))
    assert rec.events[0].reason == "watch"
    assert rec.events[0].changed_path in (
        str(ws / "skills" / "alpha" / "SKILL.md"),
        str(ws / "skills" / "alpha"),
    )
    assert set(rec.changes[0].kinds) == {"deleted"}


def test_symlinked_skill_folder_bumps_and_its_edits_too(
    ws: Path, rec: Recorder, watcher: SkillsWatcher, tmp_path: Path
) -> None:
    target = write_skill(tmp_path / "elsewhere" / "linked") / "SKILL.md"
    link = ws / "skills" / "linked"
    link.symlink_to(target.parent, target_is_directory=True)
    assert_watch_bump(rec, ws, link)
    # The link's real folder is watched too; events come back under the link's path.
    count = len(rec.events)
    target.write_text(target.read_text() + "edited\n")
    assert rec.wait(lambda: len(rec.events) > count)
    assert rec.events[-1].changed_path == str(link / "SKILL.md")


def test_root_created_after_start_up_is_picked_up(tmp_path: Path, rec: Recorder) -> None:
    """``<ws>/skills`` missing at start-up, then moved in whole (as a checkout does)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    staging = tmp_path / "staging"
    write_skill(staging / "late")
    with SkillsWatcher(
        [ws / "skills", ws / ".agents" / "skills"],
        versions=rec.versions,
        workspace=ws,
        debounce_ms=FAST_DEBOUNCE_MS,
        on_change=rec.on_change,
        rearm_interval_ms=200,
    ) as w:
        assert w.wait_ready(WAIT_S)
        staging.rename(ws / "skills")
        moved = ws / "skills" / "late" / "SKILL.md"
        assert_watch_bump(rec, ws, moved)
        assert rec.changes[-1].kinds == ("added", "added")
        # Once re-armed, edits inside the new root are watched like any other.
        assert w.wait_ready(WAIT_S)
        count = len(rec.events)
        moved.write_text(moved.read_text() + "edited\n")
        assert rec.wait(lambda: len(rec.events) > count)
        assert rec.events[-1].changed_path == str(moved)


def test_root_removed_and_recreated_keeps_watching(tmp_path: Path, rec: Recorder) -> None:
    """Also when the root is a symlink, whose removal the OS watcher does not report."""
    ws = tmp_path / "ws"
    ws.mkdir()
    real = tmp_path / "real-skills"
    real.mkdir()
    root = ws / "skills"
    root.symlink_to(real, target_is_directory=True)
    with SkillsWatcher(
        [root],
        versions=rec.versions,
        workspace=ws,
        debounce_ms=FAST_DEBOUNCE_MS,
        on_change=rec.on_change,
        rearm_interval_ms=200,
    ) as w:
        assert w.wait_ready(WAIT_S)
        root.unlink()
        assert_watch_bump(rec, ws, root)
        assert rec.changes[-1].kinds == ("deleted",)
        count = len(rec.events)
        root.mkdir()
        assert rec.wait(lambda: len(rec.events) > count)
        assert rec.changes[-1].kinds == ("added",)
        assert w.wait_ready(WAIT_S)
        path = write_skill(root / "again") / "SKILL.md"
        assert rec.wait(lambda: any(p.startswith(str(path.parent)) for p in rec.paths()))


def test_nested_missing_root_created_later(tmp_path: Path, rec: Recorder) -> None:
    """``<ws>/.agents/skills`` where even ``.agents`` is missing at start-up."""
    ws = tmp_path / "ws"
    ws.mkdir()
    root = ws / ".agents" / "skills"
    with SkillsWatcher(
        [root], versions=rec.versions, workspace=ws, on_change=rec.on_change, rearm_interval_ms=200
    ) as w:
        assert w.wait_ready(WAIT_S)
        (ws / ".agents").mkdir()
        path = write_skill(root / "deep") / "SKILL.md"
        assert rec.wait(lambda: bool(rec.events))
        assert rec.events[0].reason == "watch"
        assert rec.events[0].changed_path in (str(path), str(path.parent), str(root))
        assert str(root) in rec.paths()


def test_ignored_folders_do_not_bump(ws: Path, rec: Recorder) -> None:
    write_skill(ws / "skills" / "alpha")
    with SkillsWatcher(
        [ws / "skills"],
        versions=rec.versions,
        workspace=ws,
        debounce_ms=FAST_DEBOUNCE_MS,
        on_change=rec.on_change,
    ) as w:
        assert w.wait_ready(WAIT_S)
        write_skill(ws / "skills" / "node_modules" / "x")
        write_skill(ws / "skills" / ".git" / "y")
        write_skill(ws / "skills" / "alpha" / "node_modules" / "z")
        write_skill(ws / "skills" / "alpha" / ".venv" / "lib" / "w")
        (ws / "skills" / "notes.txt").write_text("not a skill")
        # A real skill written after them bumps; the OS reports changes in order, so an
        # ignored write that bumped would show up before or beside it.
        beta = write_skill(ws / "skills" / "beta")
        rec.wait_for_path(beta)
    assert rec.paths()
    assert all(p.startswith(str(beta)) for p in rec.paths())
    assert all((e.changed_path or "").startswith(str(beta)) for e in rec.events)


def test_other_files_inside_a_skill_do_not_bump(
    ws: Path, rec: Recorder, watcher: SkillsWatcher
) -> None:
    alpha = write_skill(ws / "skills" / "alpha")
    assert rec.wait(lambda: bool(rec.events))
    (alpha / "scripts").mkdir()
    (alpha / "scripts" / "run.sh").write_text("echo hi\n")
    (alpha / "README.txt").write_text("notes\n")
    # The sentinel: a change written after them, which the watcher reports in order.
    rec.wait_for_path(write_skill(ws / "skills" / "beta"))
    others = (str(alpha / "scripts"), str(alpha / "README.txt"))
    assert not [p for p in rec.paths() if p.startswith(others)]
    assert not [e for e in rec.events if (e.changed_path or "").startswith(others)]


def test_debounce_coalesces_a_burst_of_20_writes(ws: Path, rec: Recorder) -> None:
    path = write_skill(ws / "skills" / "alpha") / "SKILL.md"
    with SkillsWatcher(
        [ws / "skills"], versions=rec.versions, workspace=ws, on_change=rec.on_change
    ) as w:
        assert w.debounce_ms == DEFAULT_DEBOUNCE_MS
        assert w.wait_ready(WAIT_S)
        for i in range(20):
            write_skill(path.parent, "alpha", f"burst {i}", body="")
        assert rec.wait(lambda: bool(rec.events))
        # A later change in another skill bumps on its own: the burst was one bump.
        rec.wait_for_path(write_skill(ws / "skills" / "beta"))
    assert len(rec.events) == 2
    assert rec.events[0].changed_path == str(path)
    assert rec.changes[0].paths == (str(path),)


def test_polling_backend_works(ws: Path, rec: Recorder) -> None:
    """``force_polling=True``: the documented fallback when no OS watcher is available."""
    with SkillsWatcher(
        [ws / "skills"],
        versions=rec.versions,
        workspace=ws,
        debounce_ms=FAST_DEBOUNCE_MS,
        on_change=rec.on_change,
        force_polling=True,
    ) as w:
        assert w.wait_ready(WAIT_S)
        path = write_skill(ws / "skills" / "polled") / "SKILL.md"
        assert rec.wait(lambda: any(p.startswith(str(path.parent)) for p in rec.paths()))
    assert rec.events[0].reason == "watch"


def test_failing_callback_is_logged_and_watching_goes_on(
    ws: Path, rec: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    def boom(change: ChangeSet) -> None:
        raise RuntimeError("boom")

    with (
        caplog.at_level(logging.WARNING, logger="skillbook.watch"),
        SkillsWatcher(
            [ws / "skills"], versions=rec.versions, workspace=ws, debounce_ms=0, on_change=boom
        ) as w,
    ):
        assert w.wait_ready(WAIT_S)
        for name in ("one", "two"):
            rec.wait_for_bump_below(write_skill(ws / "skills" / name))
    assert "skills change callback failed: boom" in caplog.text


def test_stop_ends_watching(ws: Path, rec: Recorder) -> None:
    w = SkillsWatcher([ws / "skills"], versions=rec.versions, workspace=ws, debounce_ms=0)
    w.start()
    assert w.wait_ready(WAIT_S)
    w.stop()
    assert not w.running
    # A second, running watcher of the same root is the sentinel: once it has seen the
    # change, the OS has reported it, and the stopped watcher must not have.
    live = Recorder()
    with SkillsWatcher(
        [ws / "skills"],
        versions=live.versions,
        workspace=ws,
        debounce_ms=0,
        on_change=live.on_change,
    ) as sentinel:
        assert sentinel.wait_ready(WAIT_S)
        live.wait_for_path(write_skill(ws / "skills" / "after"))
    assert rec.events == []
    w.stop()  # idempotent


# --------------------------------------------------------------------------- pure parts


@pytest.mark.parametrize("name", IGNORED_SEGMENTS)
@pytest.mark.parametrize(
    "template",
    [
        "/ws/skills/{n}/x/SKILL.md",
        "/ws/skills/{n}",
        "{n}/SKILL.md",
        "C:\\ws\\skills\\{n}\\SKILL.md",
    ],
)
def test_ignore_regexes_match_ignored_segments(name: str, template: str) -> None:
    """§12 Snapshot / refresh: ignore regexes match node_modules, dist, .git, .venv, venv,
    __pycache__, .mypy_cache, .pytest_cache, build, .cache."""
    assert is_ignored(template.format(n=name))


@pytest.mark.parametrize(
    "path",
    [
        "/ws/skills/alpha/SKILL.md",
        "/ws/.agents/skills/beta/SKILL.md",
        "/tmp/.hidden/skills/SKILL.md",
        "/ws/skills/builder/SKILL.md",
        "/ws/skills/my-dist-tool/SKILL.md",
        "/ws/skills/.github/SKILL.md",
        "/ws/skills/venvs/SKILL.md",
    ],
)
def test_ignore_regexes_leave_ordinary_paths(path: str) -> None:
    """§12 Snapshot / refresh: ... and not ordinary skill paths or ``/tmp/.hidden/…``."""
    assert not is_ignored(path)


def _paths(tmp_path: Path) -> Paths:
    return Paths.from_env({"HOME": str(tmp_path / "home")}, cwd=tmp_path)


def test_watch_targets_include_workspace_agents_and_personal_variants(tmp_path: Path) -> None:
    """§12 Snapshot / refresh: watcher targets include ``<ws>/skills/SKILL.md``,
    ``<ws>/skills/*/SKILL.md``, ``.agents`` variants, ``~/.agents/skills`` variants; all
    targets contain ``SKILL.md``."""
    ws = tmp_path / "ws"
    paths = _paths(tmp_path)
    targets = watch_targets(watch_roots(ws, paths, Config.empty()))
    home = tmp_path / "home"
    for expected in (
        f"{ws}/skills/SKILL.md",
        f"{ws}/skills/*/SKILL.md",
        f"{ws}/.agents/skills/SKILL.md",
        f"{ws}/.agents/skills/*/SKILL.md",
        f"{home}/.agents/skills/SKILL.md",
        f"{home}/.agents/skills/*/SKILL.md",
        f"{paths.managed_dir}/SKILL.md",
    ):
        assert expected in targets
    assert all("SKILL.md" in t for t in targets)
    assert targets == sorted(targets)
    # The bundled dir is not watched.
    assert paths.bundled_dir is None or not any(str(paths.bundled_dir) in t for t in targets)


def test_watch_targets_normalise_dedupe_and_sort() -> None:
    targets = watch_targets(["/b/skills/", "C:\\a\\skills", "/b/skills", "/B//"])
    assert targets == [
        "/B/*/SKILL.md",
        "/B/SKILL.md",
        "/b/skills/*/SKILL.md",
        "/b/skills/SKILL.md",
        "C:/a/skills/*/SKILL.md",
        "C:/a/skills/SKILL.md",
    ]


def test_watch_roots_add_extra_dirs(tmp_path: Path) -> None:
    cfg = Config.from_mapping({"skills": {"load": {"extraDirs": ["~/more", "  ", "rel"]}}})
    roots = watch_roots(tmp_path / "ws", _paths(tmp_path), cfg, cwd=tmp_path)
    assert tmp_path / "home" / "more" in roots
    assert tmp_path / "rel" in roots
    assert roots[:2] == [tmp_path / "ws" / "skills", tmp_path / "ws" / ".agents" / "skills"]


def test_from_config_honours_watch_false_blank_workspace_and_debounce(tmp_path: Path) -> None:
    versions = SnapshotVersions()
    paths = _paths(tmp_path)
    off = Config.from_mapping({"skills": {"load": {"watch": False}}})
    assert SkillsWatcher.from_config(tmp_path, off, paths, versions=versions) is None
    assert SkillsWatcher.from_config("  ", Config.empty(), paths, versions=versions) is None
    assert SkillsWatcher.from_config(None, Config.empty(), paths, versions=versions) is None
    slow = Config.from_mapping({"skills": {"load": {"watchDebounceMs": 900}}})
    w = SkillsWatcher.from_config(tmp_path, slow, paths, versions=versions)
    assert w is not None and w.debounce_ms == 900 and not w.running
    assert debounce_ms_of(Config.empty()) == DEFAULT_DEBOUNCE_MS
    assert debounce_ms_of(Config.from_mapping({"skills": {"load": {"watchDebounceMs": 0}}})) == 0


def _ensure(
    registry: WatcherRegistry, workspace: str | Path, config: Config, paths: Paths
) -> SkillsWatcher | None:
    """What a session does each turn (``ensureSkillsWatcher({workspaceDir, config})``)."""
    return registry.ensure(
        workspace,
        watch_roots(workspace, paths, config),
        enabled=config.skills.load.watch is not False,
        debounce_ms=debounce_ms_of(config),
        standalone_md=False,
    )


def test_registry_reuses_replaces_and_closes(tmp_path: Path) -> None:
    """One watcher per workspace, reused while targets and debounce are unchanged."""
    versions = SnapshotVersions()
    paths = _paths(tmp_path)
    ws = tmp_path / "ws"
    with WatcherRegistry(versions) as registry:
        first = _ensure(registry, ws, Config.empty(), paths)
        assert first is not None and first.running
        assert _ensure(registry, str(ws) + "  ", Config.empty(), paths) is first
        assert registry.get(ws) is first and len(registry) == 1
        slower = Config.from_mapping({"skills": {"load": {"watchDebounceMs": 500}}})
        second = _ensure(registry, ws, slower, paths)
        assert second is not None and second is not first
        assert not first.running and second.running
        more = Config.from_mapping(
            {"skills": {"load": {"watchDebounceMs": 500, "extraDirs": ["/x"]}}}
        )
        third = _ensure(registry, ws, more, paths)
        assert third is not second and not second.running
        off = Config.from_mapping({"skills": {"load": {"watch": False}}})
        assert _ensure(registry, ws, off, paths) is None
        assert not third.running and len(registry) == 0
        other = _ensure(registry, tmp_path / "other", Config.empty(), paths)
        assert other is not None
    assert not other.running and len(registry) == 0


def test_watcher_with_no_existing_root_waits_and_stops(tmp_path: Path) -> None:
    w = SkillsWatcher([tmp_path / "nope"], versions=SnapshotVersions(), workspace=tmp_path)
    with w:
        assert w.wait_ready(WAIT_S)
    assert not w.running
    assert os.path.exists(tmp_path)


def test_debouncer_keeps_each_path_once_with_merged_kinds() -> None:
    from skillbook.runtime._watch_parts import Debouncer

    batches: list[list[tuple[str, str]]] = []
    fired = threading.Event()

    def fire(batch: list[tuple[str, str]]) -> None:
        batches.append(batch)
        fired.set()

    debouncer = Debouncer(0.2, fire)
    try:
        debouncer.add([("a", "added")])
        debouncer.add([("a", "modified"), ("b", "deleted")])
        debouncer.add([("b", "added"), ("c", "modified")])
        debouncer.add([("a", "modified")])
        assert fired.wait(WAIT_S)
        # A later path comes in a batch of its own: nothing of the first was held back.
        fired.clear()
        debouncer.add([("z", "added")])
        assert fired.wait(WAIT_S)
    finally:
        debouncer.close()
    # Created then written is still "added"; deleted then created is "modified".
    assert batches == [[("b", "modified"), ("c", "modified"), ("a", "added")], [("z", "added")]]


def test_watch_roots_follow_the_compat_profile_like_discovery(tmp_path: Path) -> None:
    """2026.9 reads ``~/.agents/skills`` only with the default state dir; the watcher
    watches exactly the roots the loader reads, under either profile."""
    from skillbook.config.profile import profile_of
    from skillbook.pipeline.discovery.discover import resolve_roots

    env = {"HOME": str(tmp_path / "home"), "OPENCLAW_STATE_DIR": str(tmp_path / "state")}
    paths = Paths.from_env(env, cwd=tmp_path)
    personal = tmp_path / "home" / ".agents" / "skills"
    ws = tmp_path / "ws"
    for compat in ("openclaw-2026.4", "openclaw-2026.9"):
        cfg = Config.from_mapping({"skills": {"compat": compat}})
        watched = watch_roots(ws, paths, cfg, cwd=tmp_path, env=env)
        read = {r.path for r in resolve_roots(ws, paths, cwd=tmp_path, profile=profile_of(compat))}
        assert (personal in watched) == (personal in read), compat
    assert personal not in watch_roots(
        ws,
        paths,
        Config.from_mapping({"skills": {"compat": "openclaw-2026.9"}}),
        cwd=tmp_path,
        env=env,
    )
    assert personal in watch_roots(ws, paths, Config.empty(), cwd=tmp_path, env=env)
