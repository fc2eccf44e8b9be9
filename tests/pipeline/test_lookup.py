"""Finding a skill by name, skill key or folder name, and "did you mean" suggestions."""

from __future__ import annotations

from pathlib import Path

import pytest
from factories import write_skill

import skillbook
from skillbook.config.file import Config
from skillbook.pipeline.gating.status import StatusEntry
from skillbook.pipeline.lookup import find_entry, suggest_names


@pytest.fixture
def entries(tmp_path: Path) -> tuple[StatusEntry, ...]:
    skills = tmp_path / "skills"
    write_skill(skills / "weather", description="D.", body="")
    write_skill(skills / "notes-folder", "notes", "D.", body="")
    write_skill(
        skills / "keyed", description="D.", body="", metadata={"openclaw": {"skillKey": "the-key"}}
    )
    write_skill(skills / "release-notes", description="D.", body="")
    env = {"HOME": str(tmp_path), "SKILLBOOK_BUNDLED_SKILLS_DIR": str(tmp_path / "none")}
    return skillbook.load(tmp_path, env=env, config=Config.empty()).status.skills


def test_find_by_name_then_key_then_folder(entries: tuple[StatusEntry, ...]) -> None:
    def found(typed: str) -> str | None:
        entry = find_entry(entries, typed)
        return entry.name if entry is not None else None

    assert found("weather") == "weather"
    assert found("the-key") == "keyed"
    assert found("notes-folder") == "notes"
    assert found("Weather") is None  # exact only; suggestions handle the rest


def test_suggestions(entries: tuple[StatusEntry, ...]) -> None:
    assert suggest_names(entries, "Weather") == ["weather"]
    assert suggest_names(entries, "wether") == ["weather"]
    assert suggest_names(entries, "relase-notes") == ["release-notes"]
    assert suggest_names(entries, "notes-fold") == ["notes"]
    assert suggest_names(entries, "the-ke") == ["keyed"]
    assert suggest_names(entries, "zzz") == []
    assert suggest_names(entries, "  ") == []
    assert len(suggest_names(entries, "e")) <= 3
