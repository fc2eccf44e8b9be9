"""A skill folder as the MCP Skills extension publishes it: files, digests, URIs, manifest.

Input: a skill folder (and its SKILL.md) on disk. Output: a :class:`SkillFiles` value —
the bytes of every servable file captured once, with ``sha256:`` digests, sizes, MIME
types, ``skill://`` URIs and the directory index — plus the pure helpers a client
needs to check what a server sent (digest format, URI containment, §3.1 relative
resolution). No ``mcp`` import: this module is shared by the server and the client.

Hygiene (spec §4.7): every file's real path must lie inside the skill folder's real
path; symlinks that leave the folder and symlinked sub-folders are skipped (they are
never followed); dot-files, ``node_modules`` and anything that is not a regular file
are skipped. Bytes are read once per change of the folder's stat signature, so the
manifest and the served bytes always come from the same read.

Races: a folder inside the skill can be swapped for a symlink between the walk and
the read. Each file is therefore opened from the skill folder down, one component at
a time with ``O_NOFOLLOW`` (:func:`skillbook._fs.open_contained`), the skill folder
must still be the one the walk saw (device and inode), and so must the file; on Linux
the kernel's path of the opened file must equal the path the walk checked.
"""

from __future__ import annotations

import errno
import hashlib
import os
import posixpath
import re
import stat as st
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from skillbook import _fs

EXTENSION_ID = "io.modelcontextprotocol/skills"
#: The protocol revision the extension is written against (and served on).
PROTOCOL_REVISION = "2026-07-28"
SCHEME = "skill"
SKILL_FILE = "SKILL.md"
DIGEST_PREFIX = "sha256:"
DIRECTORY_MIME = "inode/directory"
SKILL_MD_MIME = "text/markdown"
#: Per-skill limits of the extension (§1.4): hosts must accept up to these.
MAX_RESOURCES_PER_SKILL = 512
MAX_BYTES_PER_SKILL = 16 * 1024 * 1024
#: Agent Skills name rules; the final URI segment must satisfy them (§1.3).
MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
NAME_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
DIGEST_RE = re.compile(r"sha256:[0-9a-f]{64}")
#: Folder names never served, besides every dot-name.
EXCLUDED_NAMES = frozenset({"node_modules"})

# Segments are percent-encoded except for characters RFC 3986 allows there; Agent
# Skills names and ordinary file names come out unchanged.
_AUTHORITY_SAFE = "!$&'()*+,;="
_SEGMENT_SAFE = "!$&'()*+,;=:@"
# Extensions whose MIME type must not depend on the machine's /etc/mime.types.
_MIME_BY_SUFFIX = {
    **dict.fromkeys((".md", ".markdown"), "text/markdown"),
    **dict.fromkeys((".sh", ".bash"), "text/x-shellscript"),
    **dict.fromkeys((".js", ".mjs"), "text/javascript"),
    **dict.fromkeys((".yaml", ".yml"), "application/yaml"),
    **dict.fromkeys((".jpg", ".jpeg"), "image/jpeg"),
    ".txt": "text/plain", ".py": "text/x-python", ".ts": "text/x-typescript",
    ".json": "application/json", ".toml": "application/toml", ".xml": "application/xml",
    ".html": "text/html", ".css": "text/css", ".csv": "text/csv", ".svg": "image/svg+xml",
    ".png": "image/png", ".gif": "image/gif", ".webp": "image/webp",
    ".pdf": "application/pdf", ".zip": "application/zip", ".gz": "application/gzip",
}  # fmt: skip
_TEXTUAL_APPLICATION = frozenset(
    {"application/json", "application/yaml", "application/toml", "application/xml"}
)


# --------------------------------------------------------------------------- pure helpers


def digest_of(data: bytes) -> str:
    """``sha256:`` + 64 lowercase hex digits over the raw bytes (§1.5)."""
    return DIGEST_PREFIX + hashlib.sha256(data).hexdigest()


def is_valid_digest(value: object) -> bool:
    return isinstance(value, str) and DIGEST_RE.fullmatch(value) is not None


