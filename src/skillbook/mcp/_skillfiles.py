"""A skill folder as the MCP Skills extension publishes it: files, digests, URIs, manifest.

Input: a skill folder (and its SKILL.md) on disk. Output: a :class:`SkillFiles` value —
the bytes of every servable file captured once, with ``sha256:`` digests, sizes, MIME
types, ``skill://`` URIs and the directory index. No ``mcp`` import: this module is
shared by the server and the client.

The walk and the race-safe reads (spec §4.7: nothing outside the skill folder is ever
served) are :mod:`skillbook.mcp._skillwalk`; the URI, digest and MIME formats are
:mod:`skillbook.mcp._skillformat`. Bytes are read once per change of the folder's stat
signature (:class:`SkillFilesCache`), so the manifest and the served bytes always come
from the same read, and never past the per-skill limits (:class:`FileLimits`).
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillbook.mcp import _skillwalk as sw
from skillbook.mcp._skillformat import (
    DIRECTORY_MIME,
    MAX_BYTES_PER_SKILL,
    MAX_RESOURCES_PER_SKILL,
    SKILL_FILE,
    SKILL_MD_MIME,
    as_text,
    digest_of,
    file_uri,
    guess_mime,
)
from skillbook.mcp._skillwalk import Skipped

__all__ = [
    "DEFAULT_LIMITS",
    "FileEntry",
    "FileLimits",
    "SkillFiles",
    "SkillFilesCache",
    "scan_skill",
]


# --------------------------------------------------------------------------- snapshot


@dataclass(frozen=True, slots=True)
class FileEntry:
    """One served file: its bytes as captured, and what the manifest says about them."""

    rel: str
    uri: str
    data: bytes
    digest: str
    mime: str
    #: The UTF-8 text when the file is served as ``text``; None means ``blob``.
    text: str | None

    @property
    def size(self) -> int:
        return len(self.data)

    def manifest_item(self) -> dict[str, Any]:
        return {"uri": self.uri, "digest": self.digest, "size": self.size}


@dataclass(frozen=True, slots=True)
class SkillFiles:
    """The servable files of one skill folder, SKILL.md first, and its directories."""

    skill_path: str
    files: tuple[FileEntry, ...]
    #: Relative paths of every served directory, ``""`` (the root) included.
    directories: tuple[str, ...]
    skipped: tuple[Skipped, ...] = ()
    #: Why the folder exceeds the per-skill limits (then only SKILL.md is captured).
    over_limit: str | None = None
    #: Why not even SKILL.md could be captured.
    unreadable: str | None = None
    #: A file the walk listed could not be read (it changed, vanished, or a folder on
    #: its path was swapped): the capture is not reused, the next request reads again.
    incomplete: bool = False
    #: (device, inode, size, mtime_ns, ctime_ns) of the SKILL.md bytes captured, when
    #: the file did not change while it was read: the parse cache's key for them.
    md_identity: tuple[int, ...] | None = None
    #: The SKILL.md URI (every index and entry asks for it: encoded once).
    uri: str = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "uri", file_uri(self.skill_path, SKILL_FILE))

    @property
    def skill_md(self) -> FileEntry | None:
        return self.files[0] if self.files and self.files[0].rel == SKILL_FILE else None

    @property
    def total_size(self) -> int:
        return sum(f.size for f in self.files)

    def manifest(self) -> list[dict[str, Any]]:
        return [f.manifest_item() for f in self.files]

    def file(self, rel: str) -> FileEntry | None:
        return next((f for f in self.files if f.rel == rel), None)

    def children(self, rel_dir: str) -> list[tuple[str, str, str]]:
        """``(name, uri, mime)`` of the direct children of a served directory, sorted."""
        prefix = f"{rel_dir}/" if rel_dir else ""
        out: dict[str, tuple[str, str, str]] = {}
        for d in self.directories:
            if d and d.startswith(prefix) and "/" not in d[len(prefix) :]:
                out[d] = (d[len(prefix) :], file_uri(self.skill_path, d), DIRECTORY_MIME)
        for f in self.files:
            if f.rel.startswith(prefix) and "/" not in f.rel[len(prefix) :]:
                out[f.rel] = (f.rel[len(prefix) :], f.uri, f.mime)
        return [out[k] for k in sorted(out)]


@dataclass(frozen=True, slots=True)
class FileLimits:
    max_files: int = MAX_RESOURCES_PER_SKILL
    max_bytes: int = MAX_BYTES_PER_SKILL


DEFAULT_LIMITS = FileLimits()


def _capture(skill_path: str, listing: sw.Listing, limits: FileLimits) -> SkillFiles:
    if listing.missing_skill_md is not None:
        return SkillFiles(
            skill_path, (), listing.directories, listing.skipped, None, listing.missing_skill_md
        )
    declared = sum(f[2] for f in listing.files)
    over: str | None = None
    if len(listing.files) > limits.max_files or declared > limits.max_bytes:
        over = (
            f"{len(listing.files)} files / {declared} bytes exceed the per-skill limits "
            f"({limits.max_files} files / {limits.max_bytes} bytes)"
        )
    wanted = listing.files[:1] if over else listing.files
    entries: list[FileEntry] = []
    skipped = list(listing.skipped)
    budget = limits.max_bytes
    incomplete = False
    md_identity: tuple[int, ...] | None = None
    for seen in wanted:
        rel = seen[0]
        data = sw.read(listing, seen, budget)
        if rel == SKILL_FILE and not isinstance(data, str):
            md_identity = sw.unchanged_identity(seen, len(data))
        if isinstance(data, str):
            if rel == SKILL_FILE:
                return SkillFiles(
                    skill_path, (), listing.directories, tuple(skipped), over, data, True
                )
            skipped.append(Skipped(rel, data))
            incomplete = True
            continue
        budget -= len(data)
        mime = SKILL_MD_MIME if rel == SKILL_FILE else guess_mime(rel, data)
        entries.append(
            FileEntry(
                rel, file_uri(skill_path, rel), data, digest_of(data), mime, as_text(mime, data)
            )
        )
    directories = ("",) if over else listing.directories
    return SkillFiles(
        skill_path,
        tuple(entries),
        directories,
        tuple(skipped),
        over,
        incomplete=incomplete,
        md_identity=md_identity,
    )


def scan_skill(
    skill_path: str,
    base_dir: Path,
    skill_file: Path,
    *,
    limits: FileLimits = DEFAULT_LIMITS,
    real_dir: Path | None = None,
) -> SkillFiles:
    """Walk and read one skill folder (no cache); ``real_dir`` is where discovery
    found the folder's real path (the folder is not served if it moved)."""
    return _capture(skill_path, sw.walk(base_dir, skill_file, real_dir), limits)


class SkillFilesCache:
    """Re-reads a skill folder's bytes only when its stat signature changed.

    The walk (names, sizes, mtimes, inodes) runs on every :meth:`get`; bytes are read
    again only when it differs from the previous walk of the same folder.
    """

    def __init__(self, *, limits: FileLimits = DEFAULT_LIMITS) -> None:
        self.limits = limits
        self._entries: dict[tuple[str, str, str], tuple[sw.Listing, SkillFiles]] = {}
        self.reads = 0

    def get(
        self, skill_path: str, base_dir: Path, skill_file: Path, real_dir: Path | None = None
    ) -> SkillFiles:
        key = (skill_path, os.fspath(base_dir), os.fspath(skill_file))
        listing = sw.walk(base_dir, skill_file, real_dir)
        held = self._entries.get(key)
        if held is not None and held[0] == listing and not held[1].incomplete:
            return held[1]
        files = _capture(skill_path, listing, self.limits)
        self.reads += 1
        self._entries[key] = (listing, files)
        return files

    def retain(self, keys: Collection[tuple[str, str, str]]) -> None:
        """Forget folders no longer served."""
        for key in [k for k in self._entries if k not in keys]:
            del self._entries[key]
