"""Very deep nesting in a frontmatter: a diagnostic, never a crash, under both profiles.

Collections nested past ``_yaml.DEFAULT_MAX_DEPTH`` (100) give ``parse.yaml-too-deep``
and the frontmatter as OpenClaw's line parser reads it, so the ``name`` and
``description`` lines still count and the skill loads (OpenClaw 2026.9.6 itself reads
a thousand levels as YAML and loads such a skill too, so ``openclaw-2026.9`` does not
refuse it). Before: a block mapping nested a thousand deep raised ``RecursionError``
in the YAML fast path (``parse.internal-error``), flow collections past libyaml's own
bound gave ``parse.yaml-invalid``, and ``openclaw-2026.9`` refused every such skill.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from deep_frontmatter import STYLES, collections, deep_skill
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillbook.config.profile import OPENCLAW_2026_4, OPENCLAW_2026_9, Profile
from skillbook.pipeline.book import Loader
from skillbook.pipeline.parse.skill_file import parse_skill_text
from skillbook.pipeline.parse.yaml_core import DEFAULT_MAX_DEPTH

PROFILES = [OPENCLAW_2026_4, OPENCLAW_2026_9]


def _check(text: str, profile: Profile, *, too_deep: bool) -> None:
    parsed = parse_skill_text(text, rules=profile.frontmatter)
    codes = [d.code for d in parsed.diagnostics]
    assert "parse.internal-error" not in codes
    assert parsed.frontmatter.values["name"] == "deep"
    assert parsed.frontmatter.values["description"] == "Deep one"
    assert not parsed.invalid
    assert ("parse.yaml-too-deep" in codes) is too_deep, codes


@pytest.mark.parametrize("profile", PROFILES, ids=str)
@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("depth", [150, 400, 1200])
def test_hundreds_of_levels_give_too_deep_and_keep_the_name(
    profile: Profile, style: str, depth: int, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="skillbook.pipeline.parse.skill_file"):
        _check(deep_skill(depth, style), profile, too_deep=True)
    assert not caplog.records  # no traceback logged either


@pytest.mark.parametrize("profile", PROFILES, ids=str)
def test_deep_description_keeps_its_line_text(profile: Profile) -> None:
    text = f"---\nname: deep\ndescription: {'[' * 300}{']' * 300}\n---\n"
    parsed = parse_skill_text(text, rules=profile.frontmatter)
    assert parsed.frontmatter.values["description"] == "[" * 300 + "]" * 300
    assert "parse.yaml-too-deep" in [d.code for d in parsed.diagnostics]
    assert not parsed.invalid


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    depth=st.integers(min_value=1, max_value=450),
    style=st.sampled_from(STYLES),
    profile=st.sampled_from(PROFILES),
)
def test_any_depth_parses_without_crashing(depth: int, style: str, profile: Profile) -> None:
    """The bound is exact: ``n`` collections under the top-level mapping are ``n + 1``
    levels, refused from ``n = DEFAULT_MAX_DEPTH`` on."""
    too_deep = collections(depth, style) >= DEFAULT_MAX_DEPTH
    _check(deep_skill(depth, style), profile, too_deep=too_deep)


@pytest.mark.parametrize("profile", PROFILES, ids=str)
def test_a_deep_skill_is_in_the_catalog(profile: Profile, tmp_path: Path) -> None:
    folder = tmp_path / "ws" / "skills" / "deep"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(deep_skill(300, "block-map"), encoding="utf-8")
    book = Loader(tmp_path / "ws", env={"HOME": str(tmp_path)}, compat=profile).load()
    assert "deep" in [s.name for s in book.skills]
    assert "<name>deep</name>" in book.catalog.text
    codes = {d.code for d in book.diagnostics}
    assert "parse.yaml-too-deep" in codes and "parse.internal-error" not in codes
