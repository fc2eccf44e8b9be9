"""``skillbook verify``: is every installed skill still what was installed?

Input: a :class:`~skillbook.registry.workdir.Workdir` (and optionally names). Output:
one :class:`Verified` per tracked skill: ``clean`` (its files hash to the recorded
fingerprint), ``modified`` (with the files added, removed or changed where the
manifest allows), ``missing`` (tracked but the folder is gone) or ``unknown`` (no
fingerprint was recorded, e.g. installed by OpenClaw 2026.4). Reads only; it takes the
workdir's lock so that a half-done install is finished or dropped first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skillbook.registry.tracked import Drift, Tracked, drift, find_tracked, list_tracked
from skillbook.registry.workdir import Workdir

__all__ = ["Verified", "verify_skills"]


@dataclass(frozen=True, slots=True)
class Verified:
    item: Tracked
    drift: Drift

    @property
    def ok(self) -> bool:
        return self.drift.state == "clean"

    def line(self) -> str:
        item, state = self.item, self.drift
        version = item.version or "?"
        shown = version[:12] if item.kind == "git" else version
        head = f"{item.name} ({item.kind} {shown})"
        if state.state == "clean":
            return f"✓ {head}: unchanged"
        if state.state == "missing":
            return f"✗ {head}: folder missing"
        if state.state == "unknown":
            return f"? {head}: no fingerprint recorded; changes cannot be detected"
        return f"✗ {head}: modified ({state.summary()})"

    def to_json(self) -> dict[str, Any]:
        return {
            "slug": self.item.name,
            "kind": self.item.kind,
            "version": self.item.version,
            "ok": self.ok,
            **self.drift.to_json(),
        }


def verify_skills(workdir: Workdir, names: tuple[str, ...] = ()) -> list[Verified]:
    with workdir.locked():
        items = [find_tracked(workdir, n) for n in names] if names else list_tracked(workdir)
        return [Verified(item, drift(workdir, item)) for item in items]
