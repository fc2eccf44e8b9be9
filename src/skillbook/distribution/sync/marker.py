"""Which ``<target>/skills`` trees a sync made, so a sync never replaces anything else.

The record ``<target>/.skills.sync.json`` holds the (device, inode) of the trees the
last syncs swapped in (a rename keeps a folder's inode). It is written, atomically,
before each swap with both the old and the new tree, so a crash on either side of the
swap still leaves the tree in place recognised.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from skillbook.base.atomic import write_atomic

#: Beside ``<target>/skills``: which trees earlier syncs put there.
MARKER_FILE = ".skills.sync.json"


def identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of ``path`` itself, or ``None`` when it does not exist."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    return (info.st_dev, info.st_ino)


def is_empty_dir(path: Path) -> bool:
    if path.is_symlink() or not path.is_dir():
        return False
    try:
        with os.scandir(path) as listing:
            return not any(listing)
    except OSError:
        return False


def read_trees(path: Path) -> list[tuple[int, int]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [(int(d), int(i)) for d, i in data.get("trees", [])]
    except (OSError, ValueError, TypeError, AttributeError):
        return []


def write_trees(path: Path, trees: Sequence[tuple[int, int]], source: Path | None) -> None:
    data = {"version": 1, "source": str(source), "trees": [list(t) for t in trees]}
    # The temporary keeps sync's staging name, .<name>.tmp-XXXXXXXX.
    write_atomic(path, json.dumps(data, indent=2) + "\n", prefix=f".{path.name}.tmp-", suffix="")
