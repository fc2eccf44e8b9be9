"""Writing the experience engine's files so that ``kill -9`` leaves the old or the new state.

Every file is written to a temporary sibling and renamed over the target; folders are
built under a temporary name and renamed into place. Read-modify-write of shared files
(the usage counters) holds an advisory lock, so two chats do not lose each other's counts.
The steps themselves are skillbook's shared ones (:mod:`skillbook.base.atomic`,
:mod:`skillbook.base.locks`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from skillbook.base import atomic as _atomic

__all__ = ["move_dir", "read_json", "write_atomic", "write_json"]


def write_atomic(path: Path, data: str | bytes, *, executable: bool = False) -> None:
    """Replace ``path`` with ``data`` in one rename (parents are created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic.write_atomic(path, data, mode=0o755 if executable else 0o644)


def write_json(path: Path, value: Any) -> None:
    write_atomic(path, json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def read_json(path: Path) -> Any:
    """The parsed file, or None when it is missing or not valid JSON (a reader never crashes)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def move_dir(source: Path, target: Path) -> None:
    """Rename the folder ``source`` to ``target`` (which must not exist) in one step."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        raise FileExistsError(target)
    os.rename(source, target)
