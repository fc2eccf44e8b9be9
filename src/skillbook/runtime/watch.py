"""Hot reload: watch the skill folders and bump the snapshot version on change (spec §7.3).

Input: the roots to watch (:func:`watch_roots` gives OpenClaw's: ``<ws>/skills``,
``<ws>/.agents/skills``, the managed dir, ``~/.agents/skills`` and the extra dirs; the
bundled dir is not watched) and a :class:`~skillbook.pipeline.snapshot.SnapshotVersions`.
Output: after a quiet period (250 ms by default) following changes to ``SKILL.md``
files or skill folders, one ``versions.bump(workspace, reason="watch",
changed_path=<last path>)`` and one ``on_change(ChangeSet)`` call. Sessions compare
versions at the start of a turn; nothing here rebuilds anything.

Watching uses the OS notifier through :mod:`watchfiles` on a background thread;
``force_polling=True`` (or ``WATCHFILES_FORCE_POLLING``) selects its polling backend,
which is also the automatic fallback when the OS watcher cannot be started.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillbook.base.js import js_sorted
from skillbook.config.mode import DEFAULT_MODE
from skillbook.model import Source
from skillbook.runtime._watch_journal import ChangeJournal
from skillbook.runtime._watch_parts import (
    ADDED,
    DEFAULT_STOP_TIMEOUT_S,
    DELETED,
    KINDS,
    MODIFIED,
    SKILL_FILE,
    ArmSignal,
    Change,
    Debouncer,
    Plan,
    existing,
    make_plan,
    matters,
    skill_files,
)

if TYPE_CHECKING:
    from skillbook.config.file import Config
    from skillbook.config.paths import Paths
    from skillbook.config.profile import Profile
    from skillbook.pipeline.snapshot import SnapshotVersions

__all__ = [
    "DEFAULT_DEBOUNCE_MS",
    "ChangeSet",
    "SkillsWatcher",
    "WatcherRegistry",
    "debounce_ms_of",
    "watch_roots",
    "watch_targets",
]

_log = logging.getLogger("skillbook.watch")

DEFAULT_DEBOUNCE_MS = 250
#: How often an idle watch thread checks whether a missing root appeared (or one vanished).
DEFAULT_REARM_INTERVAL_MS = 1000
#: watchfiles waits this long without new events before handing over a batch.
DEFAULT_STEP_MS = 50
WATCH_REASON = "watch"


def _glob_root(root: str | os.PathLike[str]) -> str:
    return re.sub(r"/+$", "", os.fspath(root).replace("\\", "/"))


def watch_targets(roots: Iterable[str | os.PathLike[str]]) -> list[str]:
    """OpenClaw's chokidar targets: ``<root>/SKILL.md`` and ``<root>/*/SKILL.md``, JS-sorted."""
    targets: dict[str, None] = {}
    for root in roots:
        base = _glob_root(root)
        targets[f"{base}/{SKILL_FILE}"] = None
        targets[f"{base}/*/{SKILL_FILE}"] = None
    return js_sorted(targets)


def watch_roots(
    workspace: str | os.PathLike[str] | None,
    paths: Paths,
    config: Config,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    profile: Profile | None = None,
) -> list[Path]:
    """The folders to watch: every discovery root except the bundled one, and the skill
    folders of the enabled plugins (§7.3). ``env`` (default ``os.environ``) names the
    bundled-plugins folder; ``profile`` (default: the config's ``skills.compat``) decides
    the roots exactly as discovery does, so a watcher never misses or adds a root the
    loader reads (2026.9 leaves ``~/.agents/skills`` out under a non-default state dir)."""
    from skillbook.config.profile import profile_of
    from skillbook.pipeline.discovery.discover import resolve_roots
    from skillbook.pipeline.discovery.learned import is_learned_root
    from skillbook.pipeline.discovery.plugins import load_registry, plugin_skill_dirs

    text = os.fspath(workspace).strip() if workspace is not None else ""
    ws = Path(text) if text else None
    base = cwd if cwd is not None else Path.cwd()
    roots = resolve_roots(
        ws,
        paths,
        extra_dirs=config.skills.load.extra_dirs,
        cwd=base,
        profile=profile if profile is not None else profile_of(config.skills.compat),
    )
    # resolve_roots lists sources in load order; OpenClaw lists workspace roots first.
    learned = [r.path for r in roots if r.source == Source.WORKSPACE and is_learned_root(r.path)]
    out = [r.path for r in reversed(roots) if r.source != Source.BUNDLED and r.path not in learned]
    if ws is not None:
        environ = os.environ if env is None else env
        registry = load_registry(ws, paths, config, env=environ, cwd=base)
        out += [Path(d) for d in plugin_skill_dirs(registry, config)[0]]
        # Learned skills (skillbook.pipeline.discovery.learned) are a root of their own, so their standalone
        # .md files are seen too; after OpenClaw's roots.
        out += learned
    return out


