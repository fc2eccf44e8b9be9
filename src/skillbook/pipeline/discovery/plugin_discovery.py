"""Finding plugin folders: OpenClaw's plugin candidate discovery (``discoverOpenClawPlugins``).

Input: the ``plugins.load.paths`` entries and the plugin folders to scan, in order.
Output: :class:`Candidate` values (a plugin root, the file or folder that made it a
plugin, its origin, its bundle format) and diagnostics. Reading a candidate's
manifest is :mod:`skillbook.pipeline.discovery.plugin_manifest`; deciding whether it is enabled is
:mod:`skillbook.pipeline.discovery.plugins`.
"""

from __future__ import annotations

import os
import re
import stat as st
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from skillbook import diagnostics as dg
from skillbook.base import fs as _fs
from skillbook.base import listing as _listing
from skillbook.base.js import js_trim
from skillbook.diagnostics import Diagnostic
from skillbook.pipeline.cache.footprint import make_open, probe
from skillbook.pipeline.discovery.plugin_manifest import (
    ENTRY_CANDIDATES,
    BundleFormat,
    Origin,
    detect_bundle_format,
    read_json_file,
)

#: The OpenClaw release whose behaviour skillbook reproduces: a plugin's
#: ``openclaw.install.minHostVersion`` is compared with it.
COMPAT_HOST_VERSION: Final = "2026.4.12"
COMPAT_VERSION_ENV: Final = "OPENCLAW_COMPATIBILITY_HOST_VERSION"
_EXTENSIONS: Final = frozenset({".ts", ".js", ".mts", ".cts", ".mjs", ".cjs"})
_IGNORED_DIRS: Final = frozenset(
    {".git", ".hg", ".svn", ".turbo", ".yarn", ".yarn-cache", "build", "coverage", "dist"}
    | {"node_modules"}
)
_MIN_VERSION_RE: Final = re.compile(r">=(\d+)\.(\d+)\.(\d+)")
_SEMVER_RE: Final = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")


@dataclass(frozen=True, slots=True)
class Candidate:
    """A folder that is a plugin; ``root_dir`` is its real path."""

    source: str
    root_dir: str
    origin: Origin
    bundle_format: BundleFormat | None = None
    package: Mapping[str, Any] | None = field(default=None, compare=False)

    def incompatible(self, env: Mapping[str, str]) -> str | None:
        """Why this OpenClaw cannot load the plugin (``minHostVersion``), or None."""
        meta = self.package.get("openclaw") if isinstance(self.package, Mapping) else None
        install = meta.get("install") if isinstance(meta, Mapping) else None
        if not isinstance(install, Mapping) or "minHostVersion" not in install:
            return None
        raw = install["minHostVersion"]
        wanted = _MIN_VERSION_RE.fullmatch(js_trim(raw)) if isinstance(raw, str) else None
        if wanted is None:
            return 'openclaw.install.minHostVersion must use a semver floor in the form ">=x.y.z"'
        host = js_trim(env.get(COMPAT_VERSION_ENV) or "") or COMPAT_HOST_VERSION
        current = _SEMVER_RE.match(host)
        need = tuple(int(g) for g in wanted.groups())
        if current is None:
            return f"it requires OpenClaw >={'.'.join(map(str, need))}, and the host version {host!r} is unknown"
        if tuple(int(g) for g in current.groups()) < need:
            return f"it requires OpenClaw >={'.'.join(map(str, need))}, this host is {host}"
        return None


@dataclass(slots=True)
class Found:
    candidates: list[Candidate] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: Chat channels that bundled plugins declare in their package.json.
    channel_ids: frozenset[str] = frozenset()
    seen: set[str] = field(default_factory=set)


def find_candidates(
    load_paths: Iterable[str], roots: Iterable[tuple[Origin, str]], *, uid: int | None
) -> Found:
    """Every plugin candidate: load paths first, then each root's children."""
    found = _Finder(uid)
    for path in load_paths:
        found.from_path(path)
    for origin, root in roots:
        found.in_directory(root, origin)
    channels = set()
    for cand in found.out.candidates:
        channel = _package_meta(cand.package).get("channel")
        if cand.origin == "bundled" and isinstance(channel, Mapping):
            cid = channel.get("id")
            if isinstance(cid, str) and js_trim(cid):
                channels.add(js_trim(cid).lower())
    found.out.channel_ids = frozenset(channels)
    return found.out


def _package_meta(package: Mapping[str, Any] | None) -> Mapping[str, Any]:
    meta = package.get("openclaw") if isinstance(package, Mapping) else None
    return meta if isinstance(meta, Mapping) else {}


def _is_entry_file(path: str) -> bool:
    name = os.path.basename(path).lower()
    if os.path.splitext(path)[1] not in _EXTENSIONS or path.endswith(".d.ts"):
        return False
    return ".test." not in name and ".live.test." not in name and ".e2e.test." not in name


def _ignored(name: str) -> bool:
    lowered = js_trim(name).lower()
    return (
        not lowered
        or lowered in _IGNORED_DIRS
        or lowered.endswith(".bak")
        or ".backup-" in lowered
        or ".disabled" in lowered
    )


