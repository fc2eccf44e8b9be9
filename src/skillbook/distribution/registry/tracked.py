"""The skills a workdir tracks: lock entries and origins, and their drift.

Input: a :class:`~skillbook.distribution.registry.workdir.Workdir`. Output: :class:`Tracked` values
(name, which lock, the lock entry, the folder's ``origin.json``) and
:func:`drift`: how the folder compares with what was installed, from the recorded
fingerprint (``origin.json``'s, which the ``clawhub`` CLI also writes) and, where
skillbook installed it, the per-file manifest that names the files changed; a skill
OpenClaw 2026.9 installed (no CLI fingerprint) is compared by its ``fileTreeSha256``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal

from skillbook.distribution.registry import RegistryError
from skillbook.distribution.registry.lockfile import (
    CLAWHUB_DIR,
    SKILLBOOK_DIR,
    Origin,
    read_json,
    read_origin,
)
from skillbook.distribution.registry.refs import normalize_tracked_slug
from skillbook.distribution.registry.skillfiles import list_skill_files, tree_sha256
from skillbook.distribution.registry.workdir import MANIFEST_NAME, Workdir

__all__ = ["Drift", "Tracked", "drift", "find_tracked", "list_tracked"]


@dataclass(frozen=True, slots=True)
class Tracked:
    name: str
    #: ``.clawhub`` (a registry install) or ``.skillbook`` (git, folder, archive).
    folder: str
    key: str
    entry: dict[str, Any] | None
    origin: Origin | None

    @property
    def kind(self) -> str:
        if self.folder == CLAWHUB_DIR:
            return "clawhub"
        source = self.origin.source if self.origin is not None else None
        if source is None and self.entry is not None and isinstance(self.entry.get("source"), dict):
            source = self.entry["source"]
        return str((source or {}).get("kind", "unknown"))

    @property
    def registry(self) -> str | None:
        """The registry it was installed from: its ``origin.json``'s, else the lock
        entry's (OpenClaw 2026.9 records it in both); ``update`` goes back there."""
        if self.origin is not None and self.origin.registry:
            return self.origin.registry
        value = (self.entry or {}).get("registry") if self.folder == CLAWHUB_DIR else None
        return value if isinstance(value, str) and value.strip() else None

    @property
    def version(self) -> str | None:
        if self.origin is not None:
            return self.origin.installed_version
        value = (self.entry or {}).get("version")
        return value if isinstance(value, str) else None


def _tracked(workdir: Workdir, folder: str, key: str, entry: Any) -> Tracked:
    name = key.rsplit("/", 1)[-1] if folder == CLAWHUB_DIR else key
    if folder == CLAWHUB_DIR and key.startswith("@") and workdir.target(key).is_dir():
        # The clawhub CLI installs ``@owner/slug`` into skills/@owner/slug.
        name = key
    origin = read_origin(workdir.target(name), folder=folder)
    return Tracked(name, folder, key, entry if isinstance(entry, dict) else None, origin)


def list_tracked(workdir: Workdir, *, strict: bool = True) -> list[Tracked]:
    """Every tracked skill: the registry lock's entries, then skillbook's."""
    out = []
    for folder in (CLAWHUB_DIR, SKILLBOOK_DIR):
        lock = workdir.lock(folder, strict=strict)
        out += [_tracked(workdir, folder, key, entry) for key, entry in lock.skills.items()]
    return out


def find_tracked(workdir: Workdir, raw: str) -> Tracked:
    """The tracked skill ``raw`` names (a lock key, or a folder with an origin);
    OpenClaw's ``Skill "<slug>" is not tracked as a ClawHub install.`` otherwise."""
    name = normalize_tracked_slug(raw.lstrip("@").rsplit("/", 1)[-1])
    for item in list_tracked(workdir):
        if raw in (item.key, item.name) or name == item.name:
            return item
    for folder in (CLAWHUB_DIR, SKILLBOOK_DIR):
        origin = read_origin(workdir.target(name), folder=folder)
        if origin is not None:
            return Tracked(name, folder, name, None, origin)
    raise RegistryError(
        "registry.not-tracked", f'Skill "{raw.strip()}" is not tracked as a ClawHub install.'
    )


@dataclass(frozen=True, slots=True)
class Drift:
    """How an installed folder compares with what was installed."""

    state: Literal["clean", "modified", "missing", "unknown"]
    fingerprint: str | None = None
    recorded: str | None = None
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()

    def summary(self) -> str:
        bits = [
            f"{len(v)} {k}"
            for k, v in (
                ("changed", self.changed),
                ("added", self.added),
                ("removed", self.removed),
            )
            if v
        ]
        files = ", ".join([*self.changed, *self.added, *self.removed][:5])
        return (", ".join(bits) + f": {files}") if bits else "files differ"

    def to_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "fingerprint": self.fingerprint,
            "recorded": self.recorded,
            "added": list(self.added),
            "removed": list(self.removed),
            "changed": list(self.changed),
        }


def _manifest(target: Any) -> dict[str, Any] | None:
    try:
        raw = read_json(target / SKILLBOOK_DIR / MANIFEST_NAME)
    except (OSError, ValueError):
        return None
    return raw if isinstance(raw, dict) else None


def _tree_drift(target: Any, item: Tracked, current: str | None) -> Drift:
    """No CLI fingerprint: OpenClaw 2026.9's tree digest, when it recorded one."""
    recorded = item.origin.raw.get("fileTreeSha256") if item.origin is not None else None
    if not isinstance(recorded, str):
        recorded = (item.entry or {}).get("fileTreeSha256")
    if not isinstance(recorded, str) or not recorded:
        return Drift("unknown", current)
    digest = tree_sha256(target)
    return Drift("clean" if digest == recorded else "modified", digest, recorded)


def drift(workdir: Workdir, item: Tracked) -> Drift:
    target = workdir.target(item.name)
    if not os.path.isdir(target):
        return Drift("missing")
    files = list_skill_files(target)
    current = files.fingerprint
    manifest = _manifest(target)
    recorded = item.origin.fingerprint if item.origin is not None else None
    if recorded is None and manifest is not None and isinstance(manifest.get("fingerprint"), str):
        recorded = manifest["fingerprint"]
    if recorded is None:
        return _tree_drift(target, item, current)
    if current == recorded:
        return Drift("clean", current, recorded)
    hashes = manifest.get("files") if manifest is not None else None
    if (
        isinstance(hashes, dict)
        and manifest is not None
        and manifest.get("fingerprint") == recorded
    ):
        added, removed, changed = files.diff({str(k): str(v) for k, v in hashes.items()})
        return Drift("modified", current, recorded, tuple(added), tuple(removed), tuple(changed))
    return Drift("modified", current, recorded)