def debounce_ms_of(config: Config) -> int:
    """``skills.load.watchDebounceMs`` clamped at 0, else :data:`DEFAULT_DEBOUNCE_MS`."""
    raw = config.skills.load.watch_debounce_ms
    return DEFAULT_DEBOUNCE_MS if raw is None else max(0, int(raw))


@dataclass(frozen=True, slots=True)
class ChangeSet:
    """The changes coalesced into one bump: paths in order of their last event."""

    paths: tuple[str, ...]
    #: ``added``, ``modified`` or ``deleted``, one per path.
    kinds: tuple[str, ...]
    workspace: str | None = None
    #: The version the bump produced.
    version: int | None = None

    @property
    def last(self) -> str | None:
        return self.paths[-1] if self.paths else None


class SkillsWatcher:
    """Watches skill roots for one workspace; see the module docstring."""

    def __init__(
        self,
        roots: Sequence[Path],
        *,
        versions: SnapshotVersions,
        workspace: Path | None,
        debounce_ms: int = DEFAULT_DEBOUNCE_MS,
        on_change: Callable[[ChangeSet], None] | None = None,
        force_polling: bool | None = None,
        standalone_md: bool = False,
        rearm_interval_ms: int = DEFAULT_REARM_INTERVAL_MS,
    ) -> None:
        seen: dict[str, None] = {}
        for root in roots:
            seen[os.path.abspath(os.fspath(root))] = None
        self.roots: tuple[str, ...] = tuple(seen)
        self.versions = versions
        self.workspace = workspace
        self.debounce_ms = max(0, debounce_ms)
        self.on_change = on_change
        self.force_polling = force_polling
        #: Also treat ``<root>/*.md`` as skills (the mixed and legacy modes load them).
        self.standalone_md = standalone_md
        self.paths_key = "|".join(watch_targets(self.roots))
        self._rearm_ms = max(1, rearm_interval_ms)
        self._stop = threading.Event()
        self._armed = threading.Event()
        self._thread: threading.Thread | None = None
        self._debouncer: Debouncer | None = None
        #: Every batch fired, by version: what a session's hinted rebuild looks at.
        self.journal = ChangeJournal()

    @classmethod
    def from_config(
        cls,
        workspace: str | os.PathLike[str] | None,
        config: Config,
        paths: Paths,
        *,
        versions: SnapshotVersions,
        cwd: Path | None = None,
        on_change: Callable[[ChangeSet], None] | None = None,
        force_polling: bool | None = None,
    ) -> SkillsWatcher | None:
        """A watcher per §7.3, or None for a blank workspace or ``skills.load.watch: false``."""
        if workspace is None or not os.fspath(workspace).strip():
            return None
        if config.skills.load.watch is False:
            return None
        return cls(
            watch_roots(workspace, paths, config, cwd=cwd),
            versions=versions,
            workspace=Path(os.fspath(workspace).strip()),
            debounce_ms=debounce_ms_of(config),
            on_change=on_change,
            force_polling=force_polling,
            standalone_md=(config.skills.load.mode or DEFAULT_MODE).loads_standalone,
        )

    # ----------------------------------------------------------------- lifecycle

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> SkillsWatcher:
        if self.running:
            return self
        self._stop.clear()
        self._armed.clear()
        self._debouncer = Debouncer(self.debounce_ms / 1000, self._fire)
        self._thread = threading.Thread(target=self._run, name="skillbook-watch", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop watching; pending (not yet debounced) changes are dropped."""
        self._stop.set()
        self.journal.rearmed()  # pending changes are dropped: no hint may span a stop
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(DEFAULT_STOP_TIMEOUT_S)
        self._thread = None
        if self._debouncer is not None:
            self._debouncer.close()
            self._debouncer = None

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until the OS watches are in place (changes from then on are seen)."""
        return self._armed.wait(timeout)

    def __enter__(self) -> SkillsWatcher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ----------------------------------------------------------------- watch thread

    def _run(self) -> None:
        import watchfiles

        polling = self.force_polling
        plan = make_plan(self.roots)
        last_error = ""
        while not self._stop.is_set():
            if not plan.roots:
                # Nothing exists yet: watchfiles needs existing paths, so wait and look again.
                self._armed.set()
                if self._stop.wait(self._rearm_ms / 1000):
                    return
                plan = self._replan(plan)
                continue
            signal = ArmSignal(self._stop, self._armed)
            self._armed.clear()
            # A new watchfiles call: whatever changed since the last one went unseen.
            self.journal.rearmed()
            try:
                # yield_on_timeout hands control back every rearm interval even when idle:
                # the only way to notice a root that is created later (watchfiles can only
                # watch existing paths, and watching an ancestor such as $HOME recursively
                # would cost far more than a few isdir() calls a second).
                for batch in watchfiles.watch(
                    *plan.watched,
                    watch_filter=None,
                    debounce=max(self.debounce_ms, DEFAULT_STEP_MS),
                    step=DEFAULT_STEP_MS,
                    stop_event=signal,
                    rust_timeout=self._rearm_ms,
                    yield_on_timeout=True,
                    raise_interrupt=False,
                    force_polling=polling,
                    ignore_permission_denied=True,
                ):
                    changes = self._relevant(plan, batch)
                    if changes and self._debouncer is not None:
                        self._debouncer.add(changes)
                    # An idle tick only checks which roots exist; an event at the top of a
                    # root may also have added or removed a symlinked skill folder.
                    if (not batch and existing(self.roots) != plan.roots) or (
                        batch and plan.touches_layout(p for _, p in batch)
                    ):
                        new = self._replan(plan)
                        if new != plan:
                            plan = new
                            # wait_ready() blocks again until the new plan is armed.
                            self._armed.clear()
                            self.journal.rearmed()
                            signal.rearm = True
            except Exception as err:
                if str(err) != last_error:  # a lasting failure is logged once, not each retry
                    _log.warning("skills watcher error (%s): %s", self.workspace, err, exc_info=err)
                last_error = str(err)
                if not polling and not isinstance(err, FileNotFoundError):
                    # The OS watcher failed (e.g. inotify limits): fall back to polling.
                    polling = True
                elif self._stop.wait(self._rearm_ms / 1000):
                    return
                plan = self._replan(plan)

    def _replan(self, old: Plan) -> Plan:
        new = make_plan(self.roots)
        # A root that vanished (the OS may say nothing, e.g. for a removed symlink) or
        # appeared after start-up: whatever it holds came or went unseen.
        found: list[Change] = [(r, DELETED) for r in old.roots if r not in new.roots]
        for root in (r for r in new.roots if r not in old.roots):
            found.append((root, ADDED))
            found.extend((p, ADDED) for p in skill_files(root))
        if found and self._debouncer is not None:
            self._debouncer.add(found)
        return new

    def _relevant(self, plan: Plan, batch: set[tuple[Any, str]]) -> list[Change]:
        out: list[Change] = []
        for change, raw in sorted(batch, key=lambda c: c[1]):
            kind = change.name if change.name in KINDS else MODIFIED
            for root, path in plan.locate(raw):
                if matters(root, path, kind, standalone_md=self.standalone_md):
                    out.append((path, kind))
                    break
        return out

    def _fire(self, batch: list[Change]) -> None:
        if not batch:
            return
        last = batch[-1][0]
        with self.journal.lock:
            version = self.versions.bump(self.workspace, reason=WATCH_REASON, changed_path=last)
            self.journal.record(version, tuple(batch))
        if self.on_change is None:
            return
        change = ChangeSet(
            paths=tuple(p for p, _ in batch),
            kinds=tuple(k for _, k in batch),
            workspace=str(self.workspace) if self.workspace is not None else None,
            version=version,
        )
        try:
            self.on_change(change)
        except Exception as err:
            # The caller's callback must not stop the watcher; its traceback is kept.
            _log.warning("skills change callback failed: %s", err, exc_info=err)


class WatcherRegistry:
    """One watcher per workspace, reused while its targets and debounce are unchanged."""

    def __init__(self, versions: SnapshotVersions, *, force_polling: bool | None = None) -> None:
        self.versions = versions
        self.force_polling = force_polling
        self._lock = threading.Lock()
        self._watchers: dict[str, SkillsWatcher] = {}

    def ensure(
        self,
        workspace: str | os.PathLike[str] | None,
        roots: Sequence[Path],
        *,
        enabled: bool = True,
        debounce_ms: int = DEFAULT_DEBOUNCE_MS,
        standalone_md: bool = False,
        on_change: Callable[[ChangeSet], None] | None = None,
    ) -> SkillsWatcher | None:
        """The running watcher for ``workspace``: reused, replaced, created or closed."""
        key = os.fspath(workspace).strip() if workspace is not None else ""
        if not key:
            return None
        candidate = SkillsWatcher(
            roots,
            versions=self.versions,
            workspace=Path(key),
            debounce_ms=debounce_ms,
            on_change=on_change,
            force_polling=self.force_polling,
            standalone_md=standalone_md,
        )
        with self._lock:
            existing = self._watchers.get(key)
            if (
                enabled
                and existing is not None
                and existing.paths_key == candidate.paths_key
                and existing.debounce_ms == candidate.debounce_ms
            ):
                return existing
            self._watchers.pop(key, None)
            if enabled:
                self._watchers[key] = candidate
        if existing is not None:
            existing.stop()
        return candidate.start() if enabled else None

    def get(self, workspace: str | os.PathLike[str]) -> SkillsWatcher | None:
        with self._lock:
            return self._watchers.get(os.fspath(workspace).strip())

    def close(self, workspace: str | os.PathLike[str]) -> None:
        with self._lock:
            watcher = self._watchers.pop(os.fspath(workspace).strip(), None)
        if watcher is not None:
            watcher.stop()

    def close_all(self) -> None:
        with self._lock:
            watchers = list(self._watchers.values())
            self._watchers.clear()
        for watcher in watchers:
            watcher.stop()

    def __len__(self) -> int:
        with self._lock:
            return len(self._watchers)

    def __enter__(self) -> WatcherRegistry:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close_all()
