"""OpenClaw's own code (the oracle): found or installed once, run on JSON requests.

The oracle lives in ``../shared/oracle`` beside the checkout; it is installed with
``npm ci`` into ``<repo>/.cache/oracle`` on first use (or ``$SKILLBOOK_ORACLE_DIR``
names an installed copy). Test modules and the benchmark share this one lookup so
that a fresh machine installs the oracle instead of skipping the comparisons.

The newer OpenClaw (``latest``, 2026.9.6) sits in the oracle's ``latest/`` folder; it
is installed (``npm ci --prefix latest``) the first time a test asks for it through
:func:`latest_oracle_dir` (the ``latest_oracle`` fixture), never at collection.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from cache_lock import cache_lock

REPO = Path(__file__).resolve().parents[1]
SHARED = (REPO / ".." / "shared").resolve()
CORPUS = SHARED / "corpus"
ORACLE_SRC = SHARED / "oracle"
#: Where the oracle is installed when SKILLBOOK_ORACLE_DIR does not name one.
ORACLE_CACHE = REPO / ".cache" / "oracle"


class Oracle:
    """Runs OpenClaw's skills code (``oracle.mjs``) on JSON requests.

    ``version`` (``"baseline"`` or ``"latest"``) goes into every request that does not
    name one (in a batch, the first request's decides)."""

    def __init__(self, root: Path, version: str | None = None) -> None:
        self.root = root
        self.version = version

    def run(self, request: dict[str, Any] | list[dict[str, Any]], timeout: float = 300) -> Any:
        if self.version is not None:
            batch = request if isinstance(request, list) else [request]
            batch = [{"version": self.version, **r} for r in batch]
            request = batch if isinstance(request, list) else batch[0]
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
    # Under the lock, check again: another worker or checkout may have installed it.
    with cache_lock("oracle", ORACLE_CACHE.parent):
        return ORACLE_CACHE if _installed(ORACLE_CACHE) else _install_oracle()


def _install_oracle() -> Path | str:
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


@functools.cache
def oracle_dir() -> Path | str:
    """:func:`find_or_install_oracle`, once per process."""
    return find_or_install_oracle()


#: The OpenClaw release of the oracle's ``latest`` folder (its package.json pins it).
LATEST_VERSION = "2026.9.6"


def _latest_installed(root: Path) -> bool:
    return (root / "latest" / "node_modules" / "openclaw" / "package.json").is_file()


def find_or_install_latest(root: Path) -> Path | str:
    """Install the oracle's ``latest`` OpenClaw into ``root/latest`` if it is missing.

    Returns ``root`` when ``latest`` is usable, else a string saying why not. The
    install goes through a temporary folder renamed into place, so an interrupted
    install leaves no half folder behind.
    """
    if _latest_installed(root):
        return root
    if not os.access(root, os.W_OK):
        return f"{root} is not writable: install it there with `npm ci --prefix latest`"
    # Under the lock, check again: another worker or checkout may have installed it.
    with cache_lock("latest", root):
        return root if _latest_installed(root) else _install_latest(root)


def _install_latest(root: Path) -> Path | str:
    source = ORACLE_SRC / "latest"
    if not (source / "package-lock.json").is_file():
        return f"{source} is absent (no ../shared beside the checkout)"
    if shutil.which("npm") is None:
        return "npm is not installed"
    tmp = root / "latest.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(source, tmp, ignore=shutil.ignore_patterns("node_modules"))
    for p in [tmp, *tmp.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    proc = subprocess.run(
        ["npm", "ci", "--prefix", str(tmp), "--no-audit", "--no-fund"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if proc.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        return f"npm ci --prefix latest failed: {proc.stderr[-500:]}"
    shutil.rmtree(root / "latest", ignore_errors=True)
    tmp.rename(root / "latest")
    return root


@functools.cache
def latest_oracle_dir() -> Path | str:
    """The oracle folder with ``latest`` installed (installing it once), or why not."""
    found = oracle_dir()
    if isinstance(found, str):
        return found
    return find_or_install_latest(found)


def run_batch(
    requests: list[dict[str, Any]], *, timeout: float = 300, version: str | None = None
) -> list[dict[str, Any]]:
    """Run a batch of requests; every result must be ok. Needs :func:`oracle_dir` found
    (and :func:`latest_oracle_dir` for ``version="latest"``)."""
    found = oracle_dir() if version != "latest" else latest_oracle_dir()
    assert isinstance(found, Path), found
    out = Oracle(found, version).run(requests, timeout=timeout)
    assert out["ok"], out
    results: list[dict[str, Any]] = out["results"]
    for r in results:
        assert r["ok"], r.get("error")
    return results
