"""A real ``kill -9`` during ``update --for`` (two copies, so between their swaps too):
each agent's folder is then exactly the old skill or exactly the new one, the lock is
the old or the new, and the next ``update --for`` (without ``--force``) finishes the
job: a folder already holding the new version does not count as edited."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from factories import write_skill

from skillbook.distribution.agents.lock import computed_hash, read_lock
from skillbook.distribution.agents.ops import install_for
from skillbook.distribution.agents.table import AgentEnv, get_agent
from skillbook.distribution.agents.update import update_for

pytestmark = pytest.mark.subprocess
CHILD = Path(__file__).with_name("agents_kill_child.py")
PHASES = ("before-swap-1", "after-swap-1", "after-swap-2", "lock-written")


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("phase", PHASES)
def test_kill_during_update_leaves_old_or_new_and_the_next_update_finishes(
    tmp_path: Path, phase: str
) -> None:
    home, project, source = tmp_path / "home", tmp_path / "project", tmp_path / "src" / "s"
    home.mkdir()
    project.mkdir()
    write_skill(source, name="My Skill", body="v1\n", files={"a.txt": "one\n"})
    where = AgentEnv({"HOME": str(home)}, project)
    chosen = tuple(a for a in (get_agent("claude-code"), get_agent("windsurf")) if a)
    install_for(source, chosen, where, global_=False, copy=True)  # two real copies
    folders = [project / ".claude/skills/my-skill", project / ".windsurf/skills/my-skill"]
    old = files(folders[0])
    old_lock = read_lock(project)
    write_skill(source, name="My Skill", body="v2\n", files={"a.txt": "two\n", "b.txt": "b\n"})
    args = json.dumps({"home": str(home), "project": str(project), "phase": phase})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    with subprocess.Popen(
        [sys.executable, str(CHILD), args], stdout=subprocess.PIPE, text=True, env=env
    ) as child:
        assert child.stdout is not None
        try:
            for line in child.stdout:
                if line.strip() == phase:
                    break
            else:
                pytest.fail(f"the child ended before {phase}")
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
    assert child.returncode == -signal.SIGKILL
    new = files(source)
    states = [files(f) for f in folders]
    assert all(s in (old, new) for s in states), phase
    assert read_lock(project)["My Skill"]["computedHash"] in (
        old_lock["My Skill"]["computedHash"],
        computed_hash(source),
    )
    [result] = update_for("My Skill", chosen, where, global_=False, force=False, fetcher=None)
    assert result.ok, result.message
    assert [files(f) for f in folders] == [new, new]
    assert read_lock(project)["My Skill"]["computedHash"] == computed_hash(source)
    leftovers = [p.name for f in folders for p in f.parent.iterdir() if p.name.startswith(".")]
    assert leftovers == []
