"""``skillbook remove``: delete an installed skill and its lock entry, crash-safely.

Input: an installer's :class:`~skillbook.distribution.registry.workdir.Workdir` and a name. Output:
the removed folder, or ``Skill "<name>" is not tracked as a ClawHub install.``: only
skills that ``install`` (or OpenClaw, or the ``clawhub`` CLI) recorded are removed, never
a folder the user made. The folder is renamed aside and the lock entry dropped through
the workdir's journal, so a ``kill -9`` leaves the skill installed and tracked, or gone
and untracked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillbook.distribution.registry.tracked import Drift, drift, find_tracked
from skillbook.distribution.registry.workdir import Workdir

__all__ = ["Removed", "remove_skill"]


@dataclass(frozen=True, slots=True)
class Removed:
    name: str
    target: Path
    kind: str
    version: str | None
    #: The local edits discarded with it (``modified``), for the record.
    drift: Drift

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": True,
            "slug": self.name,
            "kind": self.kind,
            "version": self.version,
            "targetDir": str(self.target),
            "drift": self.drift.to_json(),
        }


def remove_skill(workdir: Workdir, name: str) -> Removed:
    with workdir.locked():
        item = find_tracked(workdir, name)
        state = drift(workdir, item)
        workdir.drop(item.name, folder=item.folder, key=item.key)
        return Removed(item.name, workdir.target(item.name), item.kind, item.version, state)
