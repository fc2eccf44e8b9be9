"""Reading one plugin folder's manifest into a :class:`PluginRecord` (spec §3.6).

Input: a plugin root (a real path) and how it was found. Output: the record OpenClaw's
manifest registry builds for it, or an error message. Two kinds of folder are
plugins: an OpenClaw plugin with ``openclaw.plugin.json`` (``id`` and a
``configSchema`` object required; ``skills`` lists its skill folders), and a bundle
in another tool's format, whose skill folders come from its manifest and from
default folder names (Claude: ``.claude-plugin/plugin.json`` or any of ``skills/``,
``commands/``, ``agents/``, …; Codex: ``.codex-plugin/plugin.json``; Cursor:
``.cursor-plugin/plugin.json``). Manifests are JSON5 and read as SKILL.md files are
(no symlink, regular, inside the plugin root, bounded). Nothing here decides
whether a plugin is enabled: that is :mod:`skillbook.pipeline.discovery.plugins`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from skillbook.base import verified_read as _verified_read
from skillbook.base.js import js_trim, load_json5

Origin = Literal["config", "workspace", "bundled", "global"]
BundleFormat = Literal["claude", "codex", "cursor"]

MANIFEST_FILE: Final = "openclaw.plugin.json"
CLAUDE_MANIFEST: Final = ".claude-plugin/plugin.json"
CODEX_MANIFEST: Final = ".codex-plugin/plugin.json"
CURSOR_MANIFEST: Final = ".cursor-plugin/plugin.json"
#: Entry files that make a folder an OpenClaw plugin without a package.json.
ENTRY_CANDIDATES: Final = ("index.ts", "index.js", "index.mjs", "index.cjs")
#: Manifests and package.json files are small; a larger one is refused unread.
MAX_MANIFEST_BYTES: Final = 1 << 20
#: Folders whose presence makes a folder a Claude bundle (without a manifest).
_CLAUDE_MARKERS: Final = (
    "skills",
    "commands",
    "agents",
    "hooks/hooks.json",
    ".mcp.json",
    ".lsp.json",
    "settings.json",
)
_SLUG_RE: Final = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True, slots=True)
class PluginRecord:
    """One plugin the registry knows: where it is, what it declares."""

    id: str
    origin: Origin
    root_dir: str
    manifest_path: str
    #: Declared skill folders, relative to ``root_dir`` (as written, trimmed).
    skills: tuple[str, ...] = ()
    format: Literal["openclaw", "bundle"] = "openclaw"
    bundle_format: BundleFormat | None = None
    #: ``kind`` as declared: one string or several (memory plugins use ``"memory"``).
    kind: str | tuple[str, ...] | None = None
    legacy_ids: tuple[str, ...] = ()
    providers: tuple[str, ...] = ()
    #: Bundle capabilities (``skills``, ``commands``, …).
    capabilities: tuple[str, ...] = ()

    def has_kind(self, kind: str) -> bool:
        return kind == self.kind if isinstance(self.kind, str) else kind in (self.kind or ())

    @property
    def multi_kind(self) -> bool:
        return isinstance(self.kind, tuple) and len(self.kind) > 1


# --------------------------------------------------------------------------- reading


def read_json_file(
    path: str, root_real: str, *, json5: bool = True
) -> tuple[Any, None] | tuple[None, str]:
    """``(value, None)`` or ``(None, why)`` for a JSON(5) file inside ``root_real``."""
    got = _verified_read.read_contained(path, root_real=root_real, max_bytes=MAX_MANIFEST_BYTES)
    if isinstance(got, _verified_read.ReadFailure):
        if got.kind == _verified_read.MISSING:
            return None, "missing"
        return None, f"unsafe or unreadable ({_verified_read.describe_failure(got, path)[2]})"
    try:
        text = got.decode("utf-8-sig")
        return (load_json5(text) if json5 else json.loads(text)), None
    except ValueError as exc:  # UnicodeDecodeError and JSON errors are ValueErrors
        return None, f"failed to parse: {str(exc).splitlines()[0] if str(exc) else exc!r}"


def _strings(value: Any) -> tuple[str, ...]:
    """A list of strings, trimmed, blanks and non-strings dropped (a string is one item)."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return ()
    return tuple(t for t in (js_trim(v) for v in value if isinstance(v, str)) if t)


def _unique(*groups: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item for group in groups for item in group))


def _optional_string(value: Any) -> str | None:
    return (js_trim(value) or None) if isinstance(value, str) else None


def _kind(value: Any) -> str | tuple[str, ...] | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(k, str) for k in value):
        return value[0] if len(value) == 1 else tuple(value)
    return None


