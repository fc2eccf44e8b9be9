"""``update --for``: fetch a skill again from the source its lock entry records and put
the new version where the agents read it, never over a local edit without ``force``.

Input: a skill name (or None: every entry of the lock), the agents, the scope (the
project's ``skills-lock.json``, or with ``--global`` the ``skills`` CLI's global lock),
``force`` and a :class:`~skillbook.distribution.agents.sources.Fetcher`. Output: one
:class:`Updated` per skill. Entries either tool wrote are understood: ``local``,
``github`` (``owner/repo``, fetched from the configured git base), ``git``/``gitlab``
(``sourceUrl``), and skillbook's ``clawhub`` and ``archive``; with ``ref`` and the
skill's folder from ``skillPath``. Other kinds (``well-known``, ``node_modules``) are
refused with ``agents.update-unsupported``.

An agent's folder is edited when its hash, taken as the source looked
(:func:`_as_source`: the lock's ``computedHash``, globally ``skillFolderHash``, a git
tree id for GitHub sources, covers the source, not the copy), differs from the lock's
and it is not already the new version: then nothing is replaced without ``force`` and
the result carries the diff from the folder to the new version. The new version is scanned
first; each folder (a copy, or the shared ``.agents/skills`` copy behind links) is built
beside and swapped in, then the lock is replaced in one rename, so a ``kill -9`` leaves
each folder old or new and an interrupted update is finished by the next one (a folder
already at the new version counts as unedited).
"""

from __future__ import annotations

import os
import posixpath
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from skillbook.base.fs import is_path_inside
from skillbook.distribution.agents import AgentsError
from skillbook.distribution.agents.globallock import (
    git_tree_hash,
    global_lock_path,
    read_global_lock,
    update_global_lock,
)
from skillbook.distribution.agents.layout import (
    agent_base,
    canonical_base,
    place_copy,
    sanitize_name,
)
from skillbook.distribution.agents.lock import LOCK_FILE, computed_hash, read_lock, update_lock
from skillbook.distribution.agents.placing import audit_forced, sweep_leftovers
from skillbook.distribution.agents.sources import Fetched, Fetcher, fetch
from skillbook.distribution.agents.table import Agent, AgentEnv

__all__ = ["Updated", "update_for"]

_SHA1: Final = re.compile(r"^[0-9a-f]{40}$", re.I)


@dataclass(frozen=True, slots=True)
class Updated:
    name: str
    ok: bool
    message: str
    code: str | None = None
    changed: bool = False
    #: The folders replaced (or that would have been).
    paths: tuple[Path, ...] = ()
    #: Refused over a local edit: the unified diff from the edited folder to the new version.
    diff: str | None = None
    warnings: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ok": self.ok,
            "name": self.name,
            "message": self.message,
            "changed": self.changed,
            "paths": [str(p) for p in self.paths],
            "warnings": list(self.warnings),
        }
        if self.code is not None:
            out["code"] = self.code
        if self.diff is not None:
            out["diff"] = self.diff
        return out


def _source_of(entry: dict[str, Any], where: AgentEnv, git_base: str) -> tuple[Any, str | None]:
    """The source to fetch again for a lock entry, and the registry of a registry skill."""
    from skillbook.distribution.registry import RegistryError
    from skillbook.distribution.registry.refs import ArchiveRef, FolderRef, GitRef, parse_ref

    kind, source = entry.get("sourceType"), entry.get("source")
    skill_path = entry.get("skillPath")
    folder = posixpath.dirname(skill_path) if isinstance(skill_path, str) else ""
    ref = entry.get("ref") if isinstance(entry.get("ref"), str) else None
    if not isinstance(source, str) or not source:
        raise AgentsError("agents.update-unsupported", "its lock entry names no source")
    if kind == "local":
        return FolderRef(str(where.project / source)), None
    if kind == "github":
        url = f"{git_base.rstrip('/')}/{source.removesuffix('.git')}.git"
        return GitRef(url, folder or None, ref), None
    if kind in ("git", "gitlab"):
        given = entry.get("sourceUrl")
        return GitRef(given if isinstance(given, str) else source, folder or None, ref), None
    if kind == "archive":
        return ArchiveRef(source), None
    if kind == "clawhub":
        try:
            parsed = parse_ref(source)
        except RegistryError as exc:
            raise AgentsError(exc.code, exc.message) from None
        registry = entry.get("registry")
        return parsed, registry if isinstance(registry, str) else None
    raise AgentsError(
        "agents.update-unsupported",
        f"skillbook does not update {kind!r} sources; use `npx skills update`",
    )


