"""``skillbook update``: bring tracked skills to their source's newest version, and never
overwrite a local edit silently.

Input: an :class:`~skillbook.registry.installer.Installer`, a name or ``all``, and
``force``. Output: one :class:`UpdateResult` per skill, with OpenClaw's messages
(``Updated <slug>: <prev or unknown> -> <ver>``, ``<slug> already at <ver>``,
``Skill "<slug>" is not tracked as a ClawHub install.``, ``No tracked ClawHub skills to
update.``). Each skill is updated on its own: a failure is reported and the rest go on.
A pinned skill (:mod:`skillbook.registry.pins`) is skipped by ``--all`` and refused by
name, as the ``clawhub`` CLI does.

Beyond OpenClaw (which always re-downloads and overwrites): the folder is compared
with its recorded fingerprint first. A skill edited since it was installed is not
touched without ``force`` (the result names the files); one recorded without a
fingerprint (installed by OpenClaw) is checked with the registry's ``/resolve`` and
refused without ``force`` when the registry cannot vouch for it. A clean skill whose
version is current is not downloaded again. A registry skill is updated from the
registry its ``origin.json`` names; ``installedAt`` is kept, as the ``clawhub`` CLI keeps it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from skillbook.registry import api
from skillbook.registry.errors import RegistryError
from skillbook.registry.installer import Installer, InstallOptions
from skillbook.registry.lockfile import CLAWHUB_DIR
from skillbook.registry.pins import is_pinned, pin_reason, pinned_error
from skillbook.registry.refs import (
    SKILLS_SH_PREFIX,
    FolderRef,
    GitRef,
    RegistryRef,
    normalize_owner,
)
from skillbook.registry.skillfiles import list_skill_files
from skillbook.registry.staging import Staged, stage_archive, stage_folder, stage_git
from skillbook.registry.tracked import Drift, Tracked, drift, find_tracked, list_tracked
from skillbook.sync.swap import remove_tree

__all__ = ["NOTHING_TRACKED", "UpdateResult", "update_skills"]

NOTHING_TRACKED = "No tracked ClawHub skills to update."


@dataclass(frozen=True, slots=True)
class UpdateResult:
    name: str
    ok: bool
    message: str
    previous: str | None = None
    version: str | None = None
    changed: bool = False
    code: str | None = None
    drift: Drift | None = None
    warnings: tuple[str, ...] = ()
    #: A pinned skill that ``--all`` left alone.
    skipped: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ok": self.ok,
            "slug": self.name,
            "message": self.message,
            "previousVersion": self.previous,
            "version": self.version,
            "changed": self.changed,
            "warnings": list(self.warnings),
        }
        if self.code is not None:
            out["code"] = self.code
        if self.drift is not None:
            out["drift"] = self.drift.to_json()
        if self.skipped:
            out["skipped"] = True
        return out


def update_skills(
    installer: Installer, name: str | None, options: InstallOptions
) -> list[UpdateResult]:
    """Update ``name`` (None: every tracked skill); see the module docstring."""
    workdir = installer.workdir
    with workdir.locked(), installer.session():
        if name is None:
            targets: list[Tracked | RegistryError] = list(list_tracked(workdir))
        else:
            try:
                targets = [find_tracked(workdir, name)]
            except RegistryError as exc:
                targets = [exc]
        results = []
        for item in targets:
            if isinstance(item, RegistryError):
                results.append(UpdateResult(name or "", False, item.message, code=item.code))
                continue
            if is_pinned(item.entry):
                results.append(_pinned(item, every=name is None))
                continue
            try:
                results.append(_update_one(installer, item, options))
            except RegistryError as exc:
                results.append(UpdateResult(item.name, False, exc.message, code=exc.code))
        return results


def _pinned(item: Tracked, *, every: bool) -> UpdateResult:
    """``--all`` skips a pinned skill; naming it is refused (the ``clawhub`` CLI's rule)."""
    if every:
        why = pin_reason(item.entry)
        message = f"{item.name} is pinned{f' ({why})' if why else ''}; skipped"
        version = item.version
        return UpdateResult(
            item.name, True, message, version, version, code="registry.pinned", skipped=True
        )
    error = pinned_error(item.name, item.entry)
    return UpdateResult(item.name, False, error.message, item.version, code=error.code)


def _refused(item: Tracked, state: Drift) -> UpdateResult:
    if state.state == "modified":
        message = (
            f'Skill "{item.name}" has local changes ({state.summary()}); updating would '
            "overwrite them. Run `skillbook verify` to see them, or re-run with --force."
        )
    else:
        message = (
            f'Skill "{item.name}" was installed without a content fingerprint, so local '
            "changes cannot be detected. Re-run with --force to replace it."
        )
    return UpdateResult(
        item.name, False, message, previous=item.version, code="registry.local-changes", drift=state
    )


def _update_one(installer: Installer, item: Tracked, options: InstallOptions) -> UpdateResult:
    state = drift(installer.workdir, item)
    if item.folder == CLAWHUB_DIR:
        return _update_registry(installer, item, state, options)
    return _update_source(installer, item, state, options)


def _owner(item: Tracked) -> str | None:
    raw = (item.origin.owner_handle if item.origin else None) or (item.entry or {}).get(
        "ownerHandle"
    )
    try:
        return normalize_owner(raw) if isinstance(raw, str) and raw else None
    except RegistryError:
        return None


def _reference(item: Tracked) -> str | None:
    """The skills.sh reference a skill was installed from (OpenClaw 2026.9's record)."""
    raw = item.origin.raw.get("requestedReference") if item.origin is not None else None
    raw = raw or (item.entry or {}).get("requestedReference")
    return raw if isinstance(raw, str) and raw.startswith(SKILLS_SH_PREFIX) else None


def _update_registry(
    installer: Installer, item: Tracked, state: Drift, options: InstallOptions
) -> UpdateResult:
    registry = item.registry
    slug = item.origin.slug if item.origin is not None else item.name
    owner = _owner(item)
    if state.state == "modified" and not options.force:
        return _refused(item, state)
    reference = _reference(item)
    with installer.client(registry) as client:
        if state.state == "unknown" and state.fingerprint is not None and reference is None:
            resolved = api.resolve_fingerprint(client, slug, state.fingerprint, owner=owner)
            if resolved is not None and resolved.match is not None:
                state = Drift("clean", state.fingerprint, state.fingerprint)
        if reference is not None:
            latest = None
        else:
            detail = api.fetch_detail(client, slug, owner=owner)
            latest = options.version or detail.latest_version
        if latest is None and state.state == "clean" and not options.force:
            # No latest version: /install names what is current (a GitHub hand-off's commit).
            latest = api.install_target(client, slug, owner=owner, reference=reference).version
    previous = item.version
    if state.state in ("modified", "unknown") and not options.force:
        return _refused(item, state)
    if state.state == "clean" and latest is not None and latest == previous and not options.force:
        shown = _short(latest, "clawhub")
        return UpdateResult(item.name, True, f"{item.name} already at {shown}", previous, latest)
    if reference is not None:
        ref = RegistryRef(slug, reference=reference)
    else:
        ref = RegistryRef(slug, owner if owner and item.key.startswith("@") else None)
    staged = installer.stage(ref, options, registry=registry)[0]
    staged.name, staged.key = item.name, item.key
    return _commit(installer, item, staged, options, previous)


def _commit(
    installer: Installer,
    item: Tracked,
    staged: Staged,
    options: InstallOptions,
    previous: str | None,
) -> UpdateResult:
    try:
        kept = item.origin.installed_at if item.origin is not None else None
        outcome = installer.commit(
            staged,
            options,
            previous_version=previous,
            installed_at=int(kept) if kept is not None else None,
        )
    finally:
        remove_tree(staged.path)
    shown = outcome.display_version()
    return UpdateResult(
        item.name,
        True,
        f"Updated {item.name}: {_short(previous, outcome.kind) or 'unknown'} -> {shown}",
        previous,
        outcome.version,
        changed=outcome.changed,
        warnings=outcome.warnings,
    )


def _short(version: str | None, kind: str) -> str | None:
    """A commit (git sources, GitHub hand-offs) by its first 12 digits."""
    commit = version is not None and re.fullmatch(r"[0-9a-f]{40}", version) is not None
    return version[:12] if version and (kind == "git" or commit) else version


def _update_source(
    installer: Installer, item: Tracked, state: Drift, options: InstallOptions
) -> UpdateResult:
    source = item.origin.source if item.origin is not None else None
    source = source or (item.entry or {}).get("source")
    if not isinstance(source, dict):
        raise RegistryError("registry.not-tracked", f'Skill "{item.name}" has no recorded source.')
    if state.state in ("modified", "unknown") and not options.force:
        return _refused(item, state)
    ctx = installer.context(options)
    kind = source.get("kind")
    if kind == "git":
        ref = GitRef(str(source["url"]), source.get("subpath"), source.get("ref"))
        staged = stage_git(ctx, ref, names=(), all_skills=False, name=item.name)[0]
    elif kind == "folder":
        staged = stage_folder(ctx, FolderRef(str(source["path"])), name=item.name)
    elif kind == "archive":
        from skillbook.registry.refs import ArchiveRef

        where = source.get("url") or source.get("path")
        staged = stage_archive(ctx, ArchiveRef(str(where)), name=item.name)
    else:
        raise RegistryError(
            "registry.not-tracked", f'Skill "{item.name}" has an unknown source kind.'
        )
    previous = item.version
    new = list_skill_files(staged.path).fingerprint
    if state.state == "clean" and new == state.recorded and not options.force:
        remove_tree(staged.path)
        shown = _short(previous, item.kind)
        return UpdateResult(item.name, True, f"{item.name} already at {shown}", previous, previous)
    return _commit(installer, item, staged, options, previous)
