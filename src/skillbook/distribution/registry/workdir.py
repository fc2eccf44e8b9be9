"""Where installed skills live, and how a change to one is made crash-safe.

Input: a workdir (a workspace; the state dir with ``--global``). Output: its skills
folder (``<workdir>/skills/<name>``, as OpenClaw installs them), its lock files, and
:meth:`Workdir.transaction`, which changes one skill folder and its lock entry so that
a ``kill -9`` at any moment leaves the old state or the new one:

1. the new tree is built beside the target (``.<name>.tmp-XXXXXXXX``) with its
   ``origin.json`` and a manifest naming the transaction inside;
2. a journal (``skills/.<name>.journal.json``) records the lock entry to write;
3. the tree is swapped in (:func:`skillbook.distribution.swap.replace_tree`: one
   ``renameat2`` exchange where the kernel has it);
4. the lock is rewritten (atomically) and the journal removed.

Every command that changes or verifies a workdir first takes its lock (``flock`` on
the skills folder) and finishes or drops what a killed run left: a journal whose tree
is in place (its manifest names the journal's transaction) is applied, any
other is dropped, and the swap's leftovers are repaired or removed.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote, unquote

from skillbook.base.locks import folder_lock
from skillbook.distribution.registry import RegistryError
from skillbook.distribution.registry.lockfile import (
    CLAWHUB_DIR,
    SKILLBOOK_DIR,
    LockFile,
    read_json,
    read_lock,
    write_json_atomic,
    write_lock,
)
from skillbook.distribution.swap import recover, replace_tree

__all__ = ["MANIFEST_NAME", "Workdir"]

MANIFEST_NAME: Final = "manifest.json"
_JOURNAL: Final = re.compile(r"^\.(?P<name>.+)\.journal\.json$")
_LEFTOVER: Final = re.compile(r"^\.(?P<name>.+)\.(tmp|old|new)-[a-z0-9]{8}$")
#: Lock-entry keys only the ``clawhub`` CLI writes; an install keeps them (as the CLI does).
_KEPT_KEYS: Final = ("pinned", "pinReason")


@dataclass(frozen=True, slots=True)
class Workdir:
    root: Path

    @property
    def skills_dir(self) -> Path:
        return self.root / "skills"

    def target(self, name: str) -> Path:
        return self.skills_dir / name

    def lock(self, folder: str = CLAWHUB_DIR, *, strict: bool = True) -> LockFile:
        return read_lock(self.root, folder=folder, strict=strict)

    def _journal(self, name: str) -> Path:
        # ``@owner/slug`` (the clawhub CLI's owner folders) is one file name here.
        return self.skills_dir / f".{quote(name, safe='@')}.journal.json"

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the workdir's lock and repair what a killed run left."""
        try:
            self.skills_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            # A file, FIFO or looping link named `skills` is the user's, not ours to
            # replace; every registry command stopped here with a traceback.
            raise RegistryError(
                "registry.workdir-unusable",
                f"cannot use {self.skills_dir} as the skills folder: {exc.strerror or exc}",
            ) from exc
        with folder_lock(self.skills_dir):
            self.recover()
            yield

    def recover(self) -> None:
        try:
            names = os.listdir(self.skills_dir)
        except FileNotFoundError:
            return
        for entry in sorted(names):
            match = _JOURNAL.match(entry)
            if match is not None:
                self._replay(unquote(match.group("name")))
        for entry in sorted(os.listdir(self.skills_dir)):
            match = _LEFTOVER.match(entry)
            if match is not None:
                recover(self.target(match.group("name")))

    def _replay(self, name: str) -> None:
        path = self._journal(name)
        try:
            record = read_json(path)
        except (OSError, ValueError):
            path.unlink(missing_ok=True)
            return
        if isinstance(record, dict):
            recover(self.target(name))
            if record.get("op") == "put":
                done = _transaction_of(self.target(name)) == record.get("transaction")
            else:
                done = not os.path.lexists(self.target(name))
            if done:
                self._apply(record)
        path.unlink(missing_ok=True)

    def _apply(self, record: dict[str, Any]) -> None:
        lock = self.lock(str(record.get("folder", CLAWHUB_DIR)))
        key = str(record["key"])
        previous = lock.skills.get(key)
        if record.get("op") == "put":
            entry = dict(record["entry"])
            if isinstance(previous, dict):
                entry.update({k: previous[k] for k in _KEPT_KEYS if k in previous})
            lock.skills[key] = entry
        elif key in lock.skills:
            del lock.skills[key]
        else:
            return
        write_lock(lock)

    def put(
        self,
        name: str,
        staged: Path,
        *,
        folder: str,
        key: str,
        entry: dict[str, Any],
        transaction: str,
    ) -> None:
        """Swap ``staged`` in as ``skills/<name>`` and record ``entry`` under ``key``
        (call under :meth:`locked`; ``staged`` holds its ``origin.json`` and a manifest
        naming ``transaction`` already)."""
        record = {"op": "put", "folder": folder, "key": key, "entry": entry}
        record["transaction"] = transaction
        write_json_atomic(self._journal(name), record)
        replace_tree(staged, self.target(name), on_cleanup_error=lambda _p, _e: None)
        self._apply(record)
        self._journal(name).unlink(missing_ok=True)

    def drop(self, name: str, *, folder: str, key: str) -> None:
        """Remove ``skills/<name>`` and its lock entry (call under :meth:`locked`)."""
        from skillbook.distribution.swap import make_staging

        record = {"op": "remove", "folder": folder, "key": key}
        write_json_atomic(self._journal(name), record)
        target = self.target(name)
        if os.path.lexists(target):
            aside = make_staging(target)
            os.rename(target, aside)  # over the empty staging folder: one atomic step
        self._apply(record)
        self._journal(name).unlink(missing_ok=True)
        recover(target)


def _transaction_of(target: Path) -> Any:
    """The transaction id in a tree's manifest (which install wrote it), or None."""
    try:
        manifest = read_json(target / SKILLBOOK_DIR / MANIFEST_NAME)
    except (OSError, ValueError):
        return None
    return manifest.get("transaction") if isinstance(manifest, dict) else None