def _as_source(installed: Path, source: Path, into: Path) -> Path:
    """The installed copy as its source looked, so that its hash can be compared with
    the lock's (taken over the source): the files copies leave out (``metadata.json``,
    ``__pycache__``, ``__pypackages__``) put back from ``source`` (the new version; the
    old one is gone, and these rarely change), and the source's links (a copy holds
    their targets' bytes; the hash skips links) left out. A match proves the copy
    unedited; an unexplained difference counts as an edit."""
    import shutil

    from skillbook.distribution.agents.layout import _EXCLUDED_DIRS, _EXCLUDED_FILES

    shutil.copytree(installed, into, symlinks=True)
    for dirpath, dirnames, filenames in os.walk(source):
        here = Path(dirpath)
        rel = here.relative_to(source)
        for name in [*dirnames, *filenames]:
            src, dest = here / name, into / rel / name
            if src.is_symlink():
                if dest.is_dir() and not dest.is_symlink():
                    shutil.rmtree(dest)
                elif os.path.lexists(dest):
                    dest.unlink()
            elif name in dirnames and name in _EXCLUDED_DIRS and name != ".git":
                shutil.copytree(src, dest, symlinks=True, dirs_exist_ok=True)
            elif name in filenames and name in _EXCLUDED_FILES and dest.parent.is_dir():
                shutil.copy2(src, dest)
        dirnames[:] = [d for d in dirnames if d not in _EXCLUDED_DIRS]
    return into


def _match(found: list[Fetched], key: str) -> Fetched:
    for item in found:
        if item.name == key:
            return item
    for item in found:
        if sanitize_name(item.name) == sanitize_name(key):
            return item
    # A skill under another name is not put in this one's folder.
    listing = ", ".join(sorted(f.name for f in found))
    raise AgentsError("agents.skill-not-found", f"the source no longer holds {key} ({listing})")


def _installed(key: str, agents: tuple[Agent, ...], where: AgentEnv, global_: bool) -> list[Path]:
    """The real folders holding the skill for these agents: a copy, or the shared
    ``.agents/skills`` copy a link points to (a link elsewhere is not followed: neither
    tool makes one, and an update must not write where it leads)."""
    shared = os.path.realpath(canonical_base(where, global_=global_))
    found: list[Path] = []
    for agent in agents:
        path = agent_base(agent, where, global_=global_) / sanitize_name(key)
        if not os.path.lexists(path):
            continue
        real = Path(os.path.realpath(path))
        if path.is_symlink() and not is_path_inside(shared, str(real)):
            continue
        if real.is_dir() and real not in found:
            found.append(real)
    return found


def update_for(
    name: str | None,
    agents: tuple[Agent, ...],
    where: AgentEnv,
    *,
    global_: bool,
    force: bool,
    fetcher: Fetcher | None,
    force_reason: str | None = None,
    state_dir: Path | None = None,
) -> list[Updated]:
    """Update ``name`` (None: every skill of the lock installed for ``agents``)."""
    if global_:
        skills = read_global_lock(where).get("skills") or {}
        lock_file = global_lock_path(where)
    else:
        skills = read_lock(where.project)
        lock_file = where.project / LOCK_FILE
    entries = [
        (k, v)
        for k, v in skills.items()
        if isinstance(v, dict)
        and (name is None or k == name or sanitize_name(k) == sanitize_name(name))
    ]
    if name is not None and not entries:
        raise AgentsError("agents.not-installed", f"{name} is not recorded in {lock_file}")
    results: list[Updated] = []
    for key, entry in entries:
        folders = _installed(key, agents, where, global_)
        if not folders:
            if name is not None:
                ids = ", ".join(a.id for a in agents)
                results.append(
                    Updated(
                        key, False, f"{key} is not installed for {ids} here", "agents.not-installed"
                    )
                )
            continue
        try:
            results.append(
                _update_one(
                    key,
                    entry,
                    folders,
                    where,
                    global_=global_,
                    force=force,
                    fetcher=fetcher,
                    force_reason=force_reason,
                    state_dir=state_dir,
                )
            )
        except AgentsError as exc:
            results.append(Updated(key, False, f"{key}: {exc.message}", exc.code))
    return results


