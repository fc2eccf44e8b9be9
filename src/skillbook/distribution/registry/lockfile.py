"""The tracking files: ``<workdir>/.clawhub/lock.json`` and ``<skill>/.clawhub/origin.json``.

Input: a workdir (a workspace, or the state dir with ``--global``) and skill folders.
Output: :class:`LockFile` and :class:`Origin` values, and the files written back
byte for byte as OpenClaw and the ``clawhub`` CLI write them: ``JSON.stringify(value,
null, 2) + "\\n"``, keys in insertion order (clawhub-api.md §5). Reads try
``.clawhub/`` then the legacy ``.clawdhub/``; writes go to ``.clawhub/``, atomically
(a temporary file, fsync, rename), so a ``kill -9`` leaves the old file or the new one.

Registry installs are recorded where OpenClaw and the CLI look. Skills from git,
folders and archives go in the same format under ``.skillbook/`` instead (the
lock entry and origin gain a ``source`` object): a ClawHub client that found them in
``.clawhub/lock.json`` would "update" them from the registry by name, replacing a
git checkout with whatever the registry holds under that slug.

A lock file that exists but is not a version-1 lock is an error for writers
(``registry.lock-malformed``): rewriting it would drop every entry it holds.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from skillbook.base.js import js_key_order
from skillbook.distribution.registry import RegistryError

__all__ = [
    "CLAWHUB_DIR",
    "LEGACY_DIR",
    "SKILLBOOK_DIR",
    "LockFile",
    "Origin",
    "read_json",
    "read_lock",
    "read_origin",
    "write_json_atomic",
    "write_lock",
    "write_origin",
]

CLAWHUB_DIR: Final = ".clawhub"
LEGACY_DIR: Final = ".clawdhub"
#: Where skillbook keeps what ClawHub clients must not see (non-registry sources,
#: per-file manifests, the install journal).
SKILLBOOK_DIR: Final = ".skillbook"
LOCK_NAME: Final = "lock.json"
ORIGIN_NAME: Final = "origin.json"


def _js_ordered(value: Any) -> Any:
    """JavaScript's key order (array-index keys first) at every level."""
    if isinstance(value, dict):
        return {k: _js_ordered(v) for k, v in js_key_order(value).items()}
    if isinstance(value, list):
        return [_js_ordered(v) for v in value]
    return value


def dumps(value: Any) -> str:
    """``JSON.stringify(value, null, 2) + "\\n"``."""
    return json.dumps(_js_ordered(value), indent=2, ensure_ascii=False) + "\n"


