"""Backups of locally edited skills that ``update --force`` replaced, and ``restore``.

``update --force`` over a skill whose files changed since it was installed keeps the
folder as it was, before the new version goes in, under
``<workdir>/.skillbook/backups/<name>/<id>/`` (``tree/``, the folder with its
``origin.json``, and ``backup.json``: the lock entry, the version, when, why). The
backup is complete before it appears: it is built in a hidden folder beside it and
renamed into place. :func:`restore` brings one back through the same crash-safe swap
as an install (:meth:`skillbook.distribution.registry.workdir.Workdir.put`), after keeping the folder
it replaces as a backup of its own (a restore can be undone the same way), and then
deletes the backup it restored.

Also here: :func:`tree_diff`, the unified diff between two skill folders that
``update`` shows for a local edit and for what a new version would change.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote, unquote

from skillbook.base.fs import read_file_at_most
from skillbook.distribution.registry import RegistryError
from skillbook.distribution.registry.lockfile import SKILLBOOK_DIR, read_json, write_json_atomic
from skillbook.distribution.registry.skillfiles import list_skill_files
from skillbook.distribution.registry.workdir import MANIFEST_NAME, Workdir
from skillbook.distribution.swap import make_staging, remove_tree

__all__ = ["Backup", "list_backups", "make_backup", "restore", "tree_diff"]

BACKUPS: Final = "backups"
RECORD: Final = "backup.json"
TREE: Final = "tree"
#: A file this big (or not UTF-8) is named in a diff, not shown.
MAX_DIFF_BYTES: Final = 256 * 1024
_ID: Final = re.compile(r"^\d{8}T\d{6}\d{3}-[0-9a-f]{6}$")


@dataclass(frozen=True, slots=True)
class Backup:
    """One kept folder: ``id`` sorts by time (newest last)."""

    name: str
    id: str
    path: Path
    version: str | None
    created_at: int
    reason: str
    folder: str
    key: str
    entry: dict[str, Any] | None

    @property
    def tree(self) -> Path:
        return self.path / TREE

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "id": self.id,
            "version": self.version,
            "createdAt": self.created_at,
            "reason": self.reason,
            "path": str(self.path),
        }


def _root(workdir: Workdir, name: str) -> Path:
    return workdir.root / SKILLBOOK_DIR / BACKUPS / quote(name, safe="@")


def make_backup(
    workdir: Workdir,
    name: str,
    *,
    folder: str,
    key: str,
    entry: dict[str, Any] | None,
    version: str | None,
    reason: str,
) -> Backup:
    """Copy ``skills/<name>`` aside as it is now (call under the workdir lock)."""
    source = workdir.target(name)
    now = time.time()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f"{int(now * 1000) % 1000:03d}"
    backup_id = f"{stamp}-{uuid.uuid4().hex[:6]}"
    root = _root(workdir, name)
    root.mkdir(parents=True, exist_ok=True)
    building = root / f".{backup_id}.tmp"
    try:
        shutil.copytree(source, building / TREE, symlinks=True)
        record = {
            "name": name,
            "version": version,
            "createdAt": int(now * 1000),
            "reason": reason,
            "folder": folder,
            "key": key,
            "entry": entry,
        }
        write_json_atomic(building / RECORD, record)
        # Only a complete backup gets a name `list_backups` reads.
        os.rename(building, root / backup_id)
    except BaseException:
        remove_tree(building)
        raise
    return _read(name, root / backup_id)


def _read(name: str, path: Path) -> Backup:
    raw = read_json(path / RECORD)
    if not isinstance(raw, dict):
        raise ValueError("not an object")
    entry = raw.get("entry")
    version = raw.get("version")
    return Backup(
        name=name,
        id=path.name,
        path=path,
        version=version if isinstance(version, str) else None,
        created_at=int(raw.get("createdAt") or 0),
        reason=str(raw.get("reason") or ""),
        folder=str(raw["folder"]),
        key=str(raw["key"]),
        entry=entry if isinstance(entry, dict) else None,
    )


def list_backups(workdir: Workdir, name: str | None = None) -> list[Backup]:
    """The complete backups (of ``name``, else of every skill), oldest first."""
    base = workdir.root / SKILLBOOK_DIR / BACKUPS
    try:
        folders = [base / quote(name, safe="@")] if name else sorted(base.iterdir())
    except FileNotFoundError:
        return []
    found = []
    for folder in folders:
        try:
            entries = sorted(os.listdir(folder))
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            if not _ID.match(entry):
                continue  # a backup being built, or something else
            try:
                found.append(_read(unquote(folder.name), folder / entry))
            except (OSError, ValueError, KeyError):
                continue  # unreadable: not offered
    return sorted(found, key=lambda b: (b.id, b.name))


def restore(
    workdir: Workdir, name: str, backup_id: str | None = None
) -> tuple[Backup, Backup | None]:
    """Put the newest backup of ``name`` (or ``backup_id``) back as ``skills/<name>``.

    Returns the backup restored and the one made of the folder it replaced (None when
    there was none). Call under the workdir lock."""
    backups = list_backups(workdir, name)
    if backup_id is not None:
        backups = [b for b in backups if b.id == backup_id]
    if not backups:
        which = f" {backup_id}" if backup_id else ""
        raise RegistryError(
            "registry.no-backup",
            f'No backup{which} of "{name}". `skillbook restore --list` shows the backups.',
        )
    chosen = backups[-1]
    target = workdir.target(name)
    replaced = None
    if target.is_dir():
        replaced = make_backup(
            workdir,
            name,
            folder=chosen.folder,
            key=chosen.key,
            entry=_current_entry(workdir, chosen),
            version=_installed_version(target, chosen.folder),
            reason=f"restore {chosen.id}",
        )
    staging = make_staging(target)
    try:
        os.rmdir(staging)
        shutil.copytree(chosen.tree, staging, symlinks=True)
        transaction = uuid.uuid4().hex
        _retag(staging, transaction)
        workdir.put(
            name,
            staging,
            folder=chosen.folder,
            key=chosen.key,
            entry=chosen.entry or {},
            transaction=transaction,
        )
    except BaseException:
        remove_tree(staging)
        raise
    remove_tree(chosen.path)
    return chosen, replaced


def _current_entry(workdir: Workdir, backup: Backup) -> dict[str, Any] | None:
    entry = workdir.lock(backup.folder, strict=False).skills.get(backup.key)
    return entry if isinstance(entry, dict) else None


def _installed_version(target: Path, folder: str) -> str | None:
    from skillbook.distribution.registry.lockfile import read_origin

    origin = read_origin(target, folder=folder)
    return origin.installed_version if origin is not None else None


def _retag(tree: Path, transaction: str) -> None:
    """Name ``transaction`` in the tree's manifest (how a killed restore is finished);
    the recorded fingerprint and hashes stay, so an edited folder still shows as edited."""
    path = tree / SKILLBOOK_DIR / MANIFEST_NAME
    try:
        manifest = read_json(path)
    except (OSError, ValueError):
        manifest = None
    if not isinstance(manifest, dict):
        manifest = {"version": 1}
    manifest["transaction"] = transaction
    write_json_atomic(path, manifest)


# ---------------------------------------------------------------------------- diffs


def _text(path: Path) -> list[str] | None:
    try:
        data = read_file_at_most(path, MAX_DIFF_BYTES + 1)
        if len(data) > MAX_DIFF_BYTES:
            return None
        return data.decode("utf-8").splitlines(keepends=True)
    except (OSError, UnicodeDecodeError):
        return None


def tree_diff(old: Path, new: Path, *, old_label: str, new_label: str) -> str:
    """A unified diff from folder ``old`` to folder ``new`` over the skill files (what
    the fingerprint covers: not ``.clawhub``/``.skillbook``). Binary or big files are
    named, not shown. Empty when they hold the same files."""
    before = list_skill_files(old).hashes if old.is_dir() else {}
    after = list_skill_files(new).hashes if new.is_dir() else {}
    out: list[str] = []
    for rel in sorted(set(before) | set(after)):
        if before.get(rel) == after.get(rel):
            continue
        a = _text(old / rel) if rel in before else []
        b = _text(new / rel) if rel in after else []
        a_name = f"{old_label}/{rel}" if rel in before else "/dev/null"
        b_name = f"{new_label}/{rel}" if rel in after else "/dev/null"
        if a is None or b is None:
            out.append(f"Binary or large files {a_name} and {b_name} differ\n")
            continue
        lines = list(difflib.unified_diff(a, b, a_name, b_name))
        out += [
            line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
            for line in lines
        ]
    return "".join(out)
