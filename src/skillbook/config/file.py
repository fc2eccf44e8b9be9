"""OpenClaw's ``openclaw.json``, read as it is: the ``skills`` and ``agents`` sections.

Input: a JSON5 file (:func:`load_config`) or an already parsed mapping
(:meth:`Config.from_mapping`). Output: a frozen :class:`Config` whose ``skills``
section is validated strictly against OpenClaw's schema (spec §10 "Config
schema") plus skillbook's extensions, and whose ``agents`` section is validated
for the keys skillbook reads. Anything wrong raises :class:`ConfigError` naming the
file, the key path and what was expected, e.g.
``openclaw.json: skills.limits.maxSkillsInPrompt: expected int >= 0, got "many"``.

Strict (unknown keys rejected, e.g. the legacy ``skills.policy``):
``skills``, ``skills.load``, ``skills.install``, ``skills.limits``,
``skills.prompt`` and each ``skills.entries.<key>`` (custom fields belong under
``entries.<key>.config``). skillbook extensions: ``skills.compat`` (the OpenClaw release reproduced),
``skills.load.allowSymlinkTargets``, ``skills.load.grouped``, ``skills.load.mode``,
``skills.prompt.priority`` and ``skills.readTool``.

Open: ``agents``, ``agents.defaults`` and ``agents.list[]`` entries hold many keys
that belong to OpenClaw (models, tools, sandbox, …); skillbook checks only the ones
it reads (``skills``, ``workspace``, ``id``, ``default``) and lets the others through.
``plugins`` likewise: the keys plugin skill folders depend on (``enabled``, ``allow``,
``deny``, ``load.paths``, ``slots``, ``entries.<id>.enabled``) are checked, the rest is
OpenClaw's. ``skills.mcp.servers`` (skillbook's remote MCP servers) is strict.
Every other top-level section is kept untouched in :attr:`Config.raw`, because
``requires.config`` gates read arbitrary paths such as ``browser.enabled``.

Which file is read is decided in one place, :func:`skillbook.config.paths.locate_config`
(``--config`` > ``$SKILLBOOK_CONFIG_PATH`` > skillbook's own or OpenClaw's file at its
default place); :func:`read_config` reads what it found.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

import msgspec

from skillbook.base.fs import read_file_at_most
from skillbook.base.js import load_json5
from skillbook.base.json5_errors import json5_problem
from skillbook.config.checks import check_allowlist, check_env, check_secrets
from skillbook.config.errors import MISSING, convert, render
from skillbook.config.experience import ExperienceConfig, experience_config
from skillbook.config.mode import Mode
from skillbook.config.schema import (
    _AgentDefaultsS,
    _AgentsS,
    _EmbeddingS,
    _EntryS,
    _ExecS,
    _InstallPolicyS,
    _InstallS,
    _LimitsS,
    _LoadS,
    _PromptS,
    _SecretRefS,
    _SelectionS,
    _SkillsS,
)
from skillbook.config.source_sections import (
    McpServerConfig,
    PluginsConfig,
    mcp_servers,
    plugins_config,
)
from skillbook.errors import ConfigError

if TYPE_CHECKING:
    from skillbook.config.paths import ConfigLocation

__all__ = [
    "AgentConfig",
    "AgentsConfig",
    "Config",
    "EmbeddingConfig",
    "ExecConfig",
    "InstallConfig",
    "InstallPolicyConfig",
    "LimitsConfig",
    "LoadConfig",
    "PromptConfig",
    "RegistryConfig",
    "SecretRef",
    "SelectionConfig",
    "SkillEntryConfig",
    "SkillsConfig",
    "load_config",
    "read_config",
    "resolve_config_path",
]

_EMPTY_MAP: Final[Mapping[str, Any]] = MappingProxyType({})
#: Far above any real config (OpenClaw's are kilobytes); only a device or a runaway
#: file reaches it.
MAX_CONFIG_BYTES: Final = 64 * 1024 * 1024

# --------------------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class SecretRef:
    """``{source, provider, id}``: an apiKey kept in a secret store, not in the file."""

    source: str
    provider: str
    id: str


@dataclass(frozen=True, slots=True)
class SkillEntryConfig:
    """``skills.entries.<skillKey>``."""

    enabled: bool | None = None
    api_key: str | SecretRef | None = None
    #: ``exec.allow``: command prefixes the model may run as this skill unasked.
    exec_allow: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=lambda: _EMPTY_MAP)
    config: Mapping[str, Any] = field(default_factory=lambda: _EMPTY_MAP)

    @property
    def has_api_key(self) -> bool:
        """JavaScript truthiness of ``apiKey``: a SecretRef counts, ``""`` does not."""
        return isinstance(self.api_key, SecretRef) or bool(self.api_key)


@dataclass(frozen=True, slots=True)
class LoadConfig:
    extra_dirs: tuple[str, ...] = ()
    watch: bool | None = None
    watch_debounce_ms: int | None = None
    allow_symlink_targets: tuple[str, ...] = ()
    grouped: bool | None = None
    mode: Mode | None = None


@dataclass(frozen=True, slots=True)
class InstallPolicyConfig:
    """``skills.install.policy``; ``None`` = not set (no restriction)."""

    allowed_kinds: tuple[str, ...] | None = None
    allowed_download_hosts: tuple[str, ...] | None = None
    require_sha256: bool | None = None
    allow_private_network: bool | None = None


@dataclass(frozen=True, slots=True)
class InstallConfig:
    prefer_brew: bool | None = None
    node_manager: str | None = None
    allow_apt: bool | None = None
    allow_pip: bool | None = None
    policy: InstallPolicyConfig = InstallPolicyConfig()


@dataclass(frozen=True, slots=True)
class LimitsConfig:
    """``skills.limits``; ``None`` = not set (each stage applies its own default)."""

    max_candidates_per_root: int | None = None
    max_skills_loaded_per_source: int | None = None
    max_skills_in_prompt: int | None = None
    max_skills_prompt_chars: int | None = None
    max_skill_file_bytes: int | None = None


@dataclass(frozen=True, slots=True)
class PromptConfig:
    priority: str | None = None


@dataclass(frozen=True, slots=True)
class ExecConfig:
    """``skills.exec``: ``policy`` (``ask``, ``allowlist``, ``allow``; None = ``ask``)
    and ``allow``, command prefixes any model command may start with."""

    policy: str | None = None
    allow: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class EmbeddingConfig:
    """``skills.selection.embedding``: which embedding model ranks skills (see docs/selection.md)."""

    provider: str | None = None
    model: str | None = None
    url: str | None = None
    #: The environment variable holding the ``/embeddings`` endpoint's key (never the key).
    api_key_env: str | None = None
    multilingual: bool | None = None


@dataclass(frozen=True, slots=True)
class SelectionConfig:
    """``skills.selection``: query-time selection of the skills a request sees.

    ``None`` = not set; :mod:`skillbook.selection` applies its defaults. ``mode`` is
    ``off`` (OpenClaw's catalog, unchanged), ``auto`` (only when the eligible catalog
    is over the prompt budget) or ``always``.
    """

    mode: str = "off"
    top_k: int | None = None
    backend: str | None = None
    fusion: str | None = None
    min_score: float | None = None
    pinned: tuple[str, ...] = ()
    embedding: EmbeddingConfig = EmbeddingConfig()
    index_dir: str | None = None
    #: The router's margin (:func:`skillbook.selection.router.route`): skills within it of
    #: the best are "ambiguous" (None: the default).
    route_margin: float | None = None
    #: Where the routed skills go: ``message`` (default: in front of the user's
    #: message) or ``system`` (the system prompt's catalog, per turn).
    placement: str | None = None
    #: ``nullSkill``: False turns the null-skill floor off (None: on, the default).
    null_skill: bool | None = None


@dataclass(frozen=True, slots=True)
class RegistryConfig:
    """``skills.registry``: ``url`` of a ClawHub-compatible registry (None = not set)."""

    url: str | None = None


@dataclass(frozen=True, slots=True)
class SkillsConfig:
    #: ``None`` = key absent; the gate normalises (trims, drops blanks, empty = no limit).
    allow_bundled: tuple[str, ...] | None = None
    load: LoadConfig = LoadConfig()
    install: InstallConfig = InstallConfig()
    limits: LimitsConfig = LimitsConfig()
    prompt: PromptConfig = PromptConfig()
    read_tool: str | None = None
    #: ``skills.compat``: the OpenClaw release reproduced (:mod:`skillbook.config.profile`).
    compat: str | None = None
    entries: Mapping[str, SkillEntryConfig] = field(default_factory=lambda: _EMPTY_MAP)
    #: ``skills.mcp.servers``: remote MCP servers whose skills form the lowest source.
    mcp_servers: tuple[McpServerConfig, ...] = ()
    #: ``skills.exec``: who approves the commands a model runs (skillbook extension).
    exec: ExecConfig = ExecConfig()
    selection: SelectionConfig = SelectionConfig()
    #: ``skills.cache``: keep parsed skills on disk between processes (None = default, on).
    cache: bool | None = None
    #: ``skills.registry``: the ClawHub-compatible registry ``skillbook install`` uses.
    registry: RegistryConfig = RegistryConfig()
    #: ``skills.experience``: session recording, learning, review, staleness.
    experience: ExperienceConfig = field(default_factory=ExperienceConfig)


@dataclass(frozen=True, slots=True)
class AgentConfig:
    """One ``agents.list[]`` entry (only the keys skillbook reads)."""

    id: str
    #: ``None`` = no ``skills`` key (inherit the defaults); ``()`` = explicitly none.
    skills: tuple[str, ...] | None = None
    workspace: str | None = None
    default: bool | None = None


@dataclass(frozen=True, slots=True)
class AgentsConfig:
    default_skills: tuple[str, ...] | None = None
    default_workspace: str | None = None
    agents: tuple[AgentConfig, ...] = ()


@dataclass(frozen=True, slots=True)
class Config:
    """A validated ``openclaw.json``. ``raw`` keeps the whole parsed document."""

    skills: SkillsConfig = SkillsConfig()
    agents: AgentsConfig = AgentsConfig()
    plugins: PluginsConfig = field(default_factory=PluginsConfig)
    raw: Mapping[str, Any] = field(default_factory=lambda: _EMPTY_MAP, compare=False, repr=False)
    file: Path | None = None

    @classmethod
    def empty(cls) -> Config:
        return cls()

    @classmethod
    def from_mapping(cls, obj: Any, *, file: Path | None = None) -> Config:
        """Validate an already parsed document; raises :class:`ConfigError`."""
        where = str(file) if file is not None else "config"
        if not isinstance(obj, Mapping):
            raise ConfigError(
                f"{where}: expected a JSON object at the top level, got {render(obj)}",
                key_path="",
                file=file,
            )
        skills = SkillsConfig()
        agents = AgentsConfig()
        if "skills" in obj:
            skills = _build_skills(convert(obj["skills"], _SkillsS, ("skills",), where, file))
            check_allowlist(skills.exec.allow, ["skills", "exec", "allow"], where, file)
            entries_raw = obj["skills"].get("entries")
            if isinstance(entries_raw, Mapping):
                skills = _with_entries(skills, entries_raw, where, file)
            if "mcp" in obj["skills"]:
                servers = mcp_servers(obj["skills"]["mcp"], where, file)
                skills = replace(skills, mcp_servers=servers)
            if "experience" in obj["skills"]:
                learned = experience_config(obj["skills"]["experience"], where, file)
                skills = replace(skills, experience=learned)
        if "agents" in obj:
            agents = _build_agents(convert(obj["agents"], _AgentsS, ("agents",), where, file))
        if "secrets" in obj:
            check_secrets(obj["secrets"], where, file)
        plugins = (
            plugins_config(obj["plugins"], where, file) if "plugins" in obj else PluginsConfig()
        )
        return cls(
            skills=skills,
            agents=agents,
            plugins=plugins,
            raw=MappingProxyType(dict(obj)),
            file=file,
        )

    def source_sections(self) -> tuple[str, ...]:
        """The sections that configure skill sources provided by edge packages
        (:func:`skillbook.pipeline.discovery.sources.configured_sources`); ``skills.mcp`` when it lists servers."""
        return ("skills.mcp",) if self.skills.mcp_servers else ()

    def entry(self, skill_key: str) -> SkillEntryConfig | None:
        """``skills.entries[skill_key]``, or None."""
        return self.skills.entries.get(skill_key)

    def resolve_path(self, path: str) -> Any:
        """The raw value at a dotted path, or :data:`MISSING` (see :func:`resolve_config_path`)."""
        return resolve_config_path(self.raw, path)


# --------------------------------------------------------------------------- loading


def load_config(path: str | os.PathLike[str]) -> Config:
    """Read and validate a JSON5 config file; raises :class:`ConfigError`."""
    file = Path(path)
    try:
        # Bounded: a config that is a link to /dev/zero (or /dev/urandom) was read
        # until memory ran out. A pipe (`-c <(...)`, `-c /dev/stdin`) still works.
        data = read_file_at_most(file, MAX_CONFIG_BYTES + 1)
        if len(data) > MAX_CONFIG_BYTES:
            raise ConfigError(
                f"{file}: cannot read config: larger than {MAX_CONFIG_BYTES} bytes", file=file
            )
        text = data.decode("utf-8-sig")
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read config: {exc}", file=file) from exc
    except UnicodeDecodeError as exc:
        # An editor's other encoding (a Latin-1 "é"): say where and how to fix it, not
        # which codec failed at which byte offset.
        at = exc.start + (3 if data.startswith(b"\xef\xbb\xbf") else 0)  # the BOM is cut first
        line = data.count(b"\n", 0, at) + 1
        column = at - (data.rfind(b"\n", 0, at) + 1) + 1
        raise ConfigError(
            f"{file}:{line}:{column}: cannot read config: byte 0x{data[at]:02x} is not "
            "UTF-8 (save the file as UTF-8)",
            file=file,
        ) from exc
    return Config.from_mapping(_parse_json5(text, file), file=file)


def _parse_json5(text: str, file: Path) -> Any:
    try:
        return load_json5(text)
    except ValueError as exc:
        found = json5_problem(str(exc), text)
        where = f"{file}:{found.line}:{found.column}" if found else str(file)
        problem = found.brief() if found else str(exc)
        raise ConfigError(f"{where}: invalid JSON5: {problem}", key_path="", file=file) from exc


def read_config(location: ConfigLocation) -> Config:
    """The config file a :class:`~skillbook.config.paths.ConfigLocation` names, or the empty config.

    Raises :class:`ConfigError` when the file is unreadable or invalid (a file named
    with ``--config`` or a variable must exist; found files do).
    """
    return load_config(location.file) if location.file is not None else Config.empty()


# --------------------------------------------------------------------------- lookups

_INDEX_RE: Final = re.compile(r"^(?:0|[1-9][0-9]*)$")


def resolve_config_path(raw: Mapping[str, Any], path: str) -> Any:
    """OpenClaw's ``resolveConfigPath``: split on ``.``, drop empty parts, walk objects.

    Arrays are objects in JavaScript, so ``list.0`` indexes; any other non-object on
    the way gives :data:`MISSING` (``undefined``), which is not ``None`` (``null``).
    """
    current: Any = raw
    for part in (p for p in path.split(".") if p):
        if isinstance(current, Mapping):
            current = current.get(part, MISSING)
        elif isinstance(current, list | tuple):
            if part == "length":
                current = len(current)
            elif _INDEX_RE.match(part) and int(part) < len(current):
                current = current[int(part)]
            else:
                current = MISSING
        else:
            return MISSING
    return current


# --------------------------------------------------------------------------- building


def _opt(value: Any) -> Any:
    return None if value is msgspec.UNSET else value


def _tuple(value: Any) -> tuple[str, ...] | None:
    return None if value is msgspec.UNSET else tuple(value)


def _build_install(inst: _InstallS) -> InstallConfig:
    pol = inst.policy if not isinstance(inst.policy, msgspec.UnsetType) else _InstallPolicyS()
    return InstallConfig(
        prefer_brew=_opt(inst.prefer_brew),
        node_manager=_opt(inst.node_manager),
        allow_apt=_opt(inst.allow_apt),
        allow_pip=_opt(inst.allow_pip),
        policy=InstallPolicyConfig(
            allowed_kinds=_tuple(pol.allowed_kinds),
            allowed_download_hosts=_tuple(pol.allowed_download_hosts),
            require_sha256=_opt(pol.require_sha256),
            allow_private_network=_opt(pol.allow_private_network),
        ),
    )


def _build_skills(s: _SkillsS) -> SkillsConfig:
    load = s.load if not isinstance(s.load, msgspec.UnsetType) else _LoadS()
    inst = s.install if not isinstance(s.install, msgspec.UnsetType) else _InstallS()
    lim = s.limits if not isinstance(s.limits, msgspec.UnsetType) else _LimitsS()
    prompt = s.prompt if not isinstance(s.prompt, msgspec.UnsetType) else _PromptS()
    return SkillsConfig(
        allow_bundled=_tuple(s.allow_bundled),
        load=LoadConfig(
            extra_dirs=_tuple(load.extra_dirs) or (),
            watch=_opt(load.watch),
            watch_debounce_ms=_opt(load.watch_debounce_ms),
            allow_symlink_targets=_tuple(load.allow_symlink_targets) or (),
            grouped=_opt(load.grouped),
            mode=_opt(load.mode),
        ),
        install=_build_install(inst),
        limits=LimitsConfig(
            max_candidates_per_root=_opt(lim.max_candidates_per_root),
            max_skills_loaded_per_source=_opt(lim.max_skills_loaded_per_source),
            max_skills_in_prompt=_opt(lim.max_skills_in_prompt),
            max_skills_prompt_chars=_opt(lim.max_skills_prompt_chars),
            max_skill_file_bytes=_opt(lim.max_skill_file_bytes),
        ),
        prompt=PromptConfig(priority=_opt(prompt.priority)),
        read_tool=_opt(s.read_tool),
        exec=_build_exec(s.exec),
        selection=_build_selection(s.selection),
        registry=RegistryConfig(
            url=None if isinstance(s.registry, msgspec.UnsetType) else _opt(s.registry.url)
        ),
        compat=_opt(s.compat),
        cache=_opt(s.cache),
    )


def _build_selection(sel: _SelectionS | msgspec.UnsetType) -> SelectionConfig:
    if isinstance(sel, msgspec.UnsetType):
        return SelectionConfig()
    emb = sel.embedding if not isinstance(sel.embedding, msgspec.UnsetType) else _EmbeddingS()
    return SelectionConfig(
        mode=_opt(sel.mode) or "off",
        top_k=_opt(sel.top_k),
        backend=_opt(sel.backend),
        fusion=_opt(sel.fusion),
        min_score=_opt(sel.min_score),
        pinned=_tuple(sel.pinned) or (),
        embedding=EmbeddingConfig(
            provider=_opt(emb.provider),
            model=_opt(emb.model),
            url=_opt(emb.url),
            api_key_env=_opt(emb.api_key_env),
            multilingual=_opt(emb.multilingual),
        ),
        index_dir=_opt(sel.index_dir),
        route_margin=_opt(sel.route_margin),
        placement=_opt(sel.placement),
        null_skill=_opt(sel.null_skill),
    )


def _build_exec(e: _ExecS | msgspec.UnsetType) -> ExecConfig:
    if isinstance(e, msgspec.UnsetType):
        return ExecConfig()
    return ExecConfig(policy=_opt(e.policy), allow=_tuple(e.allow) or ())


def _with_entries(
    skills: SkillsConfig, entries_raw: Mapping[str, Any], where: str, file: Path | None
) -> SkillsConfig:
    entries: dict[str, SkillEntryConfig] = {}
    for key, value in entries_raw.items():
        e = convert(value, _EntryS, ("skills", "entries", key), where, file)
        if isinstance(e.env, dict):
            # Names only: a NUL in a value is refused per key when a command starts.
            check_env(e.env, ["skills", "entries", key, "env"], where, file, values=False)
        exec_allow = () if isinstance(e.exec, msgspec.UnsetType) else _tuple(e.exec.allow) or ()
        check_allowlist(exec_allow, ["skills", "entries", key, "exec", "allow"], where, file)
        api_key: str | SecretRef | None = None
        if isinstance(e.api_key, _SecretRefS):
            api_key = SecretRef(e.api_key.source, e.api_key.provider, e.api_key.id)
        elif isinstance(e.api_key, str):
            api_key = e.api_key
        entries[key] = SkillEntryConfig(
            enabled=_opt(e.enabled),
            api_key=api_key,
            exec_allow=exec_allow,
            env=MappingProxyType(dict(e.env)) if isinstance(e.env, dict) else _EMPTY_MAP,
            # Custom values are kept exactly as written (no int normalisation).
            config=MappingProxyType(dict(value["config"])) if "config" in value else _EMPTY_MAP,
        )
    return replace(skills, entries=MappingProxyType(entries))


def _build_agents(a: _AgentsS) -> AgentsConfig:
    defaults = a.defaults if not isinstance(a.defaults, msgspec.UnsetType) else _AgentDefaultsS()
    agent_list = a.agent_list if not isinstance(a.agent_list, msgspec.UnsetType) else []
    return AgentsConfig(
        default_skills=_tuple(defaults.skills),
        default_workspace=_opt(defaults.workspace),
        agents=tuple(
            AgentConfig(
                id=ag.id,
                skills=_tuple(ag.skills),
                workspace=_opt(ag.workspace),
                default=_opt(ag.default),
            )
            for ag in agent_list
        ),
    )