class _Finder:
    def __init__(self, uid: int | None) -> None:
        self.uid = uid
        self.out = Found()

    def warn(self, code: str, message: str, path: str) -> None:
        self.out.diagnostics.append(dg.warning(code, message, path=Path(path)))

    def from_path(self, path: str) -> None:
        """One ``plugins.load.paths`` entry (``discoverFromPath``)."""
        if not os.path.exists(path):
            self.warn("plugin.load-path", f"plugin path not found: {path}", path)
            return
        if os.path.isfile(path):
            if not _is_entry_file(path):
                self.warn("plugin.load-path", f"plugin path is not a supported file: {path}", path)
                return
            self.add(path, os.path.dirname(path), "config")
            return
        if os.path.isdir(path) and not self.folder(path, "config"):
            self.in_directory(path, "config")

    def in_directory(self, directory: str, origin: Origin) -> None:
        """Each child of a plugin folder (``discoverInDirectory``, not recursive)."""
        probe(directory)
        if not os.path.exists(directory):
            return
        try:
            entries = sorted(os.scandir(directory), key=lambda e: _listing.byte_order_key(e.name))
            if entries:
                make_open(f"plugin folder {directory} is not empty")
        except OSError as exc:
            self.warn(
                "plugin.load-path", f"failed to read extensions dir: {directory} ({exc})", directory
            )
            return
        for entry in entries:  # Node's readdir order (libuv sorts by bytes)
            try:
                is_file = entry.is_file(follow_symlinks=False)
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_file and _is_entry_file(entry.path):
                self.add(entry.path, directory, origin)
            if is_dir and not _ignored(entry.name):
                self.folder(entry.path, origin)

    def folder(self, path: str, origin: Origin) -> bool:
        """A folder that may be one plugin; True when it was taken as one."""
        real = _fs.try_realpath(path) or _fs.abspath(path)
        package, _ = read_json_file(os.path.join(path, "package.json"), real, json5=False)
        package = package if isinstance(package, Mapping) else None
        entries = _package_meta(package).get("extensions")
        listed = (
            [t for t in (js_trim(e) for e in entries if isinstance(e, str)) if t]
            if isinstance(entries, list)
            else []
        )
        if listed:
            for rel in listed:
                entry = _fs.abspath(os.path.join(path, rel))
                inside = _fs.try_realpath(entry) if os.path.exists(entry) else None
                if inside is None:
                    # OpenClaw skips a missing entry file without a word.
                    self.warn(
                        "plugin.manifest-invalid",
                        f"package.json of {path} lists the extension entry {rel}, which does "
                        "not exist; that entry is not loaded",
                        path,
                    )
                    continue
                if not _fs.is_path_inside(real, inside):
                    self.warn(
                        "plugin.blocked", f"extension entry escapes package directory: {rel}", path
                    )
                    continue
                self.add(entry, path, origin, package=package)
            return True
        fmt = detect_bundle_format(path)
        if fmt is not None:
            self.add(path, path, origin, bundle_format=fmt)
            return True
        index = next(
            (
                os.path.join(path, c)
                for c in ENTRY_CANDIDATES
                if os.path.exists(os.path.join(path, c))
            ),
            None,
        )
        if index is not None and _is_entry_file(index):
            self.add(index, path, origin, package=package)
            return True
        return False

    def add(
        self,
        source: str,
        root_dir: str,
        origin: Origin,
        *,
        bundle_format: BundleFormat | None = None,
        package: Mapping[str, Any] | None = None,
    ) -> None:
        resolved = _fs.abspath(source)
        if resolved in self.out.seen:
            return
        root = _fs.try_realpath(root_dir) or _fs.abspath(root_dir)
        blocked = self._blocked(resolved, root, origin)
        if blocked is not None:
            self.warn(
                "plugin.blocked", f"blocked plugin candidate: {blocked}; it is not loaded", resolved
            )
            return
        self.out.seen.add(resolved)
        self.out.candidates.append(Candidate(resolved, root, origin, bundle_format, package))

    def _blocked(self, source: str, root: str, origin: Origin) -> str | None:
        """OpenClaw's candidate checks: inside its root, not world-writable, owned by us."""
        real = _fs.try_realpath(source)
        if real is not None and not _fs.is_path_inside(root, real):
            return f"source escapes plugin root ({source} -> {real}; root={root})"
        if os.name == "nt":
            return None
        for target in dict.fromkeys((root, source)):
            try:
                info = os.stat(target)
            except OSError:
                return f"cannot stat path ({target})"
            # OpenClaw repairs a world-writable bundled plugin with chmod; skillbook never
            # writes to a plugin, so it reads such a bundled plugin as repaired.
            if info.st_mode & st.S_IWOTH and origin != "bundled":
                return f"world-writable path ({target}, mode={info.st_mode & 0o777:03o})"
            if origin != "bundled" and self.uid is not None and info.st_uid not in (self.uid, 0):
                return (
                    f"suspicious ownership ({target}, uid={info.st_uid}, expected uid="
                    f"{self.uid} or root)"
                )
        return None
