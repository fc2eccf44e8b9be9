"""Plugin skill folders (spec §3.6): which plugins exist, which are on, what they declare.

Input: the workspace, the folders (:class:`~skillbook.config.paths.Paths`), the validated
config and the environment. Output: a :class:`PluginRegistry` (every plugin found,
with a diagnostic for each one that could not be read) and, through
:class:`PluginSkillSource`, the skills of the enabled plugins' skill folders, loaded
with the ``openclaw-extra`` label right after ``skills.load.extraDirs``.

Where plugins are found, in OpenClaw's order (its manifest registry):

1. each ``plugins.load.paths`` entry (origin ``config``): a plugin folder, a folder
   of plugins, or a plugin entry file;
2. ``<workspace>/.openclaw/extensions/*`` (origin ``workspace``);
3. ``$SKILLBOOK_BUNDLED_PLUGINS_DIR/*`` (else ``$OPENCLAW_BUNDLED_PLUGINS_DIR``; origin
   ``bundled``; skillbook ships none);
4. ``<state dir>/extensions/*`` (origin ``global``).

A child folder is a plugin when its ``package.json`` lists ``openclaw.extensions``
entry files, when it is a bundle (:func:`~skillbook.pipeline.discovery.plugin_manifest.detect_bundle_format`),
or when it has an ``index.{ts,js,mjs,cjs}``; entry files directly in the folder are
plugins rooted there. Symlinked children are not followed (as Node's ``Dirent``), and
a plugin whose files are world-writable or owned by another user is blocked.

Which plugins contribute skills (OpenClaw's activation): nothing with
``plugins.enabled: false``; never one in ``plugins.deny`` or with
``plugins.entries.<id>.enabled: false``; a workspace plugin only when allowed or
enabled explicitly; with a non-empty ``plugins.allow``, only the listed ones (legacy
ids and provider ids count for their plugin); bundled plugins only when enabled
explicitly; ``acpx`` not when ``acp.enabled`` is false; of the memory plugins, only
the one in ``plugins.slots.memory`` (default ``memory-core``). OpenClaw drops the
others in silence; here each plugin that declares skills and is off gets an ``info``
diagnostic saying why.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from skillbook import diagnostics as dg
from skillbook.base import fs as _fs
from skillbook.base.js import js_trim, locale_compare_key
from skillbook.config.file import Config, PluginsConfig
from skillbook.config.paths import Paths, resolve_user_path
from skillbook.diagnostics import Diagnostic
from skillbook.model import Source
from skillbook.pipeline.cache.footprint import make_open, real
from skillbook.pipeline.discovery.plugin_discovery import Candidate, find_candidates
from skillbook.pipeline.discovery.plugin_manifest import (
    Origin,
    PluginRecord,
    bundle_record,
    openclaw_record,
)
from skillbook.pipeline.discovery.root_scanner import RootScanner
from skillbook.pipeline.discovery.sources import Precedence, SourceLoad, local_precedence

__all__ = [
    "DEFAULT_MEMORY_PLUGIN",
    "PluginPolicy",
    "PluginRegistry",
    "PluginSkillSource",
    "activation",
    "load_registry",
    "plugin_skill_dirs",
]

#: The memory slot's plugin when ``plugins.slots.memory`` is not set.
DEFAULT_MEMORY_PLUGIN: Final = "memory-core"
#: The folder of bundled plugins (skillbook ships none); the OpenClaw name is the fallback.
BUNDLED_PLUGINS_ENV: Final = "SKILLBOOK_BUNDLED_PLUGINS_DIR"
OPENCLAW_BUNDLED_PLUGINS_ENV: Final = "OPENCLAW_BUNDLED_PLUGINS_DIR"
#: Plugins OpenClaw skips when ``acp.enabled`` is false.
ACP_PLUGIN: Final = "acpx"
_ORIGIN_RANK: Final = {"config": 0, "workspace": 1, "global": 2, "bundled": 3}


@dataclass(frozen=True, slots=True)
class PluginRegistry:
    """Every plugin found, in OpenClaw's order, and what was wrong on the way."""

    records: tuple[PluginRecord, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    #: Chat channel ids the bundled plugins declare (``channels.<id>.enabled`` turns them on).
    channel_ids: frozenset[str] = frozenset()

    def aliases(self) -> dict[str, str]:
        """Provider ids and legacy ids → plugin id (the registry's id normaliser)."""
        pairs = [
            (alias, r.id)
            for r in self.records
            for alias in (*(p for p in r.providers if p != r.id), *r.legacy_ids)
        ]
        return dict(sorted(pairs, key=lambda pair: locale_compare_key(pair[0])))

    def bundled_aliases(self) -> dict[str, str]:
        """Lowercased ids, provider ids and legacy ids of bundled plugins → plugin id."""
        out: dict[str, str] = {}
        for r in self.records:
            if r.origin == "bundled":
                for alias in (r.id, *r.providers, *r.legacy_ids):
                    key = js_trim(alias).lower()
                    if key:
                        out[key] = r.id
        return out


@dataclass(frozen=True, slots=True)
class PluginPolicy:
    """``plugins`` with every id normalised (OpenClaw's ``normalizePluginsConfig``)."""

    enabled: bool = True
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    #: ``None`` = the slot is switched off (``"none"``).
    memory_slot: str | None = DEFAULT_MEMORY_PLUGIN
    context_engine_slot: str | None = None
    entries: Mapping[str, bool | None] = field(default_factory=dict)

    @classmethod
    def of(
        cls, config: PluginsConfig, aliases: Mapping[str, str], *, lower: bool = False
    ) -> PluginPolicy:
        """Normalise: trim, then map aliases (``lower``: look the alias up lowercased)."""

        def norm(raw: str) -> str:
            trimmed = js_trim(raw)
            return aliases.get(trimmed.lower() if lower else trimmed, trimmed)

        entries: dict[str, bool | None] = {}
        for key, entry in config.entries.items():
            pid = norm(key)
            if pid:
                # A later alias of the same plugin keeps an earlier `enabled` it does not set.
                entries[pid] = entry.enabled if entry.enabled is not None else entries.get(pid)
        memory = _slot(config.memory_slot)
        return cls(
            enabled=config.enabled,
            allow=tuple(p for p in map(norm, config.allow) if p),
            deny=tuple(p for p in map(norm, config.deny) if p),
            memory_slot=DEFAULT_MEMORY_PLUGIN if memory is _UNSET else memory,
            context_engine_slot=None if (ce := _slot(config.context_engine_slot)) is _UNSET else ce,
            entries=entries,
        )


_UNSET: Any = object()


def _slot(value: str | None) -> Any:
    trimmed = js_trim(value) if value is not None else ""
    if not trimmed:
        return _UNSET
    return None if trimmed.lower() == "none" else trimmed


# --------------------------------------------------------------------------- registry


def plugin_roots(
    workspace: Path | None, paths: Paths, env: Mapping[str, str]
) -> list[tuple[Origin, str]]:
    """``(origin, folder)`` of the plugin folders in search order (load paths excluded)."""
    roots: list[tuple[Origin, str]] = []
    bundled = js_trim(env.get(BUNDLED_PLUGINS_ENV) or env.get(OPENCLAW_BUNDLED_PLUGINS_ENV) or "")
    ws_root = os.path.join(_fs.abspath(workspace), ".openclaw", "extensions") if workspace else None
    bundled_root = os.fspath(resolve_user_path(bundled, paths.home)) if bundled else None
    same = (
        workspace is not None
        and bundled_root is not None
        and (real(_fs.abspath(workspace), strict=True) or "")
        == (real(bundled_root, strict=True) or "-")
    )
    if ws_root is not None and not same:
        roots.append(("workspace", ws_root))
    if bundled_root is not None:
        roots.append(("bundled", bundled_root))
    roots.append(("global", os.fspath(paths.state_dir / "extensions")))
    return roots


def load_registry(
    workspace: Path | None,
    paths: Paths,
    config: Config,
    *,
    env: Mapping[str, str],
    cwd: Path,
) -> PluginRegistry:
    """Find every plugin and read its manifest (OpenClaw's ``loadPluginManifestRegistry``)."""
    load_paths = [
        os.fspath(resolve_user_path(p, paths.home, cwd=cwd))
        for p in (js_trim(x) for x in config.plugins.load_paths)
        if p
    ]
    found = find_candidates(load_paths, plugin_roots(workspace, paths, env), uid=_uid())
    if load_paths or found.candidates or found.diagnostics:
        make_open("plugins")
    diags = list(found.diagnostics)
    records: list[PluginRecord] = []
    seen: dict[str, tuple[Candidate, int]] = {}
    for cand in found.candidates:
        record = (
            bundle_record(cand.root_dir, cand.bundle_format, cand.origin)
            if cand.bundle_format is not None
            else openclaw_record(cand.root_dir, cand.origin)
        )
        if isinstance(record, str):
            diags.append(
                dg.warning(
                    "plugin.manifest-invalid",
                    f"{record}; the plugin is not loaded",
                    path=Path(cand.root_dir),
                )
            )
            continue
        too_new = cand.incompatible(env)
        if too_new is not None:
            diags.append(
                dg.warning(
                    "plugin.incompatible",
                    f"plugin {record.id!r}: {too_new}; not loaded",
                    path=Path(cand.root_dir) / "package.json",
                )
            )
            continue
        earlier = seen.get(record.id)
        if earlier is not None:
            first, index = earlier
            if _same_dir(first.root_dir, cand.root_dir):
                if _ORIGIN_RANK[cand.origin] < _ORIGIN_RANK[first.origin]:
                    records[index] = record
                    seen[record.id] = (cand, index)
                continue
            # OpenClaw warns and still keeps both plugins (both contribute skills).
            diags.append(
                dg.warning(
                    "plugin.duplicate-id",
                    f"plugin id {record.id!r} is used by {first.origin} plugin {first.source} and "
                    f"{cand.origin} plugin {cand.source}; both are loaded, as OpenClaw does: "
                    "remove or rename one",
                    path=Path(cand.source),
                )
            )
        else:
            seen[record.id] = (cand, len(records))
        records.append(record)
    return PluginRegistry(tuple(records), tuple(diags), found.channel_ids)


def _same_dir(a: str, b: str) -> bool:
    if a == b:
        return True
    real_a, real_b = _fs.try_realpath(a), _fs.try_realpath(b)
    return real_a is not None and real_a == real_b


def _uid() -> int | None:
    getuid = getattr(os, "getuid", None)
    return getuid() if getuid is not None and os.name != "nt" else None


# --------------------------------------------------------------------------- activation


def activation(
    record: PluginRecord,
    policy: PluginPolicy,
    root: Config,
    channel_ids: frozenset[str],
    *,
    channel_first: bool = False,
) -> tuple[bool, str]:
    """``(on, reason)``: OpenClaw's plugin activation without auto-enable rules.

    ``channel_first`` is the command loader's variant, where a bundled channel enabled
    in ``channels.<id>`` wins before the allowlist is consulted.
    """
    pid, origin = record.id, record.origin
    entry = policy.entries.get(pid)
    allowed = pid in policy.allow
    channel = origin == "bundled" and _channel_enabled(root, pid, channel_ids)
    explicit = entry is True or channel or policy.memory_slot == pid
    explicit = explicit or policy.context_engine_slot == pid or (origin != "bundled" and allowed)
    refused = _refusal(pid, origin, policy, entry, allowed)
    if refused is not None:
        return False, refused
    if policy.memory_slot == pid or policy.context_engine_slot == pid:
        return True, "selected slot"
    if channel_first and channel:
        return True, "channel enabled in config"
    if policy.allow and not allowed:
        return False, f"`plugins.allow` does not list {pid!r}"
    if explicit:
        return True, "enabled in config"
    return _by_default(pid, origin, channel)


def _refusal(
    pid: str, origin: str, policy: PluginPolicy, entry: bool | None, allowed: bool
) -> str | None:
    """Why the plugin is off whatever else says (None: nothing refuses it)."""
    if not policy.enabled:
        return "plugins are disabled (`plugins.enabled: false`)"
    if pid in policy.deny:
        return "it is in `plugins.deny`"
    if entry is False:
        return f"`plugins.entries.{pid}.enabled` is false"
    if (
        origin == "workspace"
        and not allowed
        and entry is not True
        and policy.context_engine_slot != pid
    ):
        return (
            f"workspace plugins are off by default: add {pid!r} to `plugins.allow` or set "
            f"`plugins.entries.{pid}.enabled: true`"
        )
    return None


def _by_default(pid: str, origin: str, channel: bool) -> tuple[bool, str]:
    """A plugin no setting names: bundled ones are off unless their channel is on."""
    if origin == "bundled" and channel:
        return True, "channel configured"
    if origin == "bundled":
        return (
            False,
            f"bundled plugins are off by default: set `plugins.entries.{pid}.enabled: true`",
        )
    return True, "on by default"


def _channel_enabled(root: Config, plugin_id: str, channel_ids: frozenset[str]) -> bool:
    key = js_trim(plugin_id).lower()
    if key not in channel_ids:
        return False
    channels = root.raw.get("channels")
    entry = channels.get(key) if isinstance(channels, Mapping) else None
    return isinstance(entry, Mapping) and entry.get("enabled") is True


def _memory_decision(record: PluginRecord, slot: str | None, selected: str | None) -> str | None:
    """Why a memory plugin is off (None = on); only the slot's plugin contributes."""
    if not record.has_kind("memory") or record.multi_kind:
        return None
    if slot is None:
        return "the memory slot is off (`plugins.slots.memory: none`)"
    if slot != record.id:
        return f"the memory slot holds {slot!r} (`plugins.slots.memory`)"
    if selected is not None and selected != record.id:
        return f"the memory slot is already filled by {selected!r}"
    return None


def plugin_skill_dirs(
    registry: PluginRegistry, config: Config
) -> tuple[list[str], list[Diagnostic]]:
    """OpenClaw's ``resolvePluginSkillDirs``: the enabled plugins' skill folders, in order."""
    policy = PluginPolicy.of(config.plugins, registry.aliases())
    acp_off = config.resolve_path("acp.enabled") is False
    dirs: list[str] = []
    diags: list[Diagnostic] = []
    selected: str | None = None
    for record in registry.records:
        if not record.skills:
            continue
        on, why = activation(record, policy, config, registry.channel_ids)
        if on and acp_off and record.id == ACP_PLUGIN:
            on, why = False, "`acp.enabled` is false"
        if on:
            memory_off = _memory_decision(record, policy.memory_slot, selected)
            if memory_off is not None:
                on, why = False, memory_off
            elif record.has_kind("memory"):
                selected = selected if record.multi_kind else record.id
        if not on:
            if record.origin != "bundled":
                diags.append(
                    dg.info(
                        "plugin.inactive",
                        f"plugin {record.id!r} ({record.origin}) is off, so its skill folders are not loaded: {why}",
                        path=Path(record.manifest_path),
                    )
                )
            continue
        for raw in record.skills:
            candidate = _fs.abspath(os.path.join(record.root_dir, raw))
            if not os.path.exists(candidate):
                diags.append(
                    dg.warning(
                        "plugin.path-missing",
                        f"plugin skill path not found ({record.id}): {candidate}",
                        path=Path(candidate),
                    )
                )
                continue
            real_root, real = _fs.try_realpath(record.root_dir), _fs.try_realpath(candidate)
            if real_root is None or real is None or not _fs.is_path_inside(real_root, real):
                diags.append(
                    dg.warning(
                        "plugin.path-escape",
                        f"plugin skill path escapes plugin root ({record.id}): {candidate}",
                        path=Path(candidate),
                    )
                )
                continue
            if candidate not in dirs:
                dirs.append(candidate)
    return dirs, diags


@dataclass(frozen=True, slots=True)
class PluginSkillSource:
    """The skill folders of the enabled plugins, as one ``openclaw-extra`` source."""

    registry: PluginRegistry
    config: Config
    scanner: RootScanner = field(compare=False, repr=False)
    precedence: Precedence = field(default_factory=lambda: local_precedence(Source.EXTRA))

    @property
    def label(self) -> str:
        return Source.EXTRA.value

    def load(self) -> SourceLoad:
        dirs, diags = plugin_skill_dirs(self.registry, self.config)
        skills = []
        for folder in dirs:
            found, found_diags = self.scanner.scan(Source.EXTRA, folder)
            skills.extend(found)
            diags.extend(found_diags)
        return SourceLoad(tuple(skills), tuple(diags))
