"""A workspace with a word-count skill, and a scripted agent run recorded as a session."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from factories import skill_text, write_skill

import skillbook
from skillbook.experience.engine import Experience
from skillbook.experience.record import SessionRecord
from skillbook.pipeline.book import SkillBook
from skillbook.runtime.agent import Agent
from skillbook.runtime.approval import ExecPolicy
from skillbook.runtime.providers.base import ToolCall
from skillbook.runtime.providers.scripted import ScriptedModel, call
from skillbook.runtime.tools import Tool

WORDCOUNT = """---
name: wordcount
description: Count the words of a text file and list the most frequent ones.
---
# Word count

Count the words with `wc`, and the most frequent ones with `tr`, `sort` and `uniq`,
with exec, passing skill "wordcount".
"""
# It names programs but states no command: a run that worked the commands out is a new
# skill of its own. (A skill that states them makes a run that repeats them a pure
# follow, or a refine draft: tests/experience/test_follow.py.)


#: A skill whose configured ``apiKey`` reaches its commands as ``KEYED_API_KEY``.
KEYED = skill_text(
    "keyed",
    "Calls the keyed service with its configured key.",
    metadata={"openclaw": {"primaryEnv": "KEYED_API_KEY"}},
    body="Run commands as skill keyed; its key is in $KEYED_API_KEY.\n",
)


def count_commands(file: str, top: int) -> tuple[str, str]:
    return (
        f"wc -w < {file}",
        f"tr -s ' ' '\\n' < {file} | sort | uniq -c | sort -rn | head -n {top}",
    )


@dataclass
class Workspace:
    root: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def ws(self) -> Path:
        return self.root / "ws"

    @property
    def state(self) -> Path:
        return self.root / "state"

    def add_skill(self, name: str, text: str) -> Path:
        return write_skill(self.ws / "skills" / name, text=text) / "SKILL.md"

    def data(self, name: str, text: str) -> Path:
        path = self.root / "data" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def book(self, **options: Any) -> SkillBook:
        return skillbook.load(self.ws, env=self.env, **options)

    def config(self, text: str) -> None:
        (self.state / "skillbook.json").write_text(text, encoding="utf-8")


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    return new_space(tmp_path)


def new_space(root: Path) -> Workspace:
    """A workspace with the word-count skill under ``root`` (``space`` uses tmp_path)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "bundled").mkdir()
    (root / "home").mkdir()
    (root / "state").mkdir()
    env = {
        "HOME": str(root / "home"),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "SKILLBOOK_STATE_DIR": str(root / "state"),
        "SKILLBOOK_BUNDLED_SKILLS_DIR": str(root / "bundled"),
    }
    found = Workspace(root, env)
    found.add_skill("wordcount", WORDCOUNT)
    return found


def count_script(space: Workspace, file: Path, top: int) -> list[Any]:
    """The model's side of a word-count task: read the skill, run two commands, answer."""
    first, second = count_commands(str(file), top)
    return [
        call("read", path=str(space.ws / "skills" / "wordcount" / "SKILL.md")),
        call("exec", command=first, skill="wordcount"),
        call("exec", command=second, skill="wordcount"),
        lambda request: f"Most frequent: {request.last.content.split()[1]}",
    ]


def run_recorded(
    book: SkillBook,
    script: Sequence[Any],
    text: str,
    *,
    approve: Callable[[ToolCall], bool] | None = None,
    tools: Sequence[Tool] | None = None,
    env: dict[str, str] | None = None,
) -> tuple[Experience, SessionRecord]:
    """Run one request with a scripted model and the book's recorder; the session.

    Without ``approve`` every command runs unasked (as with ``--yes``): the run has no
    approval step. With it, the user is asked about each command."""
    exp = Experience(book)
    agent = Agent(
        book,
        ScriptedModel(script),
        recorder=exp.recorder(),
        approve=approve,
        exec_policy=ExecPolicy.allow_all() if approve is None else None,
        tools=tools,
        env=env,
    )
    asyncio.run(agent.invoke(text))
    record = exp.last_session()
    assert record is not None
    return exp, record
