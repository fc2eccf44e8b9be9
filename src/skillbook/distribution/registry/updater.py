"""``skillbook update``: bring tracked skills to their source's newest version, and never
overwrite a local edit silently.

Input: an :class:`~skillbook.distribution.registry.installer.Installer`, a name or ``all``, and
``force``. Output: one :class:`UpdateResult` per skill, with OpenClaw's messages
(``Updated <slug>: <prev or unknown> -> <ver>``, ``<slug> already at <ver>``,
``Skill "<slug>" is not tracked as a ClawHub install.``, ``No tracked ClawHub skills to
update.``). Each skill is updated on its own: a failure is reported and the rest go on.
A pinned skill (:mod:`skillbook.distribution.registry.pins`) is skipped by ``--all`` and refused by
name, as the ``clawhub`` CLI does.

Beyond OpenClaw (which always re-downloads and overwrites): the folder is compared
with its recorded fingerprint first. A skill edited since it was installed is not
touched without ``force`` (the result names the files); one recorded without a
fingerprint (installed by OpenClaw) is checked with the registry's ``/resolve`` and
refused without ``force`` when the registry cannot vouch for it. A clean skill whose
version is current is not downloaded again. A registry skill is updated from the
registry its ``origin.json`` names; ``installedAt`` is kept, as the ``clawhub`` CLI keeps it.

A refused registry skill comes with the version available and two unified diffs: the
local edit (the installed version, downloaded again, against the folder) and what the
new version would change (installed against available); when either cannot be
fetched, a warning says why and the refusal stands. ``force`` over an edited skill
first keeps the folder as a backup (:mod:`skillbook.distribution.registry.backups`;
``skillbook restore NAME`` brings it back).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from skillbook.distribution.registry import RegistryError, api
from skillbook.distribution.registry.backups import make_backup, tree_diff
from skillbook.distribution.registry.installer import Installer, InstallOptions
from skillbook.distribution.registry.lockfile import CLAWHUB_DIR
from skillbook.distribution.registry.pins import is_pinned, pin_reason, pinned_error
from skillbook.distribution.registry.refs import (
    SKILLS_SH_PREFIX,
    FolderRef,
    GitRef,
    RegistryRef,
    normalize_owner,
)
from skillbook.distribution.registry.skillfiles import list_skill_files
from skillbook.distribution.registry.staging import Staged, stage_archive, stage_folder, stage_git
from skillbook.distribution.registry.tracked import (
    Drift,
    Tracked,
    drift,
    find_tracked,
    list_tracked,
)
from skillbook.distribution.swap import remove_tree

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
    #: Refused over a local edit: the version the source has now, the edit (installed
    #: version -> the folder) and what that version changes (installed -> available),
    #: as unified diffs (None: not known).
    available: str | None = None
    local_diff: str | None = None
    update_diff: str | None = None
    #: ``force`` replaced an edited folder: the backup it was kept as.
    backup: str | None = None

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
        if self.available is not None:
            out["available"] = self.available
        if self.local_diff is not None:
            out["localDiff"] = self.local_diff
        if self.update_diff is not None:
            out["updateDiff"] = self.update_diff
        if self.backup is not None:
            out["backup"] = self.backup
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


@dataclass(frozen=True, slots=True)
class _Shown:
    """What a refusal shows: the version available and the two diffs."""

    available: str | None = None
    local_diff: str | None = None
    update_diff: str | None = None
    warnings: tuple[str, ...] = ()


def _refused(item: Tracked, state: Drift, shown: _Shown | None = None) -> UpdateResult:
    shown = shown or _Shown()
    to = f" to {shown.available}" if shown.available else ""
    if state.state == "modified":
        message = (
            f'Skill "{item.name}" has local changes ({state.summary()}); updating{to} would '
            "overwrite them. Re-run with --force to update anyway (your version is kept: "
            f"`skillbook restore {item.name}` brings it back)."
        )
    else:
        message = (
            f'Skill "{item.name}" was installed without a content fingerprint, so local '
            f"changes cannot be detected. Re-run with --force to replace it{to} (the folder "
            f"is kept: `skillbook restore {item.name}` brings it back)."
        )
    return UpdateResult(
        item.name,
        False,
        message,
        previous=item.version,
        code="registry.local-changes",
        drift=state,
        warnings=shown.warnings,
        available=shown.available,
        local_diff=shown.local_diff,
        update_diff=shown.update_diff,
    )


def _registry_shown(
    installer: Installer,
    item: Tracked,
    ref: RegistryRef,
    options: InstallOptions,
    registry: str | None,
    latest: str | None,
) -> _Shown:
    """Download the installed version and ``latest`` to diff them with the folder."""
    previous = item.version
    if previous is None:
        return _Shown(latest, warnings=(f"{item.name}: no installed version recorded to diff",))
    label = f"{item.name}@{previous}"
    try:
        installed = installer.stage(ref, replace(options, version=previous), registry=registry)[0]
    except RegistryError as exc:
        why = f"{item.name}: cannot show the local edit ({label}: {exc.message})"
        return _Shown(latest, warnings=(why,))
    try:
        target = installer.workdir.target(item.name)
        local = tree_diff(installed.path, target, old_label=label, new_label=item.name)
        if latest is None or latest == previous:
            return _Shown(latest, local, "" if latest == previous else None)
        try:
            new = installer.stage(ref, replace(options, version=latest), registry=registry)[0]
        except RegistryError as exc:
            why = f"{item.name}: cannot show what {latest} changes ({exc.message})"
            return _Shown(latest, local, warnings=(why,))
        try:
            update = tree_diff(
                installed.path, new.path, old_label=label, new_label=f"{item.name}@{latest}"
            )
        finally:
            remove_tree(new.path)
        return _Shown(latest, local, update)
    finally:
        remove_tree(installed.path)


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
    reference = _reference(item)
    if reference is not None:
        ref = RegistryRef(slug, reference=reference)
    else:
        ref = RegistryRef(slug, owner if owner and item.key.startswith("@") else None)
    try:
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
    except RegistryError as exc:
        if state.state != "modified" or options.force:
            raise
        # The edit is known without the registry: refuse as before, saying what is missing.
        why = f"{item.name}: cannot ask the registry for the new version ({exc.message})"
        return _refused(item, state, _Shown(warnings=(why,)))
    previous = item.version
    if state.state in ("modified", "unknown") and not options.force:
        shown = _registry_shown(installer, item, ref, options, registry, latest)
        return _refused(item, state, shown)
    if state.state == "clean" and latest is not None and latest == previous and not options.force:
        shown_version = _short(latest, "clawhub")
        return UpdateResult(
            item.name, True, f"{item.name} already at {shown_version}", previous, latest
        )
    staged = installer.stage(ref, options, registry=registry)[0]
    staged.name, staged.key = item.name, item.key
    return _commit(installer, item, staged, options, previous, state)


def _commit(
    installer: Installer,
    item: Tracked,
    staged: Staged,
    options: InstallOptions,
    previous: str | None,
    state: Drift,
) -> UpdateResult:
    backup = None
    if state.state in ("modified", "unknown"):
        # Only --force gets here with an edit: keep it before it is replaced.
        backup = make_backup(
            installer.workdir,
            item.name,
            folder=item.folder,
            key=item.key,
            entry=item.entry,
            version=previous,
            reason="update --force",
        )
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
        backup=backup.id if backup is not None else None,
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
        from skillbook.distribution.registry.refs import ArchiveRef

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
    return _commit(installer, item, staged, options, previous, state)
