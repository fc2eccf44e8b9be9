"""One twin sandbox for the tests against the real ``skills`` CLI (test_agents_peer.py,
test_agents_sources_peer.py, test_agents_twins.py): its own HOME, XDG folders, TMPDIR and
project under one root, so the two tools run side by side with the same relative layout
and their trees can be compared; and the ``peer`` fixture (conftest.py) that finds the
CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

Tree = dict[str, tuple[Any, ...]]


class TwinSandbox:
    """``root/home`` and ``root/project`` are compared; everything else either tool
    keeps (XDG state, data and cache, skillbook's state dir, TMPDIR) is under
    ``root/state`` and ``root/tmp``, outside them. ``env_extra`` values may name
    ``{home}`` (an agent home moved inside HOME: ``CODEX_HOME={home}/.codex2``)."""

    def __init__(self, root: Path, env_extra: Mapping[str, str]) -> None:
        self.root = root
        self.home, self.project = root / "home", root / "project"
        for folder in (self.home, self.project, root / "state", root / "tmp"):
            folder.mkdir(parents=True)
        self.env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_STATE_HOME": str(root / "state"),
            "XDG_DATA_HOME": str(root / "state" / "data"),
            "XDG_CACHE_HOME": str(root / "state" / "cache"),
            # skillbook's own state (its scan cache) outside the compared trees.
            "SKILLBOOK_STATE_DIR": str(root / "state" / "skillbook"),
            "TMPDIR": str(root / "tmp"),
            "DISABLE_TELEMETRY": "1",
            "DO_NOT_TRACK": "1",
            "NO_COLOR": "1",
            "PYTHONPATH": os.pathsep.join(sys.path),
            **{k: v.replace("{home}", str(self.home)) for k, v in env_extra.items()},
        }

    def run(self, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        """``argv`` in the project folder with the sandbox's environment."""
        return subprocess.run(
            list(argv),
            cwd=self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    def must(self, argv: Sequence[str]) -> None:
        """:meth:`run`, which must succeed (its output's tail is the failure message)."""
        proc = self.run(argv)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]

    def snapshot(self) -> Tree:
        """HOME and the project: each path's file bytes and mode, link target as
        written, or folder."""
        found: Tree = {}
        for top in (self.home, self.project):
            for dirpath, dirnames, filenames in os.walk(top):
                for name in dirnames + filenames:
                    path = Path(dirpath) / name
                    rel = path.relative_to(self.root).as_posix()
                    if path.is_symlink():
                        found[rel] = ("link", os.readlink(path))
                    elif path.is_dir():
                        found[rel] = ("dir",)
                    else:
                        found[rel] = ("file", path.read_bytes(), path.stat().st_mode & 0o777)
        return found
