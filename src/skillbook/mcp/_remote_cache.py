"""The disk cache of remote skills: verified bytes by digest, and pruning of stale files.

Input: a cache folder the host alone writes (``<state dir>/mcp-cache``), a server's
key and the entries of its skills. Output: the bytes stored under their digest
(:class:`ContentStore`, re-hashed on every read: a bad copy is deleted, never served),
atomic read-only writes, and one server's part of the cache (:class:`ServerCache`):
where each skill's files are materialised, the held ``entries.json``, and the removal
of every materialised file no current manifest lists with its bytes. Never asks a
server for anything; fetching and verifying is :mod:`skillbook.mcp.remote_source`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

from skillbook import diagnostics as dg
from skillbook.base.atomic import write_atomic
from skillbook.diagnostics import Diagnostic
from skillbook.mcp import _skillformat as fmt
from skillbook.mcp._entries import SkillEntry, parse_entry
from skillbook.mcp.client import McpServerSpec
from skillbook.model import Skill

FILE_MODE = 0o444
DIR_MODE = 0o755
CACHE_ROOT_MODE = 0o700
TMP_PREFIX = ".tmp-"


def write_file(path: Path, data: bytes) -> None:
    """temp file in the same folder + rename: readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    write_atomic(path, data, mode=FILE_MODE, prefix=TMP_PREFIX, suffix="")


def unlink_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


def read_if_digest(path: Path, digest: str) -> bytes | None:
    """The file's bytes if it is a regular file hashing to ``digest`` (re-hashed now)."""
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode):
            return None
        data = path.read_bytes()
    except OSError:
        return None
    return data if fmt.digest_of(data) == digest else None


class ContentStore:
    """``<root>/<hex>``: verified bytes by digest; a bad copy is deleted, never served."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, digest: str) -> Path:
        return self.root / digest.removeprefix(fmt.DIGEST_PREFIX)

    def get(self, digest: str) -> bytes | None:
        path = self.path(digest)
        data = read_if_digest(path, digest)
        if data is None and path.exists():
            unlink_quietly(path)
        return data

    def put(self, digest: str, data: bytes) -> None:
        write_file(self.path(digest), data)


class ServerCache:
    """``servers/<key>/``: one server's materialised skill folders and ``entries.json``."""

    def __init__(self, cache_dir: Path, key: str) -> None:
        self.store = ContentStore(cache_dir)
        self.server_dir = cache_dir / "servers" / key
        self.skills_dir = self.server_dir / "skills"
        self.entries_file = self.server_dir / "entries.json"

    def skill_dir(self, entry: SkillEntry) -> Path:
        return self.skills_dir.joinpath(*entry.segments[:-1])

    def file_path(self, entry: SkillEntry, uri: str) -> Path:
        parts = entry.rel_parts(uri)
        assert parts is not None  # parse_entry checked every manifest URI
        return self.skill_dir(entry).joinpath(*parts)

    def prune(self, entries: Sequence[SkillEntry]) -> None:
        """Delete every materialised file that no current manifest lists with its bytes."""
        expected: dict[Path, str] = {}
        # Deeper skills last: a nested skill's manifest decides the files in its folder.
        for entry in sorted(entries, key=lambda e: len(e.segments)):
            for item in entry.resources or ():
                expected[self.file_path(entry, item.uri)] = item.digest
        if not self.skills_dir.is_dir():
            return
        for folder, dirs, files in os.walk(self.skills_dir, topdown=False):
            here = Path(folder)
            for name in files + [d for d in dirs if (here / d).is_symlink()]:
                path = here / name
                if name.startswith(TMP_PREFIX):
                    continue
                digest = expected.get(path)
                if digest is None or read_if_digest(path, digest) is None:
                    unlink_quietly(path)
            if here != self.skills_dir and not any(here.iterdir()):
                with contextlib.suppress(OSError):
                    here.rmdir()

    def save_entries(self, origin: str, entries: Iterable[SkillEntry]) -> None:
        doc = {
            "server": origin,
            "skills": [
                {"dir": self.skill_dir(e).relative_to(self.skills_dir).as_posix(), **e.to_json()}
                for e in entries
            ],
        }
        write_file(self.entries_file, json.dumps(doc, ensure_ascii=False).encode("utf-8"))

    def held_entries(self) -> list[SkillEntry]:
        """Every entry of ``entries.json`` (the skills of the last load)."""
        try:
            doc = json.loads(self.entries_file.read_bytes())
        except (OSError, ValueError):
            return []
        items = doc.get("skills", []) if isinstance(doc, dict) else []
        parsed = (parse_entry(item) for item in items if isinstance(item, dict))
        return [e for e in parsed if isinstance(e, SkillEntry)]

    def held_entry(self, skill: Skill) -> SkillEntry | None:
        """The entry ``skill`` was loaded from (``entries.json``), or None."""
        try:
            doc = json.loads(self.entries_file.read_bytes())
            rel = skill.base_dir.relative_to(self.skills_dir).as_posix()
        except (OSError, ValueError):
            return None
        for item in doc.get("skills", []) if isinstance(doc, dict) else []:
            if isinstance(item, dict) and item.get("dir") == rel:
                entry = parse_entry(item)
                return entry if isinstance(entry, SkillEntry) else None
        return None

    def nested_conflict(
        self,
        entry: SkillEntry,
        target: Path,
        digest: str,
        held: Iterable[SkillEntry],
        spec: McpServerSpec,
    ) -> Diagnostic | None:
        """A file of ``entry`` inside a nested skill's folder may be written only when the
        nested skill's own manifest lists it with the same bytes: a parent never changes
        or adds the files of a skill it contains."""
        own = self.skill_dir(entry)
        owner: SkillEntry | None = None
        for other in held:
            folder = self.skill_dir(other)
            if (
                folder != own
                and folder.is_relative_to(own)
                and target.is_relative_to(folder)
                and (owner is None or folder.is_relative_to(self.skill_dir(owner)))
            ):
                owner = other
        if owner is None:
            return None
        theirs = next(
            (i for i in owner.resources or () if self.file_path(owner, i.uri) == target), None
        )
        if theirs is not None and theirs.digest == digest:
            return None
        how = "lists other bytes for it" if theirs is not None else "does not list it"
        return dg.error(
            "mcp.nested-conflict",
            f"MCP server {spec.name!r}: {target.relative_to(own).as_posix()} of "
            f"{entry.uri} lies in the folder of the nested skill {owner.uri}, whose manifest "
            f"{how}; not written (a skill's files come only from its own manifest)",
            skill=entry.name,
        )

    def forget(self) -> None:
        """Delete this server's materialised skills (call when the server is removed)."""
        shutil.rmtree(self.server_dir, ignore_errors=True)
