"""The install audit log: one JSON line per install forced past the security scan.

Input: a record (who forced what, why, over which findings). Output: a line appended
to ``<state dir>/install-audit.jsonl``. The line is written with a single
``write()`` on a descriptor opened with ``O_APPEND``, so concurrent installs never
interleave their lines and a crash leaves whole lines only (at worst the last one
missing). Nothing is ever rewritten or truncated.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

__all__ = ["AUDIT_FILE_NAME", "append_audit", "findings_of", "forced_at", "forced_by"]

AUDIT_FILE_NAME: Final = "install-audit.jsonl"


def append_audit(state_dir: Path, record: Mapping[str, Any]) -> Path:
    """Append ``record`` as one line; returns the log's path. Raises OSError if it
    cannot be written (a forced install must not proceed without its audit line).
    """
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / AUDIT_FILE_NAME
    line = json.dumps(dict(record), ensure_ascii=False, sort_keys=False) + "\n"
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o600)
    try:
        data = line.encode("utf-8")
        written = os.write(fd, data)
        if written != len(data):  # pragma: no cover - regular files take whole writes
            raise OSError(f"short write to {path}")
        os.fsync(fd)
    finally:
        os.close(fd)
    return path


def forced_at() -> str:
    """When, in UTC to the second: the ``time`` of every audit line."""
    import datetime as dt

    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def forced_by() -> str | None:
    """Who forced it: the login name, or None where there is none (a container's uid)."""
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return None


def findings_of(critical: Iterable[Any]) -> list[dict[str, Any]]:
    """The critical scan findings that were overridden, as the audit line lists them."""
    return [
        {"rule": f.rule, "severity": str(f.severity), "file": str(f.file), "line": f.line}
        for f in critical
    ]
