"""Helpers for the sync tests (not a test module): one machine layout for both sides.

A :class:`World` holds a home, a state dir (managed skills), a bundled dir, a
workspace and outside folders under one temporary folder. :meth:`World.book` loads it
with skillbook; :meth:`World.oracle_request` asks OpenClaw's ``syncSkillsToWorkspace``
(the oracle's ``sync`` op) to do the same with the same folders, so the two target
trees can be compared entry by entry (:func:`listing`).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from skillbook.config.file import Config
from skillbook.distribution.sync.listing import list_tree
from skillbook.pipeline.book import Loader, SkillBook


def listing(root: Path) -> list[dict[str, Any]]:
    """``<root>`` as the oracle lists a synced ``skills`` folder."""
    return [e.to_json() for e in list_tree(root)]


class World:
    def __init__(self, base: Path) -> None:
        self.base = base.resolve()
        self.home = self.base / "home"
        self.state = self.base / "state"
        self.bundled = self.base / "bundled"
        self.outside = self.base / "outside"
        self.workspace = self.home / "ws"
        for folder in (self.home, self.state, self.bundled, self.outside, self.workspace):
            folder.mkdir(parents=True, exist_ok=True)

    @property
    def skills(self) -> Path:
        return self.workspace / "skills"

    @property
    def managed(self) -> Path:
        return self.state / "skills"

    @property
    def personal(self) -> Path:
        return self.home / ".agents" / "skills"

    @property
    def project(self) -> Path:
        return self.workspace / ".agents" / "skills"

    def env(self, **extra: str) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "SKILLBOOK_STATE_DIR": str(self.state),
            "SKILLBOOK_BUNDLED_SKILLS_DIR": str(self.bundled),
            "PATH": str(self.base / "bin"),
            **extra,
        }

    def book(
        self,
        config: dict[str, Any] | None = None,
        *,
        skill_filter: Sequence[str] | None = None,
        agent: str | None = None,
        workspace: Path | None = None,
    ) -> SkillBook:
        return Loader(
            workspace or self.workspace,
            config=Config.from_mapping(config or {}),
            skill_filter=skill_filter,
            agent=agent,
            env=self.env(),
            cwd=self.base,
            legacy_manifest_keys=False,
        ).load()

    def oracle_request(
        self,
        target: Path,
        config: dict[str, Any] | None = None,
        *,
        skill_filter: Sequence[str] | None = None,
        agent: str | None = None,
    ) -> dict[str, Any]:
        req: dict[str, Any] = {
            "op": "sync",
            "workspace": str(self.workspace),
            "targetWorkspace": str(target),
            "home": str(self.home),
            "stateDir": str(self.state),
            "bundledDir": str(self.bundled),
            "path": [str(self.base / "bin")],
            "cwd": str(self.base),
            "omitMeta": True,
            "config": config or {},
        }
        if skill_filter is not None:
            req["skillFilter"] = list(skill_filter)
        if agent is not None:
            req["agentId"] = agent
        return req


def oracle_warnings(result: dict[str, Any]) -> list[str]:
    """OpenClaw's per-skill sync warnings (``Failed to …``), in order."""
    return [
        str(r["message"])
        for r in result.get("logs", [])
        if r.get("level") == "warn" and str(r.get("message", "")).startswith("Failed to ")
    ]


def make_fifo(path: Path) -> None:
    os.mkfifo(path)


_LOCK_HOLDER = """
import sys
from pathlib import Path
from skillbook.base.locks import folder_lock
with folder_lock(Path(sys.argv[1])):
    print("locked", flush=True)
    sys.stdin.read()
"""


@contextlib.contextmanager
def lock_held_elsewhere(folder: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holds the sync lock on ``folder`` until the block ends
    (or until the caller kills the yielded process)."""
    with subprocess.Popen(
        [sys.executable, "-c", _LOCK_HOLDER, str(folder)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdout is not None and proc.stdout.readline() == "locked\n"
        try:
            yield proc
        finally:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait()
