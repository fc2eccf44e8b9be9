"""``skillbook verify``: is every installed skill still what was installed?

Input: a :class:`~skillbook.distribution.registry.workdir.Workdir` (and optionally names). Output:
one :class:`Verified` per tracked skill: ``clean`` (its files hash to the recorded
fingerprint), ``modified`` (with the files added, removed or changed where the
manifest allows), ``missing`` (tracked but the folder is gone) or ``unknown`` (no
fingerprint was recorded, e.g. installed by OpenClaw 2026.4). Reads only; it takes the
workdir's lock so that a half-done install is finished or dropped first.

With a ``client_for`` (``skillbook verify --remote``), each registry skill is also
checked with its registry's ``GET /api/v1/skills/<slug>/verify`` for the installed
version (clawhub-api.md §3.11, what ``openclaw skills verify`` asks): the envelope is
kept as ``remote`` and the skill fails unless it says ``ok: true`` and ``decision:
"pass"`` (OpenClaw 2026.9's rule); a registry error is kept as ``remote_error``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from skillbook.distribution.registry import RegistryError
from skillbook.distribution.registry.client import RegistryClient
from skillbook.distribution.registry.tracked import (
    Drift,
    Tracked,
    drift,
    find_tracked,
    list_tracked,
)
from skillbook.distribution.registry.workdir import Workdir

__all__ = ["Verified", "verify_skills"]


@dataclass(frozen=True, slots=True)
class Verified:
    item: Tracked
    drift: Drift
    #: The registry's ``/verify`` envelope (``--remote``).
    remote: dict[str, Any] | None = None
    remote_error: str | None = None
    #: The registry asked (its :attr:`~skillbook.distribution.registry.endpoint.Endpoint.label`).
    remote_registry: str | None = None

    @property
    def remote_ok(self) -> bool | None:
        if self.remote_error is not None:
            return False
        if self.remote is None:
            return None
        return self.remote.get("ok") is True and self.remote.get("decision") == "pass"

    @property
    def ok(self) -> bool:
        return self.drift.state == "clean" and self.remote_ok is not False

    def remote_line(self) -> str:
        where = self.remote_registry or "registry"
        if self.remote_error is not None:
            return f"  {where} verify: {self.remote_error}"
        remote = self.remote or {}
        reasons = [str(r) for r in remote.get("reasons") or []]
        decision = str(remote.get("decision") or "?")
        return f"  {where} verify: {decision}" + (f" ({', '.join(reasons)})" if reasons else "")

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
        out = {
            "slug": self.item.name,
            "kind": self.item.kind,
            "version": self.item.version,
            "ok": self.ok,
            **self.drift.to_json(),
        }
        if self.remote is not None or self.remote_error is not None:
            out["remote"] = self.remote
            out["remoteError"] = self.remote_error
            out["remoteRegistry"] = self.remote_registry
        return out


_COMMIT = re.compile(r"^[0-9a-f]{40}$")


def verify_skills(
    workdir: Workdir,
    names: tuple[str, ...] = (),
    *,
    client_for: Callable[[str | None], RegistryClient] | None = None,
) -> list[Verified]:
    with workdir.locked():
        items = [find_tracked(workdir, n) for n in names] if names else list_tracked(workdir)
        out = [Verified(item, drift(workdir, item)) for item in items]
    if client_for is None:
        return out
    return [_remote(v, client_for) if v.item.kind == "clawhub" else v for v in out]


def _remote(verified: Verified, client_for: Callable[[str | None], RegistryClient]) -> Verified:
    from skillbook.distribution.registry.trust import fetch_verification

    item, origin = verified.item, verified.item.origin
    slug = origin.slug if origin is not None else item.name
    owner = (origin.owner_handle if origin is not None else None) or (item.entry or {}).get(
        "ownerHandle"
    )
    version = item.version if item.version and not _COMMIT.match(item.version) else None
    where: str | None = None
    try:
        with client_for(item.registry) as client:
            where = client.endpoint.label
            envelope = fetch_verification(
                client, slug, version=version, owner=owner if isinstance(owner, str) else None
            )
    except RegistryError as exc:
        return Verified(item, verified.drift, remote_error=exc.message, remote_registry=where)
    return Verified(item, verified.drift, remote=envelope, remote_registry=where)
