"""A sync killed with ``kill -9``, two syncs at once, and a reader during syncs.

The target must always hold the old or the new tree, entry for entry, never a mix;
a killed sync's leftovers are cleaned up by the next one; two syncs into one target
take turns; a reader never sees a half-written file or a missing ``skills`` folder.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from factories import write_skill

from distribution.sync.sync_world import World, listing
from skillbook.distribution.sync import SyncBusy
from skillbook.distribution.sync.marker import MARKER_FILE
from skillbook.distribution.sync.workspace import sync_book

pytestmark = pytest.mark.subprocess

CHILD = Path(__file__).with_name("sync_child.py")
SKILLS = 6
LINES = 20_000  # data.txt is about 160 kB: big enough to be caught half-written


def fill(workspace: Path, version: str, *, big: int = 0) -> None:
    """``SKILLS`` skills whose files all say which ``version`` they belong to."""
    skills = workspace / "skills"
    shutil.rmtree(skills, ignore_errors=True)
    for i in range(SKILLS):
        folder = write_skill(skills / f"s{i}", description=f"{version} skill {i}")
        (folder / "data.txt").write_text(f"{version}-{i}\n" * LINES)
        if big and i == 2:
            (folder / "big.bin").write_bytes(version.encode() * big)


def start(world: World, workspace: Path, target: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen(
        [sys.executable, str(CHILD), str(workspace), str(target), json.dumps(world.env()), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )


def read_until(proc: subprocess.Popen[str], wanted: str) -> list[str]:
    assert proc.stdout is not None
    seen: list[str] = []
    while True:
        line = proc.stdout.readline()
        assert line, f"the child ended before {wanted!r}; it printed {seen}"
        seen.append(line.strip())
        if line.strip() == wanted:
            return seen


def old_and_new(world: World, target: Path, *, big: int = 0) -> tuple[Any, Any]:
    """Sync version A into ``target``; leave version B in the workspace.

    Returns the listings of the old (A) and the expected new (B) tree.
    """
    fill(world.workspace, "A")
    sync_book(world.book(), target)
    old = listing(target / "skills")
    fill(world.workspace, "B", big=big)
    expected = world.base / "expected"
    sync_book(world.book(), expected)
    new = listing(expected / "skills")
    assert old != new
    return old, new


def leftovers(target: Path) -> list[str]:
    return sorted(n for n in os.listdir(target) if n not in (MARKER_FILE, "skills"))


def test_kill_between_two_skills_leaves_the_old_tree(tmp_path: Path) -> None:
    world = World(tmp_path)
    target = tmp_path / "target"
    old, new = old_and_new(world, target)
    with start(world, world.workspace, target, "--pause-at", "3") as child:
        read_until(child, "skill 3/6")
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    assert child.returncode == -signal.SIGKILL
    assert listing(target / "skills") == old
    assert leftovers(target) and all(n.startswith(".skills.tmp-") for n in leftovers(target))
    result = sync_book(world.book(), target)
    assert listing(target / "skills") == new
    assert leftovers(target) == []
    assert "sync.leftover-removed" in [d.code for d in result.diagnostics]


@pytest.mark.parametrize(
    "after", ["started", "skill 1/6", "skill 2/6", "skill 3/6", "skill 5/6", "swapped"]
)
def test_kill_at_any_moment_leaves_the_old_or_the_new_tree(tmp_path: Path, after: str) -> None:
    """No pause: the child is killed wherever it is, usually inside a 24 MB file copy."""
    world = World(tmp_path)
    target = tmp_path / "target"
    old, new = old_and_new(world, target, big=24 << 20)
    with start(world, world.workspace, target) as child:
        read_until(child, after)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    assert listing(target / "skills") in (old, new)
    if after == "swapped":
        assert listing(target / "skills") == new
    sync_book(world.book(), target)
    assert listing(target / "skills") == new
    assert leftovers(target) == []


def test_two_syncs_into_one_target_take_turns(tmp_path: Path) -> None:
    world = World(tmp_path)
    first, second = tmp_path / "ws-a", tmp_path / "ws-b"
    fill(first, "A")
    fill(second, "B")
    target = tmp_path / "target"
    log = tmp_path / "order.log"
    with start(world, first, target, "--pause-at", "2", "--log", str(log), "--tag", "a") as a:
        read_until(a, "skill 2/6")
        # While the first holds the target, a sync that will not wait is refused...
        with pytest.raises(SyncBusy):
            sync_book(world.book(workspace=second), target, wait=False)
        # ...and one that waits runs after it.
        with start(world, second, target, "--log", str(log), "--tag", "b") as b:
            read_until(b, "started")
            assert a.stdin is not None
            a.stdin.write("go\n")
            a.stdin.flush()
            read_until(a, "done")
            read_until(b, "done")
    tags = [line.split()[0] for line in log.read_text().splitlines()]
    assert tags == ["a"] * (SKILLS + 1) + ["b"] * (SKILLS + 1)
    expected = tmp_path / "expected"
    sync_book(world.book(workspace=second), expected)
    assert listing(target / "skills") == listing(expected / "skills")
    assert leftovers(target) == []


READER = """
import json, os, sys
from pathlib import Path
skills, stop, lines = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
counts = {"A": 0, "B": 0, "vanished": 0, "torn": 0, "no-skills-folder": 0}
while not stop.exists():
    try:
        names = os.listdir(skills)
    except FileNotFoundError:
        counts["no-skills-folder"] += 1
        continue
    for name in names:
        try:
            text = (skills / name / "data.txt").read_text()
        except (FileNotFoundError, NotADirectoryError):
            counts["vanished"] += 1
            continue
        version = text[:1]
        ok = text == f"{version}-{name[1:]}\\n" * lines
        counts[version if ok else "torn"] += 1
print(json.dumps(counts))
"""


def test_a_reader_never_sees_a_half_written_file(tmp_path: Path) -> None:
    world = World(tmp_path)
    first, second = tmp_path / "ws-a", tmp_path / "ws-b"
    fill(first, "A")
    fill(second, "B")
    target = tmp_path / "target"
    books = [world.book(workspace=first), world.book(workspace=second)]
    sync_book(books[0], target)
    stop = tmp_path / "stop"
    with subprocess.Popen(
        [sys.executable, "-c", READER, str(target / "skills"), str(stop), str(LINES)],
        stdout=subprocess.PIPE,
        text=True,
    ) as reader:
        try:
            for i in range(1, 13):
                sync_book(books[i % 2], target)
        finally:
            stop.touch()  # the reader must end even when a sync fails
        out, _ = reader.communicate()
    counts = json.loads(out)
    assert counts["torn"] == 0 and counts["no-skills-folder"] == 0, counts
    assert counts["A"] + counts["B"] > 0
