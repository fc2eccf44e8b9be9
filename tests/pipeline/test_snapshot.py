"""Skill snapshots and version counters (spec §7.1–7.2, §12 "Snapshot / refresh")."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest

from skillbook.model import (
    InvocationPolicy,
    Requires,
    Skill,
    SkillMetadata,
)
from skillbook.pipeline.prompt.skills_section import PromptLimits, build_prompt
from skillbook.pipeline.snapshot import (
    SkillsChangeEvent,
    SkillSnapshot,
    SnapshotSkill,
    SnapshotVersions,
    build_snapshot,
    bump_version,
    should_refresh_snapshot,
)


def skill(name: str, *, hidden: bool = False, metadata: SkillMetadata | None = None) -> Skill:
    base = Path("/ws/skills") / name
    return Skill.create(
        name,
        f"{name} things",
        base_dir=base,
        source="openclaw-workspace",
        metadata=metadata,
        invocation=InvocationPolicy(disable_model_invocation=hidden),
    )


class FakeClock:
    def __init__(self, now: int) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


# ----------------------------------------------------------------------- snapshot shape


def test_snapshot_shape_and_hidden_skills() -> None:
    """Prompt: a `disable-model-invocation` skill is hidden from the prompt but present in
    `snapshot.skills`; §7.1 shape with primaryEnv / requiredEnv copied from the manifest."""
    keyed = skill(
        "keyed",
        metadata=SkillMetadata(primary_env="K_API_KEY", requires=Requires(env=("K_API_KEY", "B"))),
    )
    bins_only = skill("bins", metadata=SkillMetadata(requires=Requires(bins=("curl",))))
    secret = skill("secret", hidden=True, metadata=SkillMetadata(emoji="x"))
    skills = [keyed, bins_only, secret]
    catalog = build_prompt(skills)
    snap = build_snapshot(skills, catalog, skill_filter=None, version=None)
    data = snap.to_json()
    assert list(data) == ["prompt", "skills", "resolvedSkills"]
    assert data["prompt"] == catalog.text and "secret" not in data["prompt"]
    assert data["skills"] == [
        {"name": "keyed", "primaryEnv": "K_API_KEY", "requiredEnv": ["K_API_KEY", "B"]},
        {"name": "bins", "requiredEnv": []},
        {"name": "secret"},
    ]
    assert [s["name"] for s in data["resolvedSkills"]] == ["keyed", "bins"]
    assert data["resolvedSkills"][0] == {
        "name": "keyed",
        "description": "keyed things",
        "filePath": "/ws/skills/keyed/SKILL.md",
        "baseDir": "/ws/skills/keyed",
        "source": "openclaw-workspace",
        "sourceInfo": {
            "path": "/ws/skills/keyed/SKILL.md",
            "source": "openclaw-workspace",
            "scope": "project",
            "origin": "top-level",
            "baseDir": "/ws/skills/keyed",
        },
        "disableModelInvocation": False,
    }


def test_snapshot_filter_and_version() -> None:
    """Prompt: agent filters: the snapshot records `skillFilter` = the explicit list; an
    empty filter is kept; version is the caller's."""
    snap = build_snapshot([skill("a")], build_prompt([skill("a")]), skill_filter=["a"], version=7)
    data = snap.to_json()
    assert data["skillFilter"] == ["a"] and data["version"] == 7
    assert list(data) == ["prompt", "skills", "skillFilter", "resolvedSkills", "version"]
    empty = build_snapshot([], build_prompt([]), skill_filter=[], version=0).to_json()
    assert empty == {
        "prompt": "",
        "skills": [],
        "skillFilter": [],
        "resolvedSkills": [],
        "version": 0,
    }


def test_resolved_skills_not_truncated() -> None:
    """§7.1: `resolvedSkills` = prompt-visible skills, not truncated by the budget."""
    skills = [skill(f"s{i}") for i in range(5)]
    catalog = build_prompt(skills, limits=PromptLimits(max_skills=2))
    snap = build_snapshot(skills, catalog)
    assert len(catalog.kept) == 2
    assert snap.resolved_skills == tuple(skills)


