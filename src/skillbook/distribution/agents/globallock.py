"""The ``skills`` CLI's global lock (``~/.agents/.skill-lock.json``), read and written
with its keys, so that either tool can update what the other installed globally.

Input: the environment (``$XDG_STATE_HOME`` moves the file to
``$XDG_STATE_HOME/skills/.skill-lock.json``, as the other tool does) and the entries to
add or drop. Output: the parsed document (:func:`read_global_lock`) and the file
rewritten in one rename (:func:`update_global_lock`).

The file: ``{"version": 3, "skills": {...}, "dismissed": {...}, ...}`` as
``JSON.stringify(lock, null, 2)`` writes it (two-space indent, no trailing newline,
integer-like keys first as JavaScript objects order them). An entry records ``source``,
``sourceType``, ``sourceUrl``, ``ref``, ``skillPath``, ``skillFolderHash``, then
``installedAt`` (kept from the entry it replaces) and ``updatedAt``. Every key and entry
skillbook does not know is kept as it was.

Deliberately stricter: where the other tool reads a file it cannot use (bad JSON, an
older ``version``) as empty and so drops every entry on its next write, skillbook
refuses with ``agents.global-lock-invalid`` naming the file.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from skillbook.base.atomic import write_atomic
from skillbook.distribution.agents import AgentsError
from skillbook.distribution.agents.table import AgentEnv

__all__ = [
    "GLOBAL_LOCK_FILE",
    "GLOBAL_LOCK_VERSION",
    "git_tree_hash",
    "global_lock_path",
    "global_lock_text",
    "iso_now",
    "read_global_lock",
    "update_global_lock",
]

GLOBAL_LOCK_FILE: Final = ".skill-lock.json"
GLOBAL_LOCK_VERSION: Final = 3


def global_lock_path(where: AgentEnv) -> Path:
    """``$XDG_STATE_HOME/skills/.skill-lock.json`` when that variable is set (and not
    empty), else ``~/.agents/.skill-lock.json``."""
    state = where.env.get("XDG_STATE_HOME")
    if state:
        return Path(state) / "skills" / GLOBAL_LOCK_FILE
    return where.home / ".agents" / GLOBAL_LOCK_FILE


def _empty() -> dict[str, Any]:
    return {"version": GLOBAL_LOCK_VERSION, "skills": {}, "dismissed": {}}


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def read_global_lock(where: AgentEnv) -> dict[str, Any]:
    """The whole document (a fresh one when the file does not exist)."""
    path = global_lock_path(where)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return _empty()
    except OSError as exc:
        raise AgentsError("agents.io-error", f"could not read {path}: {exc}") from exc
    try:
        # NaN and Infinity are not JSON: the other tool's JSON.parse refuses them.
        parsed = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError) as exc:
        raise AgentsError(
            "agents.global-lock-invalid",
            f"{path} is not valid JSON ({exc}); fix or move it away (nothing was changed)",
        ) from None
    version = parsed.get("version") if isinstance(parsed, dict) else None
    skills = parsed.get("skills") if isinstance(parsed, dict) else None
    if (
        isinstance(version, bool)
        or not isinstance(version, int | float)
        or version < GLOBAL_LOCK_VERSION
        or not isinstance(skills, dict)
    ):
        raise AgentsError(
            "agents.global-lock-invalid",
            f"{path} is not a version {GLOBAL_LOCK_VERSION} skills lock (its entries would "
            "be lost); fix or move it away (nothing was changed)",
        )
    assert isinstance(parsed, dict)
    return parsed


def _js_order(value: Any) -> Any:
    """Objects with their keys in JavaScript's order: array-index keys ascending, then
    the others as inserted."""
    if isinstance(value, list):
        return [_js_order(v) for v in value]
    if not isinstance(value, dict):
        return value
    ints = sorted(
        (
            k
            for k in value
            if k.isascii() and k.isdigit() and str(int(k)) == k and int(k) < 2**32 - 1
        ),
        key=int,
    )
    rest = [k for k in value if k not in set(ints)]
    return {k: _js_order(value[k]) for k in [*ints, *rest]}


def global_lock_text(lock: Mapping[str, Any]) -> str:
    return json.dumps(_js_order(dict(lock)), indent=2, ensure_ascii=False)


def iso_now() -> str:
    """``new Date().toISOString()``: UTC with milliseconds and ``Z``."""
    now = dt.datetime.now(dt.UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def update_global_lock(
    where: AgentEnv,
    add: Mapping[str, Mapping[str, Any]] = {},
    drop: tuple[str, ...] = (),
) -> Path:
    """Add or replace entries (``installedAt`` kept, ``updatedAt`` now) and drop others;
    everything else in the file is kept. One rename replaces the file."""
    lock = read_global_lock(where)
    skills = dict(lock.get("skills") or {})
    for name in drop:
        skills.pop(name, None)
    now = iso_now()
    for name, entry in add.items():
        previous = skills.get(name)
        kept = previous.get("installedAt") if isinstance(previous, dict) else None
        fresh = {k: v for k, v in entry.items() if k not in ("installedAt", "updatedAt")}
        skills[name] = {**fresh, "installedAt": kept or now, "updatedAt": now}
    lock = {**lock, "skills": skills}
    path = global_lock_path(where)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, global_lock_text(lock).encode("utf-8"), prefix=f".{GLOBAL_LOCK_FILE}.")
    except OSError as exc:
        raise AgentsError("agents.io-error", f"could not write {path}: {exc}") from exc
    return path


def git_tree_hash(folder: Path) -> str:
    """The git tree id of a folder (what GitHub's tree API gives, and what the other
    tool records as ``skillFolderHash`` for GitHub sources when it can reach the API)."""

    def tree(path: Path) -> bytes | None:
        items: list[tuple[bytes, bytes]] = []
        with os.scandir(path) as entries:
            for entry in list(entries):
                name = os.fsencode(entry.name)
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(info.st_mode):
                    sub = tree(Path(entry.path)) if entry.name != ".git" else None
                    if sub is not None:  # git has no empty folders
                        # A tree is sorted by name, a folder's name followed by "/".
                        items.append((name + b"/", b"40000 " + name + b"\0" + sub))
                    continue
                if stat.S_ISLNK(info.st_mode):
                    mode, data = b"120000", os.fsencode(os.readlink(entry.path))
                elif stat.S_ISREG(info.st_mode):
                    mode = b"100755" if info.st_mode & 0o111 else b"100644"
                    data = Path(entry.path).read_bytes()
                else:
                    continue
                items.append((name, mode + b" " + name + b"\0" + _object(b"blob", data)))
        if not items:
            return None
        return _object(b"tree", b"".join(item for _, item in sorted(items)))

    found = tree(folder)
    return (found or _object(b"tree", b"")).hex()


def _object(kind: bytes, data: bytes) -> bytes:
    return hashlib.sha1(kind + b" " + str(len(data)).encode() + b"\0" + data).digest()
