"""Shared fixtures: the public corpus and OpenClaw's own code (the oracle).

Both live in ``../shared`` beside the checkout. Where it is absent (a fresh clone
elsewhere) the tests that need them skip with a message saying so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = (REPO / ".." / "shared").resolve()
CORPUS = SHARED / "corpus"
ORACLE_SRC = SHARED / "oracle"
#: Where the oracle is installed when SKILLBOOK_ORACLE_DIR does not name one.
ORACLE_CACHE = REPO / ".cache" / "oracle"


class Oracle:
    """Runs OpenClaw's skills code (``oracle.mjs``) on JSON requests."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def run(self, request: dict[str, Any] | list[dict[str, Any]], timeout: float = 300) -> Any:
        proc = subprocess.run(
            ["node", str(self.root / "oracle.mjs")],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if proc.returncode == 2 or not proc.stdout.strip():
            raise RuntimeError(f"oracle failed: {proc.stderr[-2000:]}")
        return json.loads(proc.stdout)


def _installed(root: Path) -> bool:
    return (root / "oracle.mjs").is_file() and (root / "node_modules" / "openclaw").is_dir()


def find_or_install_oracle() -> Path | str:
    """The oracle's folder, installing it on first use; a string says why not."""
    if shutil.which("node") is None:
        return "node is not installed"
    env_dir = os.environ.get("SKILLBOOK_ORACLE_DIR")
    if env_dir and _installed(Path(env_dir)):
        return Path(env_dir)
    if _installed(ORACLE_CACHE):
        return ORACLE_CACHE
    if not (ORACLE_SRC / "oracle.mjs").is_file():
        return f"{ORACLE_SRC} is absent (no ../shared beside the checkout)"
    if shutil.which("npm") is None:
        return "npm is not installed"
    # The shared folder is read-only: install into a writable copy (README of the oracle).
    ORACLE_CACHE.parent.mkdir(parents=True, exist_ok=True)
    tmp = ORACLE_CACHE.with_name("oracle.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(ORACLE_SRC, tmp, ignore=shutil.ignore_patterns("node_modules", "latest"))
    for p in tmp.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    tmp.chmod(0o755)
    proc = subprocess.run(
        ["npm", "ci", "--no-audit", "--no-fund"],
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if proc.returncode != 0:
        return f"npm ci for the oracle failed: {proc.stderr[-500:]}"
    shutil.rmtree(ORACLE_CACHE, ignore_errors=True)
    tmp.rename(ORACLE_CACHE)
    return ORACLE_CACHE


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"public corpus not found at {CORPUS} (needs ../shared beside the checkout)")
    return CORPUS


@pytest.fixture(scope="session")
def oracle() -> Iterator[Oracle]:
    found = find_or_install_oracle()
    if isinstance(found, str):
        pytest.skip(f"OpenClaw oracle unavailable: {found}")
    yield Oracle(found)