def is_valid_skill_name(name: object) -> bool:
    return (
        isinstance(name, str)
        and 0 < len(name) <= MAX_NAME_LENGTH
        and NAME_RE.fullmatch(name) is not None
    )


def skill_root_uri(skill_path: str) -> str:
    """``skill://<skill-path>`` for an already-encoded skill path."""
    return f"{SCHEME}://{skill_path}"


def encode_skill_path(name: str) -> str:
    """The one-segment skill path skillbook uses: the skill name, percent-encoded."""
    return quote(name, safe=_AUTHORITY_SAFE)


def encode_file_path(rel: str) -> str:
    """A ``/``-separated path relative to the skill root, each segment percent-encoded."""
    return "/".join(quote(part, safe=_SEGMENT_SAFE) for part in rel.split("/"))


def file_uri(skill_path: str, rel: str) -> str:
    return (
        f"{skill_root_uri(skill_path)}/{encode_file_path(rel)}"
        if rel
        else skill_root_uri(skill_path)
    )


def is_within_skill(skill_md_uri: str, uri: str) -> bool:
    """Whether ``uri`` is the skill's SKILL.md or lies below its root (exact strings)."""
    root = skill_md_uri.rsplit("/", 1)[0]
    return uri == skill_md_uri or uri.startswith(root + "/")


def resolve_in_skill(skill_md_uri: str, ref: str) -> str:
    """§3.1: resolve ``ref`` against the skill root; ``ValueError`` if it escapes.

    ``urllib.parse.urljoin`` does not resolve ``skill:`` URIs, hence posixpath.
    """
    scheme, rest = skill_md_uri.rsplit("/", 1)[0].split("://", 1)
    if ref.startswith("/") or "\\" in ref or "\x00" in ref:
        raise ValueError(f"{ref!r} is not a path relative to the skill root")
    joined = posixpath.normpath(posixpath.join("/" + rest, ref))
    if not (joined + "/").startswith("/" + rest + "/"):
        raise ValueError(f"{ref!r} escapes the skill root")
    return f"{scheme}://{joined[1:]}"


def normalize_relative(ref: str) -> str | None:
    """A clean ``a/b.md`` path inside the root, or None for absolute paths and escapes."""
    if not ref or ref.startswith(("/", "~")) or "\\" in ref or "\x00" in ref:
        return None
    if re.match(r"[A-Za-z]:", ref):
        return None
    joined = posixpath.normpath(ref)
    if joined in (".", "") or joined == ".." or joined.startswith("../"):
        return None
    return joined


def guess_mime(rel: str, data: bytes | None = None) -> str:
    """The MIME type of a file from its name; without a known one, ``text/plain`` for
    UTF-8 text without NUL bytes, else ``application/octet-stream``."""
    suffix = posixpath.splitext(rel)[1].lower()
    known = _MIME_BY_SUFFIX.get(suffix)
    if known is not None:
        return known
    import mimetypes

    guessed, _ = mimetypes.guess_type(posixpath.basename(rel), strict=True)
    if guessed is not None:
        return guessed
    if data is not None and b"\x00" not in data:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            return "text/plain"
    return "application/octet-stream"


def _textual(mime: str) -> bool:
    return (
        mime.startswith("text/") or mime in _TEXTUAL_APPLICATION or mime.endswith(("+xml", "+json"))
    )


def as_text(mime: str, data: bytes) -> str | None:
    """The text form of ``data`` if it round-trips exactly through UTF-8, else None (blob).

    No BOM stripping and no newline changes: ``text.encode()`` gives back ``data``.
    """
    if not _textual(mime):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


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
class Skipped:
    rel: str
    reason: str


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

    @property
    def skill_md(self) -> FileEntry | None:
        return self.files[0] if self.files and self.files[0].rel == SKILL_FILE else None

    @property
    def uri(self) -> str:
        return file_uri(self.skill_path, SKILL_FILE)

    @property
    def root_uri(self) -> str:
        return skill_root_uri(self.skill_path)

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


