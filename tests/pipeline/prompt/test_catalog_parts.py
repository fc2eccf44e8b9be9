"""skillbook.pipeline.prompt.entries: entries reused between builds give the very same catalog."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillbook.model import Skill
from skillbook.pipeline.prompt.entries import CatalogParts
from skillbook.pipeline.prompt.home_paths import KeptPaths, PromptSkill
from skillbook.pipeline.prompt.skills_section import CatalogMemo, PromptLimits, build_prompt

HOME = Path("/home/alice")


def skill(name: str, description: str, root: Path = HOME / "ws" / "skills") -> Skill:
    return Skill.create(name, description, base_dir=root / name, source="openclaw-workspace")


def test_a_build_with_parts_is_the_build_without_them_through_edits() -> None:
    parts = CatalogParts()
    skills = [skill(f"s{i}", f"Does <thing> {i} & more") for i in range(20)]
    steps: list[tuple[list[Skill], tuple[str, ...], KeptPaths | None]] = [
        (skills, (str(HOME),), None),
        # one description edited, one skill gone, one new
        (
            [*skills[:3], skill("s3", "Edited."), *skills[4:19], skill("new", "New one")],
            (str(HOME),),
            None,
        ),
        # another home: every location is shown again
        (skills, ("/home",), None),
        (skills, (), None),
        # over budget: the compact format, the full one still measured with parts
        (skills, (str(HOME),), KeptPaths((str(HOME / "ws"),))),
    ]
    for items, homes, keep in steps:
        for limits in (PromptLimits(max_skills=1000, max_chars=10**6), PromptLimits(50, 900)):
            plain = build_prompt(items, homes=homes, keep=keep, limits=limits)
            reused = build_prompt(items, homes=homes, keep=keep, limits=limits, parts=parts)
            assert reused == plain


def test_an_edit_formats_only_the_entry_that_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    import skillbook.pipeline.prompt.entries as module

    formatted: list[str] = []
    real = module.full_entry

    def counting(entry: PromptSkill) -> str:
        formatted.append(entry.name)
        return real(entry)

    monkeypatch.setattr(module, "full_entry", counting)
    memo = CatalogMemo()
    skills = [skill(f"s{i}", "Does things") for i in range(10)]
    first = memo.build(skills, homes=(str(HOME),))
    assert len(formatted) == 10
    formatted.clear()
    edited = [*skills[:4], skill("s4", "Changed"), *skills[5:]]
    second = memo.build(edited, homes=(str(HOME),))
    assert formatted == ["s4"]
    assert second.text == build_prompt(edited, homes=(str(HOME),)).text != first.text
