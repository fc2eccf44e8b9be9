"""The pieces of :mod:`skillbook.runtime.watch` that do not touch watchfiles.

Input: roots, raw event paths and kinds. Output: which roots exist and which
symlinked skill folders to watch (:class:`Plan`), whether an event matters
(:func:`matters`), and a trailing-edge timer (:class:`Debouncer`).
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

SKILL_FILE = "SKILL.md"
DEFAULT_STOP_TIMEOUT_S = 5.0
#: Path segments never watched (OpenClaw's ``DEFAULT_SKILLS_WATCH_IGNORED``).
IGNORED_SEGMENTS = (
    ".git",
    "node_modules",
    "dist",
    ".venv",
    "venv",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    "build",
    ".cache",
)
IGNORED_PATTERNS = tuple(
    re.compile(r"(^|[\\/])" + re.escape(name) + r"([\\/]|$)") for name in IGNORED_SEGMENTS
)
ADDED, MODIFIED, DELETED = "added", "modified", "deleted"
KINDS = (ADDED, MODIFIED, DELETED)
_SEP = re.compile(r"[\\/]")

Change = tuple[str, str]  # (path, kind)


def is_ignored(path: str | os.PathLike[str]) -> bool:
    """Whether a path has a segment OpenClaw's watcher ignores (``.git``, ``node_modules``, …)."""
    text = os.fspath(path)
    return any(p.search(text) for p in IGNORED_PATTERNS)


def under(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r + os.sep) for r in roots)


def existing(roots: Sequence[str]) -> tuple[str, ...]:
    return tuple(r for r in roots if os.path.isdir(r))


@dataclass(frozen=True, slots=True)
class Plan:
    """What one watchfiles call watches: the existing roots and linked skill folders."""

    roots: tuple[str, ...]
    #: Real folder of each symlinked skill folder → the link's path under its root.
    links: tuple[tuple[str, str], ...] = ()

    @property
    def watched(self) -> list[str]:
        return [*self.roots, *(real for real, _ in self.links)]

    def locate(self, path: str) -> list[tuple[str, str]]:
        """(root, path as seen under the root) for an event path; links mapped back."""
        found: list[tuple[str, str]] = []
        for real, link in self.links:
            if path == real or path.startswith(real + os.sep):
                found.append((os.path.dirname(link), link + path[len(real) :]))
        for root in sorted(self.roots, key=len, reverse=True):
            if path == root or path.startswith(root + os.sep):
                found.append((root, path))
        return found

    def touches_layout(self, paths: Iterable[str]) -> bool:
        """A root itself or an entry directly inside one changed (links may have moved)."""
        return any(p in self.roots or os.path.dirname(p) in self.roots for p in paths)


def make_plan(roots: Sequence[str]) -> Plan:
    present = existing(roots)
    links: list[tuple[str, str]] = []
    for root in present:
        # Symlinked skill folders: the OS watcher does not follow links, so their real
        # folders are watched too and their events mapped back to the link's path.
        try:
            with os.scandir(root) as it:
                for entry in it:
                    if entry.is_symlink() and not is_ignored(entry.name):
                        real = os.path.realpath(entry.path)
                        if os.path.isdir(real) and not under(real, present):
                            links.append((real, entry.path))
        except OSError:
            continue
    return Plan(present, tuple(sorted(links)))


def matters(root: str, path: str, kind: str, *, standalone_md: bool = False) -> bool:
    """Whether an event under ``root`` can change the loaded skills."""
    if path == root:
        return True
    rel = path[len(root) + 1 :]
    # Ignore rules apply below the root, so a workspace inside ~/build/ still works.
    if is_ignored(rel):
        return False
    parts = _SEP.split(rel)
    if parts[-1] == SKILL_FILE:
        return True
    if len(parts) == 1:
        # A skill folder (or link) appearing or going: its SKILL.md event may be missing
        # when the file was written before the OS watched the new folder.
        if kind == DELETED or os.path.islink(path) or os.path.isdir(path):
            return True
        return standalone_md and rel.endswith(".md")
    # A folder moved in with its SKILL.md already inside (grouped layouts).
    return kind == ADDED and os.path.isfile(os.path.join(path, SKILL_FILE))


def skill_files(root: str) -> list[str]:
    """``<root>/SKILL.md`` and ``<root>/*/SKILL.md`` that exist, sorted."""
    found = [os.path.join(root, SKILL_FILE)]
    try:
        with os.scandir(root) as it:
            found.extend(os.path.join(e.path, SKILL_FILE) for e in it if not is_ignored(e.name))
    except OSError:
        return []
    return sorted(p for p in found if os.path.isfile(p))


def _merge(before: str | None, kind: str) -> str:
    """One kind for two events on a path within a debounce period."""
    if before == ADDED and kind == MODIFIED:
        return ADDED  # created, then written: still new to whoever reads the change
    if before == DELETED and kind == ADDED:
        return MODIFIED  # replaced (as editors that save by rename do)
    return kind


class Debouncer:
    """A trailing timer on its own thread: fires ``delay`` after the last :meth:`add`.

    Each path is kept once, at the place of its last event, its kinds merged.
    """

    def __init__(self, delay_s: float, fire: Callable[[list[Change]], None]) -> None:
        self._delay = delay_s
        self._fire = fire
        self._cond = threading.Condition()
        self._pending: dict[str, str] = {}
        self._deadline = 0.0
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="skillbook-debounce", daemon=True)
        self._thread.start()

    def add(self, changes: Iterable[Change]) -> None:
        with self._cond:
            for path, kind in changes:
                self._pending[path] = _merge(self._pending.pop(path, None), kind)
            self._deadline = time.monotonic() + self._delay
            self._cond.notify()

    def close(self) -> None:
        """Stop the timer; pending changes are dropped."""
        with self._cond:
            self._closed = True
            self._pending.clear()
            self._cond.notify()
        if self._thread is not threading.current_thread():
            self._thread.join(DEFAULT_STOP_TIMEOUT_S)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._closed:
                    if not self._pending:
                        self._cond.wait()
                        continue
                    remaining = self._deadline - time.monotonic()
                    if remaining <= 0:
                        break
                    self._cond.wait(remaining)
                if self._closed:
                    return
                batch = list(self._pending.items())
                self._pending.clear()
            self._fire(batch)


class ArmSignal:
    """The ``stop_event`` handed to watchfiles; its first poll proves the watch is armed.

    watchfiles calls ``is_set()`` every step while it waits for events, which happens
    only once the OS watches are in place. ``rearm`` ends the call to watch a new plan.
    """

    def __init__(self, stop: threading.Event, armed: threading.Event) -> None:
        self._stop = stop
        self._armed = armed
        self.rearm = False

    def is_set(self) -> bool:
        if self.rearm:
            return True
        self._armed.set()
        return self._stop.is_set()