def _manifest(path: str, root_dir: str, *, optional: bool = False) -> Mapping[str, Any] | str:
    """The manifest object at ``path``, ``{}`` when ``optional`` and absent, else why not."""
    raw, why = read_json_file(path, root_dir)
    if why == "missing":
        return {} if optional else f"plugin manifest not found: {path}"
    if why is not None:
        return f"plugin manifest {path}: {why}"
    if not isinstance(raw, Mapping):
        return f"plugin manifest {path} must be an object"
    return raw


def openclaw_record(root_dir: str, origin: Origin) -> PluginRecord | str:
    """``openclaw.plugin.json`` of ``root_dir`` as a record, or why it cannot be one."""
    path = os.path.join(root_dir, MANIFEST_FILE)
    raw = _manifest(path, root_dir)
    if isinstance(raw, str):
        return raw
    plugin_id = _optional_string(raw.get("id"))
    if plugin_id is None:
        return f"plugin manifest {path} requires id"
    if not isinstance(raw.get("configSchema"), Mapping):
        return f"plugin manifest {path} requires configSchema"
    return PluginRecord(
        id=plugin_id,
        origin=origin,
        root_dir=root_dir,
        manifest_path=path,
        skills=_strings(raw.get("skills")) if isinstance(raw.get("skills"), list) else (),
        kind=_kind(raw.get("kind")),
        legacy_ids=_strings(raw.get("legacyPluginIds"))
        if isinstance(raw.get("legacyPluginIds"), list)
        else (),
        providers=_strings(raw.get("providers")) if isinstance(raw.get("providers"), list) else (),
    )


def detect_bundle_format(root_dir: str) -> BundleFormat | None:
    """Which bundle format a folder is in, if any (OpenClaw's order of checks)."""

    def exists(rel: str) -> bool:
        return os.path.exists(os.path.join(root_dir, rel))

    if exists(CODEX_MANIFEST):
        return "codex"
    if exists(CURSOR_MANIFEST):
        return "cursor"
    if exists(CLAUDE_MANIFEST):
        return "claude"
    if exists(MANIFEST_FILE) or any(exists(c) for c in ENTRY_CANDIDATES):
        return None
    return "claude" if any(exists(m) for m in _CLAUDE_MARKERS) else None


def slugify_id(name: str | None, root_dir: str) -> str:
    """A bundle's id: its manifest ``name`` (else the folder name) as a lowercase slug."""
    raw = (js_trim(name or "").lower()) or js_trim(os.path.basename(root_dir)).lower()
    return _SLUG_RE.sub("-", raw).strip("-") or "bundle-plugin"


def _defaults(root_dir: str, names: Iterable[str]) -> list[str]:
    return [n for n in names if os.path.exists(os.path.join(root_dir, n))]


def claude_command_roots(raw: Mapping[str, Any], root_dir: str) -> tuple[str, ...]:
    """A Claude bundle's command folders: ``commands/`` if present, then the declared ones."""
    return _unique(_defaults(root_dir, ["commands"]), _strings(raw.get("commands")))


def bundle_record(root_dir: str, fmt: BundleFormat, origin: Origin) -> PluginRecord | str:
    """A bundle's manifest (Claude's may be absent) as a record, or why it cannot be one."""
    rel = {"codex": CODEX_MANIFEST, "cursor": CURSOR_MANIFEST, "claude": CLAUDE_MANIFEST}[fmt]
    path = os.path.join(root_dir, rel)
    raw = _manifest(path, root_dir, optional=fmt == "claude")
    if isinstance(raw, str):
        return raw
    skills: tuple[str, ...]
    capabilities: list[str] = []
    if fmt == "codex":
        skills = _strings(raw.get("skills")) or tuple(_defaults(root_dir, ["skills"]))
    elif fmt == "cursor":
        commands = _unique(_defaults(root_dir, [".cursor/commands"]), _strings(raw.get("commands")))
        skills = _unique(_defaults(root_dir, ["skills"]), _strings(raw.get("skills")), commands)
        capabilities += ["commands"] if commands else []
    else:
        commands = claude_command_roots(raw, root_dir)
        skills = _unique(
            _unique(_defaults(root_dir, ["skills"]), _strings(raw.get("skills"))),
            commands,
            _unique(_defaults(root_dir, ["agents"]), _strings(raw.get("agents"))),
            _unique(_defaults(root_dir, ["output-styles"]), _strings(raw.get("outputStyles"))),
        )
        capabilities += ["commands"] if commands else []
    if skills:
        capabilities.insert(0, "skills")
    return PluginRecord(
        id=slugify_id(_optional_string(raw.get("name")), root_dir),
        origin=origin,
        root_dir=root_dir,
        manifest_path=path,
        skills=skills,
        format="bundle",
        bundle_format=fmt,
        capabilities=tuple(capabilities),
    )
