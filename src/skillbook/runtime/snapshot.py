"""Moved to :mod:`skillbook.snapshot` (the snapshot value is core); kept as an alias."""

from skillbook.snapshot import (
    BUMP_REASONS,
    DEFAULT_BUMP_REASON,
    SkillsChangeEvent,
    SkillSnapshot,
    SnapshotSkill,
    SnapshotVersions,
    build_snapshot,
    bump_version,
    should_refresh_snapshot,
    wall_clock_ms,
)

__all__ = [
    "BUMP_REASONS",
    "DEFAULT_BUMP_REASON",
    "SkillSnapshot",
    "SkillsChangeEvent",
    "SnapshotSkill",
    "SnapshotVersions",
    "build_snapshot",
    "bump_version",
    "should_refresh_snapshot",
    "wall_clock_ms",
]
