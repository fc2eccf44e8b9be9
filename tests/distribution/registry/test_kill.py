"""A real ``kill -9`` during an install and an update, in each phase (downloading,
before the swap, after the swap, after the lock write): the skill folder is then
exactly the old skill or exactly the new one, and once the next command has taken the
workdir's lock, the lock file agrees with the folder and no leftover remains."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from factories import skill_text

from distribution.registry.clawhub_server import ClawHub
from distribution.registry.conftest import DEMO_V1
from skillbook.distribution.registry.endpoint import Endpoint
from skillbook.distribution.registry.installer import Installer, InstallOptions
from skillbook.distribution.registry.verify import verify_skills
from skillbook.distribution.registry.workdir import Workdir

pytestmark = pytest.mark.subprocess
CHILD = Path(__file__).with_name("kill_child.py")
BIG_V2 = {
    "SKILL.md": skill_text("demo", "Version two.", body="").encode(),
    **{f"data/file{i:03}.bin": os.urandom(4096) for i in range(150)},
}


def visible(root: Path) -> dict[str, bytes] | None:
    if not root.exists():
        return None
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.relative_to(root).as_posix().startswith(".")
    }


def kill_in(hub: ClawHub, root: Path, state: Path, mode: str, phase: str) -> None:
    args = {
        "registry": hub.url,
        "root": str(root),
        "state": str(state),
        "mode": mode,
        "phase": phase,
    }
    seen = []
    with subprocess.Popen(
        [sys.executable, str(CHILD), json.dumps(args)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    ) as child:
        assert child.stdout is not None
        for line in child.stdout:
            seen.append(line.strip())
            if line.strip() == phase:
                os.kill(child.pid, signal.SIGKILL)
                break
        child.wait(timeout=60)
    assert phase in seen, seen
    assert child.returncode == -signal.SIGKILL


CASES = [
    ("install", "download", None),
    ("install", "before-swap", None),
    ("install", "after-swap", "2.0.0"),
    ("install", "lock-written", "2.0.0"),
    ("update", "download", "1.0.0"),
    ("update", "before-swap", "1.0.0"),
    ("update", "after-swap", "2.0.0"),
    ("update", "lock-written", "2.0.0"),
]


@pytest.mark.parametrize(("mode", "phase", "expected"), CASES)
def test_kill_leaves_the_old_or_the_new_skill(
    hub: ClawHub, tmp_path: Path, mode: str, phase: str, expected: str | None
) -> None:
    root, state = tmp_path / "ws", tmp_path / "state"
    root.mkdir()
    workdir = Workdir(root)
    target = root / "skills" / "demo"
    if mode == "update":
        hub.state.publish("demo", "1.0.0", DEMO_V1)
        Installer(workdir, Endpoint(hub.url)).install("demo", InstallOptions(state_dir=state))
    hub.state.publish("demo", "2.0.0", BIG_V2)
    kill_in(hub, root, state, mode, phase)
    versions = {None: None, "1.0.0": DEMO_V1, "2.0.0": BIG_V2}
    # Straight after the kill: the folder is whole, old or new, never a mix.
    assert visible(target) in (versions["1.0.0" if mode == "update" else None], BIG_V2)
    verified = verify_skills(workdir)  # takes the lock: finishes or drops the killed run
    assert visible(target) == versions[expected]
    lock = (
        json.loads((root / ".clawhub" / "lock.json").read_text())
        if expected or mode == "update"
        else None
    )
    if expected is None:
        assert verified == []
        assert (
            not (root / ".clawhub" / "lock.json").exists()
            or json.loads((root / ".clawhub" / "lock.json").read_text())["skills"] == {}
        )
    else:
        assert lock is not None and lock["skills"]["demo"]["version"] == expected
        origin = json.loads((target / ".clawhub" / "origin.json").read_text())
        assert origin["installedVersion"] == expected
        assert [v.drift.state for v in verified] == ["clean"]
    assert sorted(p.name for p in (root / "skills").iterdir()) == (["demo"] if expected else [])
