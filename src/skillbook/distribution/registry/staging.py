"""Fetch what was asked for into staged skill trees beside their targets.

Input: a git, folder or archive :class:`~skillbook.distribution.registry.refs.SourceRef` (registry
skills: :mod:`skillbook.distribution.registry.clawhub_stage`) and a :class:`StageContext`
(workdir, registry client factory, limits, progress). Output: one :class:`Staged`
per skill: a complete tree at ``skills/.<name>.tmp-XXXXXXXX`` plus what its origin and
lock entry will say. Nothing is swapped in here and nothing is scanned yet
(:mod:`skillbook.distribution.registry.installer` does both): a refusal leaves the workdir as it was.

Every source ends in the same checks: archives (registry downloads, ``.zip`` and
``.tar.gz`` files and URLs) are unpacked by :mod:`skillbook.distribution.archives.extract` (no path
escapes, links, devices or bombs), folders and git checkouts are copied by
:mod:`skillbook.distribution.registry.tree` under the same limits, and the skill root is found by
:mod:`skillbook.distribution.archives.layout`. ClawHub's and skillbook's own tracking folders
shipped inside a skill (``.clawhub``, ``.clawdhub``, ``.skillbook``) are dropped:
an archive must not forge its own origin.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from skillbook.distribution import InstallError
from skillbook.distribution.archives.layout import find_skill_root
from skillbook.distribution.archives.paths import DEFAULT_LIMITS, ExtractLimits
from skillbook.distribution.netguard import NetworkPolicy
from skillbook.distribution.progress import Progress
from skillbook.distribution.registry import RegistryError
from skillbook.distribution.registry.client import RegistryClient
from skillbook.distribution.registry.lockfile import CLAWHUB_DIR, LEGACY_DIR, SKILLBOOK_DIR
from skillbook.distribution.registry.refs import ArchiveRef, FolderRef, GitRef, check_folder_name
from skillbook.distribution.registry.workdir import Workdir
from skillbook.distribution.swap import make_staging, remove_tree

__all__ = [
    "StageContext",
    "Staged",
    "adopt",
    "scratch",
    "stage_archive",
    "stage_folder",
    "stage_git",
    "unpack",
]

_TRACKING: Final = (CLAWHUB_DIR, LEGACY_DIR, SKILLBOOK_DIR)


@dataclass(slots=True)
class Staged:
    """A complete new tree for ``skills/<name>`` and what will record it."""

    name: str
    path: Path
    #: The lock file it goes in: ``.clawhub`` (registry) or ``.skillbook`` (other sources).
    folder: str
    key: str
    version: str
    #: ``clawhub``, ``git``, ``folder`` or ``archive``.
    kind: str
    #: ``origin.json`` fields before ``installedVersion`` (``installedAt``/``fingerprint`` follow).
    origin_head: dict[str, Any]
    #: Lock-entry fields after ``version``/``installedAt`` (``ownerHandle``, ``source``).
    lock_tail: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    #: Registry installs: ``origin.json`` fields after the fingerprint (``sourceUrl``,
    #: ``artifact``); the tree digest follows them (OpenClaw 2026.9's records).
    origin_extra: dict[str, Any] = field(default_factory=dict)
    #: Registry installs: the ``/verify`` snapshot kept in the lock entry.
    verification: dict[str, Any] | None = None


@dataclass(slots=True)
class StageContext:
    workdir: Workdir
    client: Callable[[str | None], RegistryClient]
    limits: ExtractLimits = DEFAULT_LIMITS
    progress: Progress | None = None
    say: Callable[[str], None] = lambda _line: None
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    network: NetworkPolicy = field(default_factory=NetworkPolicy)
    git_timeout: float = 300.0


@contextlib.contextmanager
def scratch(ctx: StageContext, name: str) -> Iterator[Path]:
    """A work folder beside the target, removed afterwards (a kill leaves a leftover
    that the next run's recovery removes)."""
    path = make_staging(ctx.workdir.target(name))
    try:
        yield path
    finally:
        remove_tree(path)


def adopt(ctx: StageContext, name: str, root: Path) -> Path:
    """Move ``root`` (inside a scratch folder) to its own staging name, minus tracking files."""
    staged = make_staging(ctx.workdir.target(name))
    os.rename(root, staged)
    for tracking in _TRACKING:
        path = staged / tracking
        if os.path.lexists(path):
            remove_tree(path)
    return staged


def unpack(archive: Path, into: Path, kind: str, limits: ExtractLimits) -> None:
    from skillbook.distribution.archives.extract import extract_tar, extract_zip

    into.mkdir()
    try:
        # A skill tree: the registry's file name rules apply (see distribution.archives.names).
        if kind == "zip":
            extract_zip(archive, into, strip=0, limits=limits, names=True)
        else:
            extract_tar(archive, into, strip=0, limits=limits, names=True)
    except InstallError as exc:
        raise RegistryError(exc.code, f"failed to extract archive: {exc.message}") from None


def _source_records(name: str, source: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    head = {"version": 1, "source": source, "slug": name}
    return head, {"source": source}


def stage_tree(
    ctx: StageContext,
    name: str,
    folder: Path,
    *,
    source: dict[str, Any],
    version: str,
    kind: str,
) -> Staged:
    """Copy a skill folder (a checkout's or a local one) into staging."""
    from skillbook.distribution.registry.tree import copy_tree

    name = check_folder_name(name)
    find_skill_root(folder, missing=f"{folder} has no SKILL.md")
    staged = make_staging(ctx.workdir.target(name))
    try:
        copy_tree(folder, staged, limits=ctx.limits)
        for tracking in _TRACKING:
            if os.path.lexists(staged / tracking):
                remove_tree(staged / tracking)
    except BaseException:
        remove_tree(staged)
        raise
    head, tail = _source_records(name, source)
    return Staged(name, staged, SKILLBOOK_DIR, name, version, kind, head, tail)


def stage_folder(ctx: StageContext, ref: FolderRef, *, name: str | None) -> Staged:
    path = Path(os.path.expanduser(ref.path)).resolve()
    if not path.is_dir():
        raise RegistryError("registry.not-found", f"No such folder: {ref.path}")
    source = {"kind": "folder", "path": str(path)}
    return stage_tree(ctx, name or path.name, path, source=source, version="local", kind="folder")


def stage_archive(ctx: StageContext, ref: ArchiveRef, *, name: str | None) -> Staged:
    """A ``.zip``/``.tar.gz`` file or http(s) URL; the version is the archive's sha256."""
    from skillbook.distribution.archives.extract import sha256_file
    from skillbook.distribution.http import fetch_to_file

    location = ref.location
    base = location.rstrip("/").rsplit("/", 1)[-1]
    kind = "zip" if base.lower().endswith(".zip") else "tar"
    stem = base[: -len(".zip")] if kind == "zip" else base.split(".tar")[0].removesuffix(".tgz")
    label = check_folder_name(name or stem)
    with scratch(ctx, label) as work:
        if ref.remote:
            archive = work / ("archive.zip" if kind == "zip" else "archive.tar.gz")
            with archive.open("wb") as sink:
                try:
                    fetched = fetch_to_file(
                        location,
                        sink,
                        policy=ctx.network,
                        timeout_ms=300_000,
                        progress=ctx.progress,
                    )
                except InstallError as exc:
                    raise RegistryError(exc.code, exc.message) from None
            digest = fetched.sha256
            source: dict[str, Any] = {"kind": "archive", "url": location, "sha256": digest}
        else:
            archive = Path(os.path.expanduser(location)).resolve()
            if not archive.is_file():
                raise RegistryError("registry.not-found", f"No such archive: {location}")
            digest = sha256_file(archive)
            source = {"kind": "archive", "path": str(archive), "sha256": digest}
        unpack(archive, work / "x", kind, ctx.limits)
        root = find_skill_root(work / "x", missing="archive is missing SKILL.md")
        staged = adopt(ctx, label, root)
    head, tail = _source_records(label, source)
    return Staged(label, staged, SKILLBOOK_DIR, label, digest[:12], "archive", head, tail)


def stage_git(
    ctx: StageContext,
    ref: GitRef,
    *,
    names: tuple[str, ...],
    all_skills: bool,
    name: str | None,
) -> list[Staged]:
    """Fetch the repository and stage the skills named (all with ``all_skills``)."""
    from skillbook.distribution.registry.gitsource import fetch_checkout, list_skills

    repo_name = (
        ref.public_url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1].removesuffix(".git")
    )
    fallback = (ref.subpath or "").rsplit("/", 1)[-1] or repo_name
    with scratch(ctx, f"git-{check_folder_name(fallback)}") as work:
        checkout = work / "checkout"
        ctx.say(f"Fetching {ref}…")
        commit = fetch_checkout(ref, checkout, env=ctx.env, timeout=ctx.git_timeout)
        base = checkout / ref.subpath if ref.subpath else checkout
        if not base.is_dir() or base.is_symlink():
            raise RegistryError("registry.not-found", f"{ref.subpath} is not a folder of {ref.url}")
        found = list_skills(base, fallback_name=fallback)
        chosen = _choose(found, names, all_skills, ref)
        if name is not None and len(chosen) != 1:
            raise RegistryError("registry.invalid-ref", "--name needs exactly one skill")
        out: list[Staged] = []
        try:
            for skill in chosen:
                sub = "/".join(p for p in (ref.subpath, skill.path) if p) or None
                source = {"kind": "git", "url": ref.public_url, "commit": commit}
                if ref.ref:
                    source["ref"] = ref.ref
                if sub:
                    source["subpath"] = sub
                folder = base / skill.path if skill.path else base
                out.append(
                    stage_tree(
                        ctx, name or skill.name, folder, source=source, version=commit, kind="git"
                    )
                )
        except BaseException:
            for staged in out:
                remove_tree(staged.path)
            raise
    for staged in out:
        staged.version = commit
    return out


def _choose(found: list[Any], names: tuple[str, ...], all_skills: bool, ref: GitRef) -> list[Any]:
    if not found:
        raise RegistryError("registry.not-found", f"No SKILL.md found in {ref}")
    if all_skills or (len(found) == 1 and not names):
        return found
    if not names:
        listing = ", ".join(sorted(s.name for s in found))
        raise RegistryError(
            "registry.choose-skills",
            f"{ref} holds {len(found)} skills: {listing}. "
            "Name the ones to install with --skill NAME (repeatable) or use --all.",
        )
    picked = []
    for wanted in names:
        match = [s for s in found if wanted in (s.name, s.declared, s.path)]
        if not match:
            listing = ", ".join(sorted(s.name for s in found))
            raise RegistryError(
                "registry.not-found", f'No skill "{wanted}" in {ref} (it holds: {listing})'
            )
        picked += [m for m in match if m not in picked]
    return picked
