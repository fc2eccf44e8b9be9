"""skillbook.config.skill_filter: skill and agent filters (§4.3, §12 Eligibility / filters)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillbook.config.file import Config
from skillbook.config.skill_filter import (
    apply_filter,
    effective_skill_filter,
    matches_skill_filter,
    normalize_agent_id,
    normalize_skill_filter,
    resolve_agent_filter,
)
from skillbook.model import Skill, SkillMetadata


def make_skill(name: str, metadata: SkillMetadata | None = None) -> Skill:
    return Skill.create(
        name, f"{name} skill", base_dir=Path("/ws/skills") / name, metadata=metadata
    )


def meta(**kw: str) -> SkillMetadata:
    return SkillMetadata(**kw)  # type: ignore[arg-type]


def test_normalize_skill_filter() -> None:
    """§12: `normalizeSkillFilter` trims/drops blanks, `[]` preserved, undefined preserved."""
    assert normalize_skill_filter(None) is None
    assert normalize_skill_filter([]) == []
    assert normalize_skill_filter([" a ", "", "  ", "b", 3]) == ["a", "b", "3"]


def test_matches_skill_filter() -> None:
    """§12: comparison dedupes+sorts; `([], undefined)` false, `(undefined, undefined)` true."""
    assert matches_skill_filter(None, None)
    assert not matches_skill_filter([], None)
    assert not matches_skill_filter(None, [])
    assert matches_skill_filter([], [])
    assert matches_skill_filter(["b", "a", "a"], [" a", "b "])
    assert not matches_skill_filter(["a"], ["a", "b"])
    assert not matches_skill_filter(["A"], ["a"])


def test_skill_filter_apply() -> None:
    """§12: `skillFilter: ["alpha"]` keeps only alpha; `skillFilter: []` → nothing."""
    skills = [make_skill("alpha"), make_skill("beta", metadata=meta(skill_key="alpha"))]
    assert [s.name for s in apply_filter(skills, ["alpha"])] == ["alpha"]  # by name, not key
    assert apply_filter(skills, []) == []
    assert apply_filter(skills, None) == skills


def test_normalize_agent_id() -> None:
    assert normalize_agent_id(None) == "main"
    assert normalize_agent_id("  ") == "main"
    assert normalize_agent_id(" Work ") == "work"
    assert normalize_agent_id("My Agent!") == "my-agent"
    assert normalize_agent_id("--x--") == "x"
    assert normalize_agent_id("!!!") == "main"
    assert normalize_agent_id("a" * 80) == "a" * 64
    # The Kelvin sign is not an ASCII letter (JS /i without u), but lowercases to "k".
    assert normalize_agent_id("\u212aelvin") == "kelvin"


def test_agent_filters_defaults_and_overrides() -> None:
    """§12: defaults inherited when agent omits `skills`; `agents.list[].skills` replaces defaults."""
    cfg = Config.from_mapping(
        {
            "agents": {
                "defaults": {"skills": ["shared", " "]},
                "list": [
                    {"id": "Inherit"},
                    {"id": "own", "skills": ["alpha"]},
                    {"id": "none", "skills": []},
                ],
            }
        }
    )
    assert resolve_agent_filter(cfg, "inherit") == ["shared"]
    assert resolve_agent_filter(cfg, " OWN ") == ["alpha"]
    assert resolve_agent_filter(cfg, "none") == []
    assert resolve_agent_filter(cfg, "unknown") == ["shared"]
    assert resolve_agent_filter(Config.empty(), "main") is None
    # Explicit filter wins; agent filter needs both config and agent id.
    assert effective_skill_filter(["x "], config=cfg, agent_id="own") == ["x"]
    assert effective_skill_filter(config=cfg, agent_id="own") == ["alpha"]
    assert effective_skill_filter(config=cfg) is None
    assert effective_skill_filter() is None


@pytest.mark.parametrize("agent_id", ["main", None, ""])
def test_default_agent_is_main(agent_id: str | None) -> None:
    cfg = Config.from_mapping({"agents": {"list": [{"id": "main", "skills": ["m"]}]}})
    assert resolve_agent_filter(cfg, agent_id) == ["m"]
