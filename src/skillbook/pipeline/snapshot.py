"""Skill snapshots and the version counters that say when to rebuild them (spec §7.1–7.2).

Input: the eligible skills and the :class:`~skillbook.pipeline.prompt.skills_section.PromptCatalog` built
from them. Output: a :class:`SkillSnapshot`, the value a session keeps so that its
system prompt stays stable between turns, with ``to_json()`` in OpenClaw's shape.

:class:`SnapshotVersions` replaces OpenClaw's process-wide counters with an object
the caller owns: a watcher or a remote-node probe bumps it, a session compares the
version its snapshot was built at with :meth:`SnapshotVersions.get`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillbook.config.profile import DEFAULT_PROFILE, Profile
from skillbook.model import Skill
from skillbook.pipeline.cache.skill_memo import SkillMemo
from skillbook.pipeline.prompt.skills_section import PromptCatalog

_log = logging.getLogger("skillbook.pipeline.snapshot")

DEFAULT_BUMP_REASON = "manual"


@dataclass(frozen=True, slots=True)
class SnapshotSkill:
    """One eligible skill as a snapshot records it (for env injection at run time)."""

    name: str
    primary_env: str | None = None
    #: ``requires.env`` of the manifest; None when the manifest has no ``requires``.
    required_env: tuple[str, ...] | None = None

    @classmethod
    def of(cls, skill: Skill) -> SnapshotSkill:
        meta = skill.metadata
        if meta is None:
            return cls(skill.name)
        required = tuple(meta.requires.env) if meta.requires is not None else None
        return cls(skill.name, meta.primary_env, required)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.primary_env is not None:
            out["primaryEnv"] = self.primary_env
        if self.required_env is not None:
            out["requiredEnv"] = list(self.required_env)
        return out


@dataclass(frozen=True, slots=True)
class SkillSnapshot:
    """The skills state of a session (§7.1).

    ``skills`` holds every eligible skill, including those hidden from the model;
    ``resolved_skills`` the prompt-visible ones with absolute paths, before any budget
    cut; ``skill_filter`` is set only when an effective filter was in force.
    """

    prompt: str
    skills: tuple[SnapshotSkill, ...]
    skill_filter: tuple[str, ...] | None = None
    resolved_skills: tuple[Skill, ...] = ()
    version: int | None = None

    def to_json(self) -> dict[str, Any]:
        """OpenClaw's ``SkillSnapshot`` shape, undefined fields left out."""
        out: dict[str, Any] = {
            "prompt": self.prompt,
            "skills": [s.to_json() for s in self.skills],
        }
        if self.skill_filter is not None:
            out["skillFilter"] = list(self.skill_filter)
        out["resolvedSkills"] = [_resolved_skill_json(s) for s in self.resolved_skills]
        if self.version is not None:
            out["version"] = self.version
        return out


def _resolved_skill_json(skill: Skill) -> dict[str, Any]:
    # OpenClaw's Skill objects carry a synthetic sourceInfo (always scope "project",
    # origin "top-level") between ``source`` and ``disableModelInvocation``.
    base = skill.to_json()
    out: dict[str, Any] = {}
    for key, value in base.items():
        if key == "disableModelInvocation":
            out["sourceInfo"] = {
                "path": str(skill.file_path),
                "source": skill.source,
                "scope": "project",
                "origin": "top-level",
                "baseDir": str(skill.base_dir),
            }
        out[key] = value
    return out