#: What the walk saw of one file: (rel, real path, size, mtime_ns, inode, ctime_ns, device).
_Seen = tuple[str, str, int, int, int, int, int]


@dataclass(frozen=True, slots=True)
class _Listing:
    """A stat-only walk: enough to tell whether anything changed since the last read."""

    #: One :data:`_Seen` per file, SKILL.md first.
    files: tuple[_Seen, ...]
    directories: tuple[str, ...]
    skipped: tuple[Skipped, ...]
    missing_skill_md: str | None = None
    #: The skill folder's real path and (device, inode) as the walk saw them.
    root_real: str = ""
    root_id: tuple[int, int] | None = None


def _walk(base_dir: Path, skill_file: Path, real_dir: Path | None = None) -> _Listing:
    root_real = _fs.try_realpath(os.fspath(base_dir))
    if root_real is None:
        return _Listing((), (), (), missing_skill_md="the skill folder cannot be resolved")
    standalone = skill_file.name != SKILL_FILE or skill_file.parent != base_dir
    if real_dir is not None and not standalone and root_real != os.fspath(real_dir):
        # Discovery checked the folder at its real path; it now resolves elsewhere.
        why = f"the skill folder now resolves to {root_real}, not {os.fspath(real_dir)}"
        return _Listing((), (), (), missing_skill_md=why)
    try:
        root_info = os.stat(root_real)
    except OSError as exc:
        return _Listing((), (), (), missing_skill_md=f"cannot stat: {exc.strerror or exc}")
    root_id = (root_info.st_dev, root_info.st_ino)
    if standalone:
        # A standalone Markdown skill (mixed/legacy mode) is one file; its folder is
        # the root holding other skills, which must not be served with it.
        found = _stat_file(os.fspath(skill_file), root_real)
        if isinstance(found, str):
            return _Listing((), ("",), (), found, root_real, root_id)
        return _Listing(((SKILL_FILE, *found),), ("",), (), None, root_real, root_id)
    files, dirs, skipped = _walk_tree(os.fspath(base_dir), root_real)
    head = [f for f in files if f[0] == SKILL_FILE]
    if not head:
        missing = "no servable SKILL.md"
        return _Listing((), tuple(dirs), tuple(skipped), missing, root_real, root_id)
    rest = sorted((f for f in files if f[0] != SKILL_FILE), key=lambda f: f[0])
    listed = (head[0], *rest)
    return _Listing(listed, tuple(sorted(dirs)), tuple(skipped), None, root_real, root_id)


def _walk_tree(base: str, root_real: str) -> tuple[list[_Seen], list[str], list[Skipped]]:
    files: list[_Seen] = []
    dirs: list[str] = [""]
    skipped: list[Skipped] = []
    stack: list[tuple[str, str]] = [(base, "")]
    while stack:
        directory, rel_dir = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            skipped.append(Skipped(rel_dir or ".", f"cannot list: {exc.strerror or exc}"))
            continue
        subdirs: list[tuple[str, str]] = []
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if entry.name.startswith(".") or entry.name in EXCLUDED_NAMES:
                continue
            try:
                is_link = entry.is_symlink()
                if is_link:
                    real = _fs.try_realpath(entry.path)
                    if real is None or not _fs.is_path_inside(root_real, real):
                        skipped.append(Skipped(rel, "symlink points outside the skill folder"))
                        continue
                    if os.path.isdir(real):
                        skipped.append(Skipped(rel, "symlinked folder (not followed)"))
                        continue
                if entry.is_dir(follow_symlinks=False):
                    dirs.append(rel)
                    subdirs.append((entry.path, rel))
                    continue
            except OSError as exc:
                skipped.append(Skipped(rel, f"cannot stat: {exc.strerror or exc}"))
                continue
            if is_link:
                found = _stat_file(entry.path, root_real)
            else:
                # Walked folders are never links, so a plain entry's real path is known:
                # no realpath walk per file (the read re-checks every component).
                found = _stat_plain(root_real + os.sep + rel.replace("/", os.sep))
            if isinstance(found, str):
                skipped.append(Skipped(rel, found))
            else:
                files.append((rel, *found))
        stack.extend(reversed(subdirs))
    return files, dirs, skipped


