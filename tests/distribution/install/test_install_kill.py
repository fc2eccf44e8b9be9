"""A real ``kill -9`` of an install in the middle of a download, an extraction and a
merge: the target is then exactly its old tree or exactly its new one, and the next
run cleans up what the killed one left and finishes.

The child prints every progress event and, when asked, sleeps a little on each, so
the parent can stop it inside a given phase; no assertion depends on timing.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from distribution.install.archives import Entry, make_zip
from distribution.install.install_support import (
    Server,
    server_fixture,  # noqa: F401 (fixtures)
    snapshot,
)
from skillbook.distribution.install.download import STAGING_DIR_NAME
from skillbook.distribution.install.tools_dir import tools_root

#: Stand-in executables and child interpreters are Python processes.
pytestmark = pytest.mark.subprocess
CHILD = Path(__file__).with_name("kill_child.py")
ARCHIVE = make_zip(
    [Entry(f"pkg/file{i:03}.txt", os.urandom(4096)) for i in range(200)]
    + [Entry("shared.txt", b"version 2"), Entry("bin/tool", b"#!/bin/sh\n", mode=0o755)]
)


def old_tree(root: Path) -> None:
    (root / "bin").mkdir(parents=True)
    (root / "shared.txt").write_text("version 1")
    (root / "mine.txt").write_text("the user's own file")
    (root / "bin" / "old-tool").write_text("old")


def state(root: Path) -> dict[str, tuple[str, str]]:
    return snapshot(root, exclude=(root / STAGING_DIR_NAME,))


def run_child(server: Server, root: Path, home: Path, *, slow: bool) -> subprocess.Popen[str]:
    args = {"url": server.base + "/pkg.zip", "root": str(root), "home": str(home), "slow": slow}
    return subprocess.Popen(
        [sys.executable, str(CHILD), json.dumps(args)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )


def expected_new(tmp_path: Path, server: Server) -> dict[str, tuple[str, str]]:
    root = tmp_path / "reference" / "root"
    old_tree(root)
    child = run_child(server, root, tmp_path, slow=False)
    out, _ = child.communicate(timeout=120)
    assert '"ok": true' in out, out
    return state(root)


@pytest.mark.parametrize(
    "kill_at",
    ["advance Downloading 3", "advance Extracting 40", "advance Merging 40", "finish Merging"],
)
def test_kill_9_leaves_the_old_or_the_new_tree(
    tmp_path: Path, server: Server, kill_at: str
) -> None:
    server.file("/pkg.zip", ARCHIVE)
    new = expected_new(tmp_path, server)
    root = tools_root(tmp_path / "state", "kill-test")
    old_tree(root)
    old = state(root)
    assert old != new
    child = run_child(server, root, tmp_path, slow=True)
    assert child.stdout is not None
    seen = []
    for line in child.stdout:
        seen.append(line.strip())
        if line.strip() == kill_at:
            os.kill(child.pid, signal.SIGKILL)
            break
    child.wait(timeout=60)
    child.stdout.close()
    assert child.returncode == -signal.SIGKILL, seen[-5:]
    after = state(root)
    assert after in (old, new)
    if kill_at != "finish Merging":
        assert after == old  # the swap had not happened yet
    # The next run removes the leftovers of the killed one and completes.
    again = run_child(server, root, tmp_path, slow=False)
    out, _ = again.communicate(timeout=120)
    assert '"ok": true' in out, out
    assert state(root) == new
    assert not [
        p.name for p in root.parent.iterdir() if re.search(r"\.(tmp|old|new)-[a-z0-9]{8}$", p.name)
    ]
    staging = root / STAGING_DIR_NAME
    assert not staging.exists() or list(staging.iterdir()) == []