def build_snapshot(
    eligible_skills: Sequence[Skill],
    catalog: PromptCatalog,
    *,
    skill_filter: Sequence[str] | None = None,
    version: int | None = None,
    profile: Profile = DEFAULT_PROFILE,
    memo: SkillMemo[SnapshotSkill] | None = None,
) -> SkillSnapshot:
    """Assemble a snapshot; ``skill_filter`` must already be normalised (gate does that).

    ``resolved_skills`` are the prompt-visible skills, or (2026.9) only those the
    catalog shows. ``memo`` (kept by the caller between builds) reuses the record of
    every skill object seen before: after an edit only the edited ones are made."""
    resolved = catalog.kept if profile.catalog.resolved_only_kept else catalog.resolved
    records = (
        memo.get_all(eligible_skills, SnapshotSkill.of)
        if memo is not None
        else tuple(map(SnapshotSkill.of, eligible_skills))
    )
    return SkillSnapshot(
        prompt=catalog.text,
        skills=records,
        skill_filter=tuple(skill_filter) if skill_filter is not None else None,
        resolved_skills=resolved,
        version=version,
    )


@dataclass(frozen=True, slots=True)
class SkillsChangeEvent:
    """What listeners of :class:`SnapshotVersions` receive on every bump."""

    reason: str
    workspace: str | None = None
    changed_path: str | None = None


Listener = Callable[[SkillsChangeEvent], object]
Clock = Callable[[], int]


def wall_clock_ms() -> int:
    """``Date.now()``: whole milliseconds since the epoch."""
    return time.time_ns() // 1_000_000


def bump_version(current: int, now_ms: int) -> int:
    """The next version: the clock if it moved past ``current``, else ``current + 1``.

    Using time keeps versions monotonic across restarts; the ``+ 1`` keeps them
    strictly increasing when two bumps land in the same millisecond.
    """
    return now_ms if now_ms > current else current + 1


def should_refresh_snapshot(cached: object, next_version: object) -> bool:
    """Whether a snapshot built at ``cached`` is stale at ``next_version`` (§7.2).

    Non-numbers count as 0. A current version of 0 means the counters restarted
    (a new process), so any snapshot with a positive version is stale.
    """
    c = _as_version(cached)
    n = _as_version(next_version)
    return c > 0 if n == 0 else c < n


def _as_version(value: object) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    return 0


def _key(workspace: str | Path | None) -> str | None:
    if workspace is None:
        return None
    text = str(workspace)
    # An empty workspace means "no workspace", as a falsy string does in OpenClaw.
    return text or None


class SnapshotVersions:
    """A global counter and one counter per workspace, all starting at 0.

    Thread-safe: a file watcher may bump from its own thread. Listeners run on the
    bumping thread after the counter changed; their exceptions are logged, never raised.
    """

    def __init__(self, *, clock: Clock = wall_clock_ms) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._global = 0
        self._workspaces: dict[str, int] = {}
        # A dict keeps insertion order and ignores a second subscription, like a JS Set.
        self._listeners: dict[Listener, None] = {}

    def bump(
        self,
        workspace: str | Path | None = None,
        reason: str = DEFAULT_BUMP_REASON,
        changed_path: str | Path | None = None,
    ) -> int:
        """Bump the workspace counter (or the global one) and notify listeners."""
        key = _key(workspace)
        now = self._clock()
        with self._lock:
            if key is not None:
                value = bump_version(self._workspaces.get(key, 0), now)
                self._workspaces[key] = value
            else:
                value = bump_version(self._global, now)
                self._global = value
            listeners = list(self._listeners)
        event = SkillsChangeEvent(
            reason=reason,
            workspace=key,
            changed_path=str(changed_path) if changed_path is not None else None,
        )
        for listener in listeners:
            try:
                listener(event)
            except Exception as err:
                _log.warning("skills change listener failed: %s", err, exc_info=err)
        return value

    def get(self, workspace: str | Path | None = None) -> int:
        """The version a snapshot for ``workspace`` should carry: max(global, workspace)."""
        key = _key(workspace)
        with self._lock:
            if key is None:
                return self._global
            return max(self._global, self._workspaces.get(key, 0))

    def subscribe(self, callback: Listener) -> Callable[[], None]:
        """Call ``callback`` on every bump; returns the function that unsubscribes it."""
        with self._lock:
            self._listeners[callback] = None

        def unsubscribe() -> None:
            with self._lock:
                self._listeners.pop(callback, None)

        return unsubscribe
