"""The Skills extension's formats: ``skill://`` URIs, ``sha256:`` digests, names, MIME types.

Input: skill names, relative paths, URIs and file bytes. Output: the encoded
``skill://<skill-path>/<path>`` URIs, the digests and MIME types a manifest lists, the
text-or-blob choice, and the checks a client runs on what a server sent (digest
format, name rules, URI containment, §3.1 relative resolution). Pure: no disk, no
``mcp`` import; shared by the server (:mod:`skillbook.mcp._skillfiles`) and the client.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from urllib.parse import quote

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

# Segments are percent-encoded except for characters RFC 3986 allows there; Agent
# Skills names and ordinary file names come out unchanged.
_AUTHORITY_SAFE = "!$&'()*+,;="
_SEGMENT_SAFE = "!$&'()*+,;=:@"
#: Characters ``quote`` never escapes (RFC 3986 unreserved) and the segment separator:
#: a name or path of only these is its own encoding (most are; no per-segment call).
_UNESCAPED = re.compile(r"[A-Za-z0-9_.~/-]*")
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
    if "/" not in name and _UNESCAPED.fullmatch(name):
        return name
    return quote(name, safe=_AUTHORITY_SAFE)


def encode_file_path(rel: str) -> str:
    """A ``/``-separated path relative to the skill root, each segment percent-encoded."""
    if _UNESCAPED.fullmatch(rel):
        return rel
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