def _stat_file(path: str, root_real: str) -> tuple[str, int, int, int, int, int] | str:
    """(real, size, mtime_ns, inode, ctime_ns, device) of a regular file inside the root,
    or why not."""
    real = _fs.try_realpath(path)
    if real is None or not _fs.is_path_inside(root_real, real):
        return "resolves outside the skill folder"
    try:
        info = os.stat(real)
    except OSError as exc:
        return f"cannot stat: {exc.strerror or exc}"
    if not st.S_ISREG(info.st_mode):
        return "not a regular file"
    return real, info.st_size, info.st_mtime_ns, info.st_ino, info.st_ctime_ns, info.st_dev


def _stat_plain(real: str) -> tuple[str, int, int, int, int, int] | str:
    """:func:`_stat_file` for a path known to be real and inside the root."""
    try:
        info = os.lstat(real)
    except OSError as exc:
        return f"cannot stat: {exc.strerror or exc}"
    if not st.S_ISREG(info.st_mode):
        return "not a regular file"
    return real, info.st_size, info.st_mtime_ns, info.st_ino, info.st_ctime_ns, info.st_dev


def _read(listing: _Listing, seen: _Seen, budget: int) -> bytes | str:
    """The bytes of one walked file, opened through the folder the walk saw."""
    real, ino, dev = seen[1], seen[4], seen[6]
    try:
        fd = _fs.open_contained(real, listing.root_real, anchor_identity=listing.root_id)
    except _fs.PathChanged:
        return "changed while it was read (a folder on its path was replaced)"
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            return "changed while it was read (a folder on its path became a symlink)"
        return f"cannot open: {exc.strerror or exc}"
    try:
        info = os.fstat(fd)
        if not st.S_ISREG(info.st_mode):
            return "not a regular file"
        if (info.st_dev, info.st_ino) != (dev, ino):
            return "changed while it was read (another file is at its path)"
        data = _fs.read_at_most(fd, budget + 1)
        if len(data) > budget:
            # Grown past the limit since the walk: never serve a cut-off file.
            return f"larger than the {budget} bytes left under the per-skill limit"
        return data
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    finally:
        os.close(fd)


def _unchanged_identity(seen: _Seen, size: int) -> tuple[int, ...] | None:
    """The walk's identity of a file (device, inode, size, mtime, ctime) if the file
    still has it after being read, so the bytes read are the ones it names."""
    try:
        now = os.stat(seen[1])
    except OSError:
        return None
    identity = (seen[6], seen[4], seen[2], seen[3], seen[5])
    after = (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns, now.st_ctime_ns)
    return identity if after == identity and size == seen[2] else None


def _capture(skill_path: str, listing: _Listing, limits: FileLimits) -> SkillFiles:
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
        data = _read(listing, seen, budget)
        if rel == SKILL_FILE and not isinstance(data, str):
            md_identity = _unchanged_identity(seen, len(data))
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
    return _capture(skill_path, _walk(base_dir, skill_file, real_dir), limits)


class SkillFilesCache:
    """Re-reads a skill folder's bytes only when its stat signature changed.

    The walk (names, sizes, mtimes, inodes) runs on every :meth:`get`; bytes are read
    again only when it differs from the previous walk of the same folder.
    """

    def __init__(self, *, limits: FileLimits = DEFAULT_LIMITS) -> None:
        self.limits = limits
        self._entries: dict[tuple[str, str, str], tuple[_Listing, SkillFiles]] = {}
        self.reads = 0

    def get(
        self, skill_path: str, base_dir: Path, skill_file: Path, real_dir: Path | None = None
    ) -> SkillFiles:
        key = (skill_path, os.fspath(base_dir), os.fspath(skill_file))
        listing = _walk(base_dir, skill_file, real_dir)
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
