"""A promoted skill's helper still runs after the workspace moves (issue 20 §2).

The whole loop with real parts: a scripted model runs a task in a workspace, the
learner drafts it, the draft is promoted, the workspace is copied to another path and
the old one deleted; then a fresh session's scripted model finds the learned skill in
its catalog, reads it with ``read`` and runs the helper the way the skill says, with
``exec`` in the skill's folder.
"""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path
from typing import Any

import skillbook
from experience.conftest import Workspace, count_commands, run_recorded
from skillbook.experience.engine import Experience
from skillbook.runtime.agent import Agent
from skillbook.runtime.approval import ExecPolicy
from skillbook.runtime.providers.scripted import ScriptedModel, ScriptedRequest, call


def learn_and_promote(space: Workspace) -> tuple[str, str]:
    """A word count over a file inside the workspace, learned and promoted: (name, id)."""
    notes = space.ws / "data" / "notes.txt"
    notes.parent.mkdir()
    notes.write_text("pear apple pear fig pear apple\n", encoding="utf-8")
    first, second = count_commands(str(notes), 2)
    script = [
        call("read", path=str(space.ws / "skills" / "wordcount" / "SKILL.md")),
        call("exec", command=first, skill="wordcount"),
        call("exec", command=second, skill="wordcount"),
        "Most frequent: pear",
    ]
    _, record = run_recorded(space.book(), script, f"Count the words in {notes} and show the top 2")
    exp = Experience(space.book())
    draft = exp.learner().learn(record).draft
    assert draft is not None and draft.workspace == str(space.ws)
    done = exp.promote(draft.id)
    assert done.replay_path is not None
    helper = done.replay_path.read_text(encoding="utf-8")
    # Nothing in the helper names the workspace it was learned in.
    assert str(space.ws) not in helper
    return done.draft.name, draft.id


def replay_turns(name: str, seen: list[str], extra: str) -> list[Any]:
    """The fresh session's model: find the skill in the catalog, read it, run its helper
    as its Replay section says (once with the run's values, once with ``extra``)."""

    def read_it(request: ScriptedRequest) -> Any:
        found = re.search(
            rf"<name>{re.escape(name)}</name>.*?<location>([^<]+)</location>", request.system, re.S
        )
        assert found is not None, "the learned skill is not in the catalog"
        return call("read", path=found.group(1))

    def run_it(request: ScriptedRequest) -> Any:
        text = str(request.last.content)
        replay = text.split("## Replay", 1)[1]
        line = next(x for x in replay.splitlines() if x.startswith("bash "))
        command = re.sub(r" \[\w+\]", "", line)  # the run's values
        assert command.startswith("bash ../../../scripts/auto/")
        seen.append(command)
        return call("exec", command=command, skill=name)

    def again(request: ScriptedRequest) -> Any:
        seen.append(str(request.last.content))
        return call("exec", command=f"{seen[0]} {extra} 1", skill=name)

    def answer(request: ScriptedRequest) -> str:
        seen.append(str(request.last.content))
        return "done"

    return [read_it, run_it, again, answer]


def test_the_helper_runs_from_a_moved_workspace(space: Workspace, tmp_path: Path) -> None:
    name, draft_id = learn_and_promote(space)
    assert name == "count-words-top"
    moved = tmp_path / "elsewhere" / "moved-ws"
    shutil.copytree(space.ws, moved, symlinks=True)
    shutil.rmtree(space.ws)
    (moved / "data" / "other.txt").write_text("kiwi kiwi lime\n", encoding="utf-8")
    book = skillbook.load(moved, env=space.env)
    assert name in [s.name for s in book.skills]
    seen: list[str] = []
    model = ScriptedModel(replay_turns(name, seen, str(moved / "data" / "other.txt")))
    agent = Agent(book, model, exec_policy=ExecPolicy.allow_all())
    asyncio.run(agent.invoke("count the words of my notes again"))
    command, first, second = seen[0], seen[1], seen[2]
    assert command == f"bash ../../../scripts/auto/{draft_id}.sh"
    # The run's values: the notes file, found under the moved workspace.
    assert "3 pear" in first and "2 apple" in first and "6" in first.split()
    # Another file, as an argument.
    assert "2 kiwi" in second and "3" in second.split()


def test_the_helper_runs_from_anywhere(space: Workspace, tmp_path: Path) -> None:
    """Called by its path from another folder, the helper still finds its workspace; a
    relative path argument is the caller's."""
    import subprocess

    _, draft_id = learn_and_promote(space)
    moved = tmp_path / "moved"
    shutil.copytree(space.ws, moved, symlinks=True)
    shutil.rmtree(space.ws)
    helper = moved / "scripts" / "auto" / f"{draft_id}.sh"
    done = subprocess.run(
        ["bash", str(helper)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd="/",
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert "3 pear" in done.stdout
    (moved / "data" / "other.txt").write_text("kiwi kiwi lime\n", encoding="utf-8")
    other = subprocess.run(
        ["bash", "scripts/auto/" + helper.name, "data/other.txt", "1"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=moved,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert other.returncode == 0, other.stderr
    assert other.stdout.split() == ["3", "2", "kiwi"]