def _update_one(
    key: str,
    entry: dict[str, Any],
    folders: list[Path],
    where: AgentEnv,
    *,
    global_: bool,
    force: bool,
    fetcher: Fetcher | None,
    force_reason: str | None,
    state_dir: Path | None,
) -> Updated:
    from skillbook.distribution.registry.backups import tree_diff
    from skillbook.distribution.registry.refs import DEFAULT_GIT_BASE
    from skillbook.distribution.scan_gate import scan_for_install

    git_base = fetcher.options.git_base if fetcher is not None else DEFAULT_GIT_BASE
    source, registry = _source_of(entry, where, git_base)
    recorded = entry.get("skillFolderHash" if global_ else "computedHash")
    # A GitHub entry the other tool wrote online records the folder's git tree id.
    tree = global_ and isinstance(recorded, str) and bool(_SHA1.match(recorded))

    def digest(folder: Path) -> str:
        return git_tree_hash(folder) if tree else computed_hash(folder)

    with fetch(source, fetcher, registry=registry) as found:
        item = _match(found, key)
        verdict = scan_for_install(key, item.folder, force_reason=force_reason, state_dir=state_dir)
        if verdict.blocked is not None:
            return Updated(key, False, verdict.blocked, verdict.code or "install.scan-blocked")
        if verdict.forced:
            audit_forced(item, verdict, state_dir, force_reason)
        warnings = (*item.warnings, *verdict.warnings)
        new_recorded = digest(item.folder)
        with tempfile.TemporaryDirectory(prefix="skillbook-for-") as tmp:
            # The new version as it would be placed (copy rules applied), to compare and diff.
            placed = Path(tmp) / sanitize_name(key)
            try:
                place_copy(item.folder, placed)
                new_placed = computed_hash(placed)
                hashes = {
                    f: (
                        digest(_as_source(f, item.folder, Path(tmp) / f"as-source-{i}")),
                        computed_hash(f),
                    )
                    for i, f in enumerate(folders)
                }
            except OSError as exc:
                raise AgentsError("agents.io-error", f"could not read {key}: {exc}") from exc
            drifted = [f for f, (h, _) in hashes.items() if h != recorded]
            edited = [f for f in drifted if hashes[f][1] != new_placed]
            if edited and not force:
                diff = "".join(
                    tree_diff(f, placed, old_label=str(f), new_label=f"{key} (new)") for f in edited
                )
                where_ = ", ".join(str(f) for f in edited)
                return Updated(
                    key,
                    False,
                    f"{key} was edited in {where_} since it was installed; updating would "
                    "overwrite the edit (the diff to the new version follows). Re-run with "
                    "--force to update anyway.",
                    "agents.local-changes",
                    paths=tuple(edited),
                    diff=diff,
                    warnings=warnings,
                )
            stale = [f for f in folders if hashes[f][1] != new_placed]
            if new_recorded == recorded and not stale:
                return Updated(key, True, f"{key} is up to date", paths=tuple(folders))
        try:
            for folder in folders:
                sweep_leftovers(folder)
            for folder in stale:
                place_copy(item.folder, folder)
        except OSError as exc:
            raise AgentsError("agents.io-error", f"could not place {key}: {exc}") from exc
        fresh = {k: v for k, v in item.project_entry.items() if k in ("version", "sha256")}
        if global_:
            update_global_lock(
                where, add={key: {**entry, **fresh, "skillFolderHash": new_recorded}}
            )
        else:
            update_lock(where.project, add={key: {**entry, **fresh, "computedHash": new_recorded}})
    return Updated(
        key,
        True,
        f"Updated {key}",
        changed=True,
        paths=tuple(folders),
        warnings=warnings,
    )
