"""Skills-extension entries as a client receives them: validated, and the bytes checked.

Input: the raw JSON of one ``skills/list`` / ``skills/get`` entry, and the bytes a
server sent for one of its files. Output: a :class:`SkillEntry` (frontmatter and a
per-file manifest of ``{uri, digest, size}``, or ``resources`` None for a dynamic
skill) or the reason it must not be loaded, and the checks of fetched bytes against it
(§4.4: listed, size, ``sha256:`` digest, and for ``SKILL.md`` the frontmatter field by
field). Pure: no connection, no disk, no ``mcp`` import.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any
from urllib.parse import unquote

from skillbook.errors import SourceError as ClientError
from skillbook.mcp import _skillformat as fmt

_SCHEME_RE = re.compile(r"[a-z][a-z0-9+.-]*")
_MAX_SEGMENT_BYTES = 255


@dataclass(frozen=True, slots=True)
class ManifestItem:
    uri: str
    digest: str
    size: int


@dataclass(frozen=True, slots=True)
class SkillEntry:
    """A validated ``skills/list`` / ``skills/get`` entry; ``resources`` None = dynamic."""

    uri: str
    frontmatter: Mapping[str, Any]
    resources: tuple[ManifestItem, ...] | None
    #: ``uri`` split into decoded, filesystem-safe parts: scheme, then path segments.
    segments: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.segments[-2]

    @property
    def total_size(self) -> int:
        return sum(item.size for item in self.resources or ())

    def item(self, uri: str) -> ManifestItem | None:
        return next((i for i in self.resources or () if i.uri == uri), None)

    def rel_parts(self, uri: str) -> tuple[str, ...] | None:
        """The decoded path of a manifest URI below the skill root, or None."""
        if not fmt.is_within_skill(self.uri, uri):
            return None
        parts = uri_segments(uri)
        root = self.segments[:-1]
        if parts is None or parts[: len(root)] != root or len(parts) <= len(root):
            return None
        return parts[len(root) :]

    def to_json(self) -> dict[str, Any]:
        resources: Any = (
            "dynamic"
            if self.resources is None
            else [{"uri": i.uri, "digest": i.digest, "size": i.size} for i in self.resources]
        )
        return {"uri": self.uri, "frontmatter": _thaw(self.frontmatter), "resources": resources}


def _thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_thaw(v) for v in value]
    return value


def uri_segments(uri: str) -> tuple[str, ...] | None:
    """``scheme://a/b%20c/SKILL.md`` → ``("scheme", "a", "b c", "SKILL.md")``, or None
    when a part could not be a folder or file name (empty, ``.``, ``..``, separators)."""
    scheme, sep, rest = uri.partition("://")
    if not sep or _SCHEME_RE.fullmatch(scheme) is None:
        return None
    parts = [scheme]
    for raw in rest.split("/"):
        try:
            seg = unquote(raw, errors="strict") if "%" in raw else raw
        except UnicodeDecodeError:
            return None
        if (
            not seg
            or seg in (".", "..")
            or any(c in seg for c in "/\\\x00")
            or len(seg.encode("utf-8", "surrogatepass")) > _MAX_SEGMENT_BYTES
        ):
            return None
        parts.append(seg)
    return tuple(parts)


def parse_entry(raw: Any) -> SkillEntry | str:
    """Validate one entry (§1.4); a string says why it must not be loaded."""
    if not isinstance(raw, Mapping):
        return "the entry is not an object"
    uri, fm, resources = raw.get("uri"), raw.get("frontmatter"), raw.get("resources")
    if not isinstance(uri, str) or not uri.endswith("/" + fmt.SKILL_FILE):
        return f"`uri` must name a {fmt.SKILL_FILE} (got {uri!r})"
    segments = uri_segments(uri)
    if segments is None or len(segments) < 3:
        return f"`uri` {uri!r} is not a usable skill URI"
    if not isinstance(fm, Mapping):
        return "`frontmatter` is missing or not an object"
    name, description = fm.get("name"), fm.get("description")
    if not fmt.is_valid_skill_name(name):
        return f"frontmatter name {name!r} breaks the Agent Skills name rules"
    if name != segments[-2]:
        return f"the final path segment {segments[-2]!r} differs from the name {name!r}"
    if not isinstance(description, str) or not description.strip():
        return "frontmatter description is missing or empty"
    if resources == "dynamic":
        return SkillEntry(uri, MappingProxyType(dict(fm)), None, segments)
    if not isinstance(resources, list):
        return '`resources` must be the file manifest or the string "dynamic"'
    items: list[ManifestItem] = []
    seen: set[str] = set()
    for i, item in enumerate(resources):
        problem = _item_problem(uri, item)
        if problem:
            return f"resources[{i}]: {problem}"
        assert isinstance(item, Mapping)
        if item["uri"] in seen:
            return f"resources[{i}]: {item['uri']!r} is listed twice"
        seen.add(item["uri"])
        items.append(ManifestItem(item["uri"], item["digest"].lower(), item["size"]))
    if uri not in seen:
        return f"the manifest has no entry for {fmt.SKILL_FILE} itself"
    entry = SkillEntry(uri, MappingProxyType(dict(fm)), tuple(items), segments)
    bad = next((i.uri for i in items if entry.rel_parts(i.uri) is None and i.uri != uri), None)
    return entry if bad is None else f"{bad!r} is not a usable file path inside the skill"


def _item_problem(skill_uri: str, item: Any) -> str:
    if not isinstance(item, Mapping):
        return "not an object"
    uri, digest, size = item.get("uri"), item.get("digest"), item.get("size")
    if not isinstance(uri, str) or not fmt.is_within_skill(skill_uri, uri):
        return f"{uri!r} is not inside the skill root"
    if not isinstance(digest, str) or not fmt.is_valid_digest(digest.lower()):
        return f"digest {digest!r} is not sha256: and 64 hex digits"
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        return f"size {size!r} is not an integer >= 0"
    return ""


def limit_problem(entry: SkillEntry, *, max_files: int, max_bytes: int) -> str | None:
    """Why an entry exceeds the per-skill limits (checked before any fetch), or None."""
    if entry.resources is None:
        return None
    if len(entry.resources) > max_files:
        return f"{len(entry.resources)} files exceed the limit of {max_files}"
    if entry.total_size > max_bytes:
        return f"{entry.total_size} bytes exceed the limit of {max_bytes}"
    return None


def verify_bytes(entry: SkillEntry, uri: str, data: bytes) -> ClientError | None:
    """§4.4: the file must be listed, and match its size and then its digest."""
    item = entry.item(uri)
    if item is None:
        return ClientError("mcp.unlisted-file", f"{uri} is not in the skill's manifest")
    if len(data) != item.size:
        return ClientError(
            "mcp.digest-mismatch",
            f"{uri}: the server sent {len(data)} bytes, the manifest says {item.size}",
        )
    got = fmt.digest_of(data)
    if got != item.digest:
        return ClientError(
            "mcp.digest-mismatch", f"{uri}: content digest {got} differs from {item.digest}"
        )
    return None


def frontmatter_problem(entry: SkillEntry, data: bytes) -> str | None:
    """Compare the fetched SKILL.md's frontmatter with the entry's, field by field."""
    from skillbook.pipeline.parse.skill_file import parse_skill_text

    parsed = parse_skill_text(data)
    if not parsed.has_frontmatter or not parsed.frontmatter.yaml_ok:
        return "the fetched SKILL.md has no YAML frontmatter mapping"
    got, want = parsed.frontmatter.data, entry.frontmatter
    for key in dict.fromkeys([*want, *got]):
        where = _difference(want.get(key, _ABSENT), got.get(key, _ABSENT), key)
        if where:
            return f"frontmatter field {where} differs between the entry and the file"
    return None


_ABSENT = object()


def _difference(want: Any, got: Any, path: str) -> str:
    """The first path where two JSON-like values differ; bool, number and str are kept apart."""
    if isinstance(want, Mapping) and isinstance(got, Mapping):
        for key in dict.fromkeys([*want, *got]):
            found = _difference(want.get(key, _ABSENT), got.get(key, _ABSENT), f"{path}.{key}")
            if found:
                return found
        return ""
    if isinstance(want, list | tuple) and isinstance(got, list | tuple):
        if len(want) != len(got):
            return f"`{path}`"
        for i, (a, b) in enumerate(zip(want, got, strict=True)):
            found = _difference(a, b, f"{path}[{i}]")
            if found:
                return found
        return ""
    if _kind(want) != _kind(got) or want != got:
        return f"`{path}`"
    return ""


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__