def write_json_atomic(path: Path, value: Any, *, mode: int = 0o666) -> None:
    """Write ``value`` to ``path`` through a temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    data = dumps(value).encode("utf-8", "surrogatepass")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), mode)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def read_json(path: Path) -> Any:
    """The JSON at ``path``; raises OSError (absent, unreadable) or ValueError (not JSON)."""
    return json.loads(path.read_bytes().decode("utf-8"))


@dataclass(slots=True)
class LockFile:
    """``{"version": 1, "skills": {key: entry}}``; entries keep every key they had."""

    #: Where it is written (``<workdir>/.clawhub/lock.json`` or ``.skillbook/lock.json``).
    path: Path
    skills: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The file it was read from (the legacy one, or None when there was none).
    read_from: Path | None = None

    def to_json(self) -> dict[str, Any]:
        return {"version": 1, "skills": self.skills}


def _is_lock(raw: Any) -> bool:
    return isinstance(raw, dict) and raw.get("version") == 1 and isinstance(raw.get("skills"), dict)


def read_lock(workdir: Path, *, folder: str = CLAWHUB_DIR, strict: bool = True) -> LockFile:
    """The workdir's lock; the legacy ``.clawdhub`` one when only it exists.

    ``strict``: a lock that exists but is malformed raises ``registry.lock-malformed``
    (writers); otherwise it is read as empty, as OpenClaw 2026.4 reads it.
    """
    target = workdir / folder / LOCK_NAME
    candidates = [target] + ([workdir / LEGACY_DIR / LOCK_NAME] if folder == CLAWHUB_DIR else [])
    for candidate in candidates:
        try:
            raw = read_json(candidate)
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            if strict:
                raise _malformed(candidate, str(exc)) from None
            continue
        if _is_lock(raw):
            skills = {k: dict(v) if isinstance(v, dict) else v for k, v in raw["skills"].items()}
            return LockFile(target, skills, candidate)
        if strict:
            raise _malformed(candidate, "expected version 1 lockfile with skills")
    return LockFile(target)


def _malformed(path: Path, why: str) -> RegistryError:
    return RegistryError(
        "registry.lock-malformed",
        f"Malformed lockfile at {path}: {why}. Repair or restore it before retrying.",
    )


def write_lock(lock: LockFile) -> None:
    write_json_atomic(lock.path, lock.to_json())


def _finite_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True, slots=True)
class Origin:
    """One ``origin.json``: where a skill came from and what was installed."""

    path: Path
    raw: dict[str, Any]

    @property
    def registry(self) -> str | None:
        value = self.raw.get("registry")
        return value if isinstance(value, str) else None

    @property
    def slug(self) -> str:
        return str(self.raw["slug"])

    @property
    def installed_version(self) -> str:
        return str(self.raw["installedVersion"])

    @property
    def installed_at(self) -> int | float:
        value = self.raw["installedAt"]
        assert isinstance(value, int | float)
        return value

    @property
    def owner_handle(self) -> str | None:
        value = self.raw.get("ownerHandle")
        return value if isinstance(value, str) and value else None

    @property
    def fingerprint(self) -> str | None:
        value = self.raw.get("fingerprint")
        return value if isinstance(value, str) and value else None

    @property
    def source(self) -> dict[str, Any] | None:
        """The ``source`` object of a non-registry install (``kind``, ``url``, ``ref``…)."""
        value = self.raw.get("source")
        return value if isinstance(value, dict) else None

    @property
    def kind(self) -> str:
        """``clawhub`` for a registry install, else the source's kind (``git``…)."""
        src = self.source
        return "clawhub" if src is None else str(src.get("kind", "unknown"))

    def to_json(self) -> dict[str, Any]:
        """For ``list``/``info --json``: the kind, where from, the version."""
        out: dict[str, Any] = {"kind": self.kind, "version": self.installed_version}
        if self.source is None:
            out.update(registry=self.registry, slug=self.slug)
            if self.owner_handle:
                out["ownerHandle"] = self.owner_handle
        else:
            out["source"] = self.source
        out["fingerprint"] = self.fingerprint
        out["originFile"] = str(self.path)
        return out

    @property
    def legacy(self) -> bool:
        return self.path.parent.name == LEGACY_DIR

    def describe(self) -> str:
        """One line for ``list``/``info``: ``clawhub <registry> <slug>@<version>``, ``git …``."""
        src = self.source
        if src is None:
            owner = f"@{self.owner_handle}/" if self.owner_handle else ""
            return f"{self.registry} {owner}{self.slug}@{self.installed_version}"
        kind = str(src.get("kind", "?"))
        where = str(src.get("url") or src.get("path") or "")
        sub = f" {src['subpath']}" if src.get("subpath") else ""
        ref = f"@{src['ref']}" if src.get("ref") else ""
        return f"{kind} {where}{sub}{ref} ({self.installed_version})"


def _is_origin(raw: Any, *, registry: bool) -> bool:
    if not isinstance(raw, dict) or raw.get("version") != 1:
        return False
    if registry and not (isinstance(raw.get("registry"), str) and raw["registry"]):
        return False
    if not registry and not isinstance(raw.get("source"), dict):
        return False
    return (
        isinstance(raw.get("slug"), str)
        and bool(raw["slug"])
        and isinstance(raw.get("installedVersion"), str)
        and bool(raw["installedVersion"])
        and _finite_number(raw.get("installedAt"))
    )


def read_origin(skill_dir: Path, *, folder: str = CLAWHUB_DIR) -> Origin | None:
    """The skill's valid ``origin.json`` (legacy ``.clawdhub`` read too), or None."""
    names = [folder] + ([LEGACY_DIR] if folder == CLAWHUB_DIR else [])
    for name in names:
        candidate = skill_dir / name / ORIGIN_NAME
        try:
            raw = read_json(candidate)
        except (OSError, ValueError):
            continue
        if _is_origin(raw, registry=folder == CLAWHUB_DIR):
            return Origin(candidate, raw)
    return None


def write_origin(skill_dir: Path, value: dict[str, Any], *, folder: str = CLAWHUB_DIR) -> Path:
    path = skill_dir / folder / ORIGIN_NAME
    write_json_atomic(path, value)
    return path
