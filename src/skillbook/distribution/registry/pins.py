"""Pinned skills: ``update`` leaves them alone, ``install --force`` does not replace them.

Input: a :class:`~skillbook.distribution.registry.workdir.Workdir` and a tracked skill's name. Output:
the lock entry rewritten with the ``clawhub`` CLI's fields (``pinned: true`` and
``pinReason`` with a reason; ``unpin`` removes both, clawhub-api.md §5.1), so a pin set by
``clawhub pin`` holds for skillbook and the reverse. The same fields pin a skill from
git, a folder or an archive (``.skillbook/lock.json``). OpenClaw (2026.4 and 2026.9) does
not read them: its ``skills update`` rewrites the entry and drops the pin.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skillbook.distribution.registry import RegistryError
from skillbook.distribution.registry.lockfile import write_lock
from skillbook.distribution.registry.tracked import Tracked, find_tracked
from skillbook.distribution.registry.workdir import Workdir

__all__ = ["Pin", "is_pinned", "pin_reason", "pinned_error", "set_pin"]


@dataclass(frozen=True, slots=True)
class Pin:
    name: str
    pinned: bool
    reason: str | None
    #: Whether the entry changed (pinning a pinned skill with the same reason does not).
    changed: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "slug": self.name,
            "pinned": self.pinned,
            "reason": self.reason,
            "changed": self.changed,
        }


def is_pinned(entry: dict[str, Any] | None) -> bool:
    return bool(entry) and (entry or {}).get("pinned") is True


def pin_reason(entry: dict[str, Any] | None) -> str | None:
    reason = (entry or {}).get("pinReason")
    return reason if isinstance(reason, str) and reason.strip() else None


def pinned_error(name: str, entry: dict[str, Any] | None) -> RegistryError:
    """The ``clawhub`` CLI's refusal for a pinned skill, with skillbook's command."""
    why = pin_reason(entry)
    return RegistryError(
        "registry.pinned",
        f'skill "{name}" is pinned{f" ({why})" if why else ""}; run `skillbook unpin {name}` first',
    )


def set_pin(workdir: Workdir, name: str, *, pinned: bool, reason: str | None = None) -> Pin:
    """Pin (with an optional reason) or unpin the tracked skill ``name``."""
    with workdir.locked():
        item: Tracked = find_tracked(workdir, name)
        lock = workdir.lock(item.folder)
        entry = lock.skills.get(item.key)
        if not isinstance(entry, dict):
            raise RegistryError(
                "registry.not-tracked",
                f'Skill "{item.name}" has no lock entry to pin; reinstall it with skillbook install',
            )
        before = dict(entry)
        entry.pop("pinned", None)
        entry.pop("pinReason", None)
        text = reason.strip() if reason else None
        if pinned:
            entry["pinned"] = True
            if text:
                entry["pinReason"] = text
        if entry != before:
            write_lock(lock)
        return Pin(item.name, pinned, text if pinned else None, entry != before)
