"""Property tests for the catalog budget (spec §5.3)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from skillbook.base.js import utf16_len
from skillbook.model import InvocationPolicy, Skill, Source
from skillbook.pipeline.prompt.budget import largest_fitting_prefix
from skillbook.pipeline.prompt.home_paths import compact_skill_paths
from skillbook.pipeline.prompt.skills_section import (
    COMPACT_WARNING_OVERHEAD,
    PromptLimits,
    build_prompt,
    format_skills_compact,
    format_skills_for_prompt,
)

HOMES = ("/home/u",)
# Astral emoji, XML specials, accents, a combining mark: everything that changes lengths.
TEXT = st.text(
    alphabet=st.sampled_from([*"abcz-_ &<>\"'é\u0301", "🦀", "🎉", "\U00010348"]),
    max_size=60,
)
USER_SOURCES = {Source.WORKSPACE, Source.PROJECT, Source.PERSONAL, Source.MANAGED}


@st.composite
def skills_strategy(draw: st.DrawFn) -> list[Skill]:
    n = draw(st.integers(min_value=0, max_value=25))
    out: list[Skill] = []
    for i in range(n):
        root = draw(st.sampled_from(["/home/u/ws/skills", "/opt/elsewhere", "/home/u"]))
        base = Path(root) / f"s{i}{draw(st.sampled_from(['', 'x', '🦀&']))}"
        out.append(
            Skill.create(
                f"n{i}{draw(TEXT)}",
                draw(TEXT),
                base_dir=base,
                source=draw(st.sampled_from(list(Source))),
                invocation=InvocationPolicy(disable_model_invocation=draw(st.booleans())),
            )
        )
    return out


LIMITS = st.builds(
    PromptLimits,
    max_skills=st.integers(min_value=-2, max_value=30),
    max_chars=st.integers(min_value=-20, max_value=6000),
)


def _note_len(text: str, catalog: str) -> int:
    return utf16_len(text) - utf16_len(catalog)


@settings(max_examples=300, deadline=None)
@given(skills_strategy(), LIMITS, st.booleans())
def test_deterministic(skills: list[Skill], limits: PromptLimits, priority: bool) -> None:
    a = build_prompt(skills, limits=limits, homes=HOMES, priority=priority)
    b = build_prompt(list(skills), limits=limits, homes=HOMES, priority=priority)
    assert a == b


@settings(max_examples=300, deadline=None)
@given(skills_strategy(), LIMITS, st.booleans())
def test_catalog_within_budget(skills: list[Skill], limits: PromptLimits, priority: bool) -> None:
    """The catalog part never exceeds max_chars (compact: max_chars - 150) unless nothing fits."""
    cat = build_prompt(skills, limits=limits, homes=HOMES, priority=priority)
    shown = compact_skill_paths(cat.kept, HOMES)
    catalog = format_skills_compact(shown) if cat.compact else format_skills_for_prompt(shown)
    assert cat.text.endswith(catalog)
    if cat.kept:
        budget = limits.max_chars - (COMPACT_WARNING_OVERHEAD if cat.compact else 0)
        assert utf16_len(catalog) <= budget
    assert len(cat.kept) <= max(0, limits.max_skills)


@settings(max_examples=300, deadline=None)
@given(skills_strategy(), LIMITS, st.booleans())
def test_kept_plus_omitted_is_visible(
    skills: list[Skill], limits: PromptLimits, priority: bool
) -> None:
    cat = build_prompt(skills, limits=limits, homes=HOMES, priority=priority)
    visible = [s for s in skills if not s.disable_model_invocation]
    assert list(cat.resolved) == visible
    ids = {id(s) for s in cat.kept}
    assert len(ids) == len(cat.kept)
    assert [s for s in visible if id(s) in ids] == list(cat.kept)  # load order
    assert [s for s in visible if id(s) not in ids] == list(cat.omitted)
    if visible:
        assert cat.truncated == bool(cat.omitted)
    if cat.truncated:
        assert f"included {len(cat.kept)} of {len(visible)}" in cat.text
        assert any(d.code == "prompt.truncated" for d in cat.diagnostics)


@settings(max_examples=300, deadline=None)
@given(skills_strategy(), LIMITS)
def test_binary_search_equals_linear_scan(skills: list[Skill], limits: PromptLimits) -> None:
    """The kept count is the largest fitting compact prefix of the count-limited list."""
    cat = build_prompt(skills, limits=limits, homes=HOMES)
    visible = compact_skill_paths([s for s in skills if not s.disable_model_invocation], HOMES)
    by_count = visible[: max(0, limits.max_skills)]
    if utf16_len(format_skills_for_prompt(by_count)) <= limits.max_chars:
        assert not cat.compact and len(cat.kept) == len(by_count)
        return
    assert cat.compact
    budget = limits.max_chars - COMPACT_WARNING_OVERHEAD
    linear = max(
        k
        for k in range(len(by_count) + 1)
        if k == 0 or utf16_len(format_skills_compact(by_count[:k])) <= budget
    )
    assert len(cat.kept) == linear


@given(st.lists(st.integers(min_value=1, max_value=50), max_size=40), st.integers(-5, 600))
def test_prefix_search_matches_scan(costs: list[int], budget: int) -> None:
    def fits(m: int) -> bool:
        return sum(costs[:m]) <= budget

    linear = max((k for k in range(len(costs) + 1) if fits(k)), default=0)
    assert largest_fitting_prefix(len(costs), fits) == linear


@settings(max_examples=200, deadline=None)
@given(skills_strategy(), LIMITS)
def test_priority_never_drops_user_skill_for_bundled(
    skills: list[Skill], limits: PromptLimits
) -> None:
    cat = build_prompt(skills, limits=limits, homes=HOMES, priority=True)
    if any(s.source in USER_SOURCES for s in cat.omitted):
        assert all(s.source in USER_SOURCES for s in cat.kept)
