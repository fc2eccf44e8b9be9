"""The agent's slash commands follow the active compatibility profile, as ``chat`` does:
the built-in names a skill command must avoid are ``book.profile.commands.reserved_names``."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from factories import write_skills

from skillbook.pipeline.book import Loader
from skillbook.runtime.agent import Agent
from skillbook.runtime.providers.scripted import ScriptedModel


def loader(tmp_path: Path, compat: str | None) -> Loader:
    ws = tmp_path / "ws"
    # `focus` is built in under OpenClaw 2026.4 only, `goal` under 2026.9 only.
    write_skills(ws / "skills", ["focus", "goal"])
    env = {
        "HOME": str(tmp_path / "home"),
        "SKILLBOOK_STATE_DIR": str(tmp_path / "state"),
        "SKILLBOOK_BUNDLED_SKILLS_DIR": str(tmp_path / "none"),
        "PATH": os.environ.get("PATH", ""),
    }
    return Loader(ws, env=env, cwd=tmp_path, compat=compat)


@pytest.mark.parametrize(
    ("compat", "names"),
    [(None, ["focus_2", "goal"]), ("openclaw-2026.9", ["focus", "goal_2"])],
)
def test_reserved_names_default_to_the_books_profile(
    tmp_path: Path, compat: str | None, names: list[str]
) -> None:
    book = loader(tmp_path, compat).load()
    agent = Agent(book, None)
    assert [c.name for c in agent.commands().commands] == names
    assert agent.commands() == book.commands()
    # The rewritten command reaches the model under the profile's name.
    model = ScriptedModel([lambda request: request.last.content])
    result = asyncio.run(Agent(book, model).invoke(f"/{names[0]} now"))
    assert result.invocation is not None and result.invocation.command.skill_name == "focus"


def test_explicit_reserved_names_still_win(tmp_path: Path) -> None:
    book = loader(tmp_path, "openclaw-2026.9").load()
    agent = Agent(book, None, reserved_commands={"goal", "focus"})
    assert [c.name for c in agent.commands().commands] == ["focus_2", "goal_2"]