def test_snapshot_values_are_frozen() -> None:
    snap = SkillSnapshot(prompt="", skills=(SnapshotSkill("a"),))
    with pytest.raises(AttributeError):
        snap.prompt = "x"  # type: ignore[misc]


# ----------------------------------------------------------------------- counters


def test_bump_version_rule() -> None:
    """§7.2: bumpVersion(cur) = now if now > cur else cur + 1."""
    assert bump_version(0, 1000) == 1000
    assert bump_version(1000, 1000) == 1001
    assert bump_version(5000, 1000) == 5001
    assert bump_version(999, 1000) == 1000


def test_counters_global_and_workspace() -> None:
    """§7.2: counters start at 0; ws bump → that ws; get = max(global, ws)."""
    clock = FakeClock(100)
    v = SnapshotVersions(clock=clock)
    assert v.get() == 0 and v.get("/ws") == 0
    assert v.bump("/ws") == 100
    assert v.get("/ws") == 100 and v.get() == 0 and v.get("/other") == 0
    assert v.bump("/ws") == 101  # same millisecond: +1
    clock.now = 50
    assert v.bump() == 50  # global
    assert v.get("/ws") == 101 and v.get("/other") == 50
    clock.now = 500
    assert v.bump() == 500
    assert v.get("/ws") == 500
    assert v.bump("") == 501  # an empty workspace means global, as in OpenClaw
    assert v.get(Path("/ws")) == 501


def test_listeners_receive_events_and_unsubscribe() -> None:
    v = SnapshotVersions(clock=FakeClock(1))
    seen: list[SkillsChangeEvent] = []
    unsubscribe = v.subscribe(seen.append)
    v.subscribe(seen.append)  # a second subscription of the same callback is ignored
    v.bump("/ws", reason="watch", changed_path="/ws/skills/a/SKILL.md")
    v.bump()
    assert seen == [
        SkillsChangeEvent(reason="watch", workspace="/ws", changed_path="/ws/skills/a/SKILL.md"),
        SkillsChangeEvent(reason="manual"),
    ]
    unsubscribe()
    unsubscribe()  # idempotent
    v.bump()
    assert len(seen) == 2


def test_listener_errors_are_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    v = SnapshotVersions(clock=FakeClock(1))
    after: list[str] = []

    def broken(event: SkillsChangeEvent) -> None:
        raise RuntimeError("boom")

    v.subscribe(broken)
    v.subscribe(lambda e: after.append(e.reason))
    with caplog.at_level(logging.WARNING, logger="skillbook.pipeline.snapshot"):
        assert v.bump(reason="remote-node") == 1
    assert after == ["remote-node"]
    assert [r.getMessage() for r in caplog.records] == ["skills change listener failed: boom"]


def test_counters_are_per_object() -> None:
    a = SnapshotVersions(clock=FakeClock(10))
    b = SnapshotVersions(clock=FakeClock(10))
    a.bump()
    assert a.get() == 10 and b.get() == 0


def test_concurrent_bumps_strictly_increase() -> None:
    v = SnapshotVersions(clock=FakeClock(7))
    results: list[int] = []
    lock = threading.Lock()

    def work() -> None:
        for _ in range(200):
            n = v.bump("/ws")
            with lock:
                results.append(n)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == list(range(7, 7 + 800))


# ----------------------------------------------------------------------- refresh rule


def test_should_refresh_rules() -> None:
    """Snapshot / refresh: refresh when the process version is 0 but the cached one 42;
    reuse when versions are equal; refresh when the cached version is older."""
    assert should_refresh_snapshot(42, 0) is True
    assert should_refresh_snapshot(0, 0) is False
    assert should_refresh_snapshot(None, 0) is False
    assert should_refresh_snapshot(42, 42) is False
    assert should_refresh_snapshot(41, 42) is True
    assert should_refresh_snapshot(43, 42) is False
    assert should_refresh_snapshot(None, 5) is True  # non-numbers count as 0
    assert should_refresh_snapshot("42", 0) is False
    assert should_refresh_snapshot(True, 0) is False  # a boolean is not a number in JS
    assert should_refresh_snapshot(1.5, 2) is True
