"""One installer at a time for the tools tests install into ``<repo>/.cache`` on first use.

The oracle (``npm ci``), the ``skills`` and ``clawhub`` CLIs, the MCP conformance suite and
the fastmcp venv are installed by whichever test asks first. With ``pytest -n`` several
workers ask at once, and checkouts that share one ``.cache`` (a worktree's link to the
main checkout's) run their suites side by side: two ``npm install`` runs into one folder,
or one renaming a folder another is reading, leave a broken tool behind. An exclusive
``flock`` on ``.cache/<name>.lock`` around the check-then-install makes the second asker
wait and then find the tool installed. The kernel drops the lock when its holder exits,
so a killed run never leaves a stale lock.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cache"


@contextmanager
def cache_lock(name: str, cache: Path = CACHE) -> Iterator[None]:
    """Hold ``cache/<name>.lock`` exclusively (waiting for its holder) for the block."""
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / f"{name}.lock").open("a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
