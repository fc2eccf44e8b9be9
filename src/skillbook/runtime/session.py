"""A long-lived agent session's view of its skills, refreshed between turns (spec §7.4).

Input: a :class:`~skillbook.pipeline.book.Loader` (which owns the parse cache) and the
:class:`~skillbook.pipeline.snapshot.SnapshotVersions` that watchers bump. Output: the
:class:`~skillbook.pipeline.book.SkillBook` and :class:`~skillbook.pipeline.snapshot.SkillSnapshot`
a turn should use, and a :class:`ReloadReport` saying what a rebuild changed.

A turn calls :meth:`SkillSession.current` (or :meth:`SkillSession.snapshot`) once, at
its start; nothing is rebuilt behind its back while it runs, because watchers only
bump a counter. A rebuild reuses the loader's cache: folders are listed and files
stat-ed again, but only changed SKILL.md files are read and parsed. With a running
watcher it does less: the paths the watcher reported since the previous build are
handed to the loader as a :class:`~skillbook.pipeline.cache.change_hint.ChangeHint`, and remembered
roots look at only those files. Any doubt that the watcher saw everything (first
build, watcher replaced, re-armed or stopped, its journal overflowed, a config
change, a bump from elsewhere, a symlink among the paths, an unknown event kind)
means a full stat walk instead. After an edit in place the :class:`ReloadReport`
and the snapshot are worked out at the edited positions alone
(:mod:`skillbook.runtime.reload_report`): a refresh then costs little more than the
loader's rebuild.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

from skillbook.config.skill_filter import effective_skill_filter, matches_skill_filter
from skillbook.pipeline.cache.change_hint import ChangeHint
from skillbook.pipeline.cache.skill_memo import SkillMemo
from skillbook.pipeline.snapshot import (
    SkillsChangeEvent,
    SkillSnapshot,
    SnapshotSkill,
    SnapshotVersions,
    build_snapshot,
    should_refresh_snapshot,
)
from skillbook.runtime._watch_parts import IGNORED_SEGMENTS, KINDS
from skillbook.runtime.reload_report import ReloadDiff, ReloadReport
from skillbook.runtime.watch import WATCH_REASON, WatcherRegistry, debounce_ms_of, watch_roots

if TYPE_CHECKING:
    from skillbook.config.file import Config
    from skillbook.pipeline.book import Loader, SkillBook
    from skillbook.runtime.watch import SkillsWatcher

__all__ = ["SkillSession"]


class SkillSession:
    """Holds the current book and snapshot of one workspace and refreshes them per turn.

    ``snapshot`` may be a snapshot persisted by an earlier process: it is reused by
    :meth:`snapshot` while its version and filter are current, as OpenClaw reuses the
    snapshot stored in a session entry. ``watchers`` shares watchers between
    sessions (one per workspace); by default the session owns its own registry.
    """

    def __init__(
        self,
        loader: Loader,
        *,
        versions: SnapshotVersions | None = None,
        watch: bool = True,
        watchers: WatcherRegistry | None = None,
        snapshot: SkillSnapshot | None = None,
    ) -> None:
        self.loader = loader
        self.versions = versions if versions is not None else SnapshotVersions()
        self._watch = watch
        self._own_watchers = watchers is None
        self._watchers = watchers if watchers is not None else WatcherRegistry(self.versions)
        self._lock = threading.RLock()
        self._book: SkillBook | None = None
        self._snapshot = snapshot
        self._config: Config | None = None
        self.last_report: ReloadReport | None = None
        #: (watcher, its journal epoch, version) of the last build the watcher covered.
        self._hint_base: tuple[SkillsWatcher, int, int] | None = None
        #: Version bumps not made by this workspace's watcher: counted, and the count
        #: the last build saw (a counter, so a bump racing a build is never lost).
        self._foreign_bumps = 0
        self._foreign_seen = 0
        #: What a rebuild changed, diffed by position after an edit in place.
        self._differ = ReloadDiff()
        #: The snapshot's per-skill records, made again only for new skill objects.
        self._snapshot_skills = SkillMemo[SnapshotSkill]()
        self._unsubscribe = self.versions.subscribe(self._on_bump)

    # ----------------------------------------------------------------- per turn

    def current(self) -> SkillBook:
        """The book a turn should use: rebuilt first if stale (call at a turn's start)."""
        with self._lock:
            self.refresh()
            if self._book is None:
                self._rebuild()
            assert self._book is not None
            return self._book

    def snapshot(self) -> SkillSnapshot:
        """The snapshot a turn should use; a fresh persisted snapshot is reused as is."""
        with self._lock:
            self.refresh()
            if self._snapshot is None:
                self._rebuild()
            assert self._snapshot is not None
            return self._snapshot

    def refresh(self) -> ReloadReport | None:
        """Rebuild if stale (§7.4) and say what changed; None when nothing was rebuilt."""
        with self._lock:
            self._ensure_watcher()
            if not self.is_stale():
                return None
            return self._rebuild()

    def reload(self) -> ReloadReport:
        """Rebuild now, stale or not (an explicit ``/reload-skills``)."""
        with self._lock:
            self._ensure_watcher()
            return self._rebuild()

    def is_stale(self) -> bool:
        """Stale: no snapshot, a newer version, another skill filter, or a new config object.

        The last one goes beyond OpenClaw: a config swapped on the loader (new extra
        dirs, new entries) takes effect on the next turn instead of the next session.
        """
        with self._lock:
            snap = self._snapshot
            if snap is None:
                return True
            if should_refresh_snapshot(snap.version, self.versions.get(self.loader.workspace)):
                return True
            if not matches_skill_filter(snap.skill_filter, self._wanted_filter()):
                return True
            return self._book is not None and self._config is not self.loader.config

    def start_watching(self) -> None:
        """Watch the skill folders from now on, in this process: for a session made
        with ``watch=False`` before a fork (``skillbook serve --workers``), whose
        watcher thread would not have survived it."""
        with self._lock:
            self._watch = True
            self._ensure_watcher()

    @property
    def watcher(self) -> SkillsWatcher | None:
        ws = self.loader.workspace
        return self._watchers.get(ws) if ws is not None else None

    # ----------------------------------------------------------------- lifecycle

    def close(self) -> None:
        """Stop the watcher if this session owns it."""
        self._unsubscribe()
        if self._own_watchers:
            self._watchers.close_all()

    def __enter__(self) -> SkillSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------- internals

    def _wanted_filter(self) -> list[str] | None:
        loader = self.loader
        # The loader keeps the explicit filter private; agent and config are public and
        # may be changed between turns, which is what a filter change looks like here.
        explicit = loader.skill_filter
        return effective_skill_filter(explicit, config=loader.config, agent_id=loader.agent)

    def _ensure_watcher(self) -> None:
        """``ensureSkillsWatcher`` each turn: follows config changes (roots, debounce, off)."""
        loader = self.loader
        if loader.workspace is None or not self._watch:
            return
        cfg = loader.config
        self._watchers.ensure(
            loader.workspace,
            watch_roots(
                loader.workspace,
                loader.paths,
                cfg,
                cwd=loader.cwd,
                env=loader.env,
                profile=loader.profile,
            ),
            enabled=cfg.skills.load.watch is not False,
            debounce_ms=debounce_ms_of(cfg),
            standalone_md=loader.mode.loads_standalone,
        )

    def _on_bump(self, event: SkillsChangeEvent) -> None:
        ws = self.loader.workspace
        if event.workspace is None or (
            ws is not None and event.workspace == str(ws) and event.reason != WATCH_REASON
        ):
            self._foreign_bumps += 1

    def _armed_watcher(self) -> SkillsWatcher | None:
        watcher = self.watcher if self._watch else None
        if watcher is None or not watcher.running or not watcher.wait_ready(0):
            return None
        return watcher

    def _hint(
        self, watcher: SkillsWatcher | None, epoch: int, version: int, foreign: int
    ) -> ChangeHint | None:
        """What the watcher saw since the last build, when it surely saw everything."""
        base = self._hint_base
        if (
            watcher is None
            or base is None
            or base[0] is not watcher
            or base[1] != epoch
            or foreign != self._foreign_seen
            or self._book is None
            or self._config is not self.loader.config
        ):
            return None
        changes = watcher.journal.since(base[2], version)
        if changes is None or any(kind not in KINDS for _, kind in changes):
            return None
        paths = [path for path, _ in changes]
        # Plain roots hold no links; one appearing (or a path turned into one) is
        # left to the full walk, which reports it.
        if any(os.path.islink(p) for p in paths):
            return None
        return ChangeHint.of(paths, watcher.roots, IGNORED_SEGMENTS)

    def _rebuild(self) -> ReloadReport:
        loader = self.loader
        foreign = self._foreign_bumps
        # Read the version first: a change landing during the build leaves the new
        # snapshot one version behind, so the next turn rebuilds again.
        version = self.versions.get(loader.workspace)
        misses = loader.cache.misses
        config = loader.config
        watcher = self._armed_watcher()
        epoch = watcher.journal.epoch if watcher is not None else -1
        hint = self._hint(watcher, epoch, version, foreign)
        self._foreign_seen = foreign
        book = loader.load(hint=hint)
        # The next build may trust the journal only if the watches stayed armed
        # from before this build began to its end.
        still = watcher is not None and watcher.journal.epoch == epoch and watcher.running
        self._hint_base = (watcher, epoch, version) if still and watcher is not None else None
        report = self._differ.diff(
            self._book,
            self._snapshot,
            book,
            version=version,
            reparsed=loader.cache.misses - misses,
            hinted=tuple(sorted(hint.paths)) if hint is not None else None,
        )
        self._book = book
        self._snapshot = build_snapshot(
            book.eligible,
            book.catalog,
            skill_filter=book.skill_filter,
            version=version,
            profile=book.profile,
            memo=self._snapshot_skills,
        )
        self._snapshot_skills.prune(book.eligible)
        self._config = config
        self.last_report = report
        return report
