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
``entries.<key>.config``). skillbook extensions: ``skills.load.allowSymlinkTargets``,
``skills.load.grouped``, ``skills.load.mode``, ``skills.prompt.priority`` and
``skills.readTool``.

Open: ``agents``, ``agents.defaults`` and ``agents.list[]`` entries hold many keys
that belong to OpenClaw (models, tools, sandbox, …); skillbook checks only the ones
it reads (``skills``, ``workspace``, ``id``, ``default``) and lets the others through.
Every other top-level section is kept untouched in :attr:`Config.raw`, because
``requires.config`` gates read arbitrary paths such as ``browser.enabled``.

Where skillbook's own config file lives (:func:`default_config_path`):
``--config`` (the ``explicit`` argument) > ``$SKILLBOOK_CONFIG_PATH`` (or its
``OPENCLAW_CONFIG_PATH`` fallback, as resolved by :class:`skillbook.paths.Paths`) >
``<state_dir>/skillbook.json`` if that file exists > no file (empty config).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Final, Literal

import msgspec

from skillbook._config_errors import MISSING, convert, render
from skillbook.errors import ConfigError
from skillbook.mode import Mode

if TYPE_CHECKING:
    from skillbook.mcp.client import McpServerSpec

if TYPE_CHECKING:
    from skillbook.paths import Paths

__all__ = [
    "CONFIG_PATH_ENV",
    "DEFAULT_CONFIG_FILENAME",
    "MISSING",
    "AgentConfig",
    "AgentsConfig",
    "Config",
    "ConfigError",
    "EmbeddingConfig",
    "InstallConfig",
    "LimitsConfig",
    "LoadConfig",
    "PromptConfig",
    "SecretRef",
    "SelectionConfig",
    "SkillEntryConfig",
    "SkillsConfig",
    "default_config_path",
    "load_config",
    "resolve_config_path",
]

DEFAULT_CONFIG_FILENAME: Final = "skillbook.json"
CONFIG_PATH_ENV: Final = "SKILLBOOK_CONFIG_PATH"
_EMPTY_MAP: Final[Mapping[str, Any]] = MappingProxyType({})

# --------------------------------------------------------------------------- schema
# Private msgspec Structs do the validation; UNSET (not None) marks an absent key so
# that an explicit ``null`` is rejected, as OpenClaw's zod schema does.

_U = msgspec.UnsetType
_UNSET: Any = msgspec.UNSET
_NonNegInt = Annotated[int, msgspec.Meta(ge=0)]
_PosInt = Annotated[int, msgspec.Meta(ge=1)]


class _Strict(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    pass


class _Open(msgspec.Struct, rename="camel"):
    pass


class _SecretRefS(_Strict):
    __config_label__: ClassVar[str] = 'secret ref {source: "env"|"file"|"exec", provider, id}'
    source: Literal["env", "file", "exec"]
    provider: str
    id: str


class _EntryS(_Strict):
    enabled: bool | _U = _UNSET
    api_key: str | _SecretRefS | _U = _UNSET
    env: dict[str, str] | _U = _UNSET
    config: dict[str, Any] | _U = _UNSET


class _LoadS(_Strict):
    extra_dirs: list[str] | _U = _UNSET
    watch: bool | _U = _UNSET
    watch_debounce_ms: _NonNegInt | _U = _UNSET
    allow_symlink_targets: list[str] | _U = _UNSET
    grouped: bool | _U = _UNSET
    mode: Mode | _U = _UNSET


class _InstallS(_Strict):
    prefer_brew: bool | _U = _UNSET
    node_manager: Literal["npm", "pnpm", "yarn", "bun"] | _U = _UNSET


class _LimitsS(_Strict):
    max_candidates_per_root: _PosInt | _U = _UNSET
    max_skills_loaded_per_source: _PosInt | _U = _UNSET
    max_skills_in_prompt: _NonNegInt | _U = _UNSET
    max_skills_prompt_chars: _NonNegInt | _U = _UNSET
    max_skill_file_bytes: _NonNegInt | _U = _UNSET


class _PromptS(_Strict):
    priority: Literal["source", "none"] | _U = _UNSET


class _EmbeddingS(_Strict):
    provider: Literal["wordllama", "model2vec", "fastembed", "openai", "none"] | _U = _UNSET
    model: str | _U = _UNSET
    url: str | _U = _UNSET
    api_key_env: str | _U = _UNSET
    multilingual: bool | _U = _UNSET


class _SelectionS(_Strict):
    mode: Literal["off", "auto", "always"] | _U = _UNSET
    top_k: Annotated[int, msgspec.Meta(ge=1, le=100)] | _U = _UNSET
    backend: Literal["hybrid", "bm25", "embedding"] | _U = _UNSET
    fusion: Literal["mix", "rrf"] | _U = _UNSET
    min_score: Annotated[float, msgspec.Meta(ge=0, le=1)] | _U = _UNSET
    pinned: list[str] | _U = _UNSET
    embedding: _EmbeddingS | _U = _UNSET
    index_dir: str | _U = _UNSET


class _McpS(_Strict):
    # Each server is checked by skillbook.mcp.client.parse_server_specs (it owns the shape).
    servers: list[Any] | _U = _UNSET


class _SkillsS(_Strict):
    allow_bundled: list[str] | _U = _UNSET
    load: _LoadS | _U = _UNSET
    install: _InstallS | _U = _UNSET
    limits: _LimitsS | _U = _UNSET
    prompt: _PromptS | _U = _UNSET
    read_tool: str | _U = _UNSET
    mcp: _McpS | _U = _UNSET
    selection: _SelectionS | _U = _UNSET
    # Entries are validated one by one (see _convert_entries) so that an error can
    # name the entry: msgspec reports dict values only as ``[...]``.
    entries: dict[str, Any] | _U = _UNSET


class _AgentS(_Open):
    id: str
    skills: list[str] | _U = _UNSET
    workspace: str | _U = _UNSET
    default: bool | _U = _UNSET


class _AgentDefaultsS(_Open):
    skills: list[str] | _U = _UNSET
    workspace: str | _U = _UNSET


class _AgentsS(_Open):
    defaults: _AgentDefaultsS | _U = _UNSET
    agent_list: list[_AgentS] | _U = msgspec.field(default=_UNSET, name="list")


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
class InstallConfig:
    prefer_brew: bool | None = None
    node_manager: str | None = None


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


@dataclass(frozen=True, slots=True)
class SkillsConfig:
    #: ``None`` = key absent; the gate normalises (trims, drops blanks, empty = no limit).
    allow_bundled: tuple[str, ...] | None = None
    load: LoadConfig = LoadConfig()
    install: InstallConfig = InstallConfig()
    limits: LimitsConfig = LimitsConfig()
    prompt: PromptConfig = PromptConfig()
    read_tool: str | None = None
    entries: Mapping[str, SkillEntryConfig] = field(default_factory=lambda: _EMPTY_MAP)
    #: ``skills.mcp.servers``: remote MCP servers whose skills form the lowest source.
    mcp_servers: tuple[McpServerSpec, ...] = ()
    selection: SelectionConfig = SelectionConfig()


@dataclass(frozen=True, slots=True)
class AgentConfig:
    """One ``agents.list[]`` entry (only the keys skillbook reads)."""

    id: str
    #: ``None`` = no ``skills`` key (inherit the defaults); ``()`` = explicitly none.
    skills: tuple[str, ...] | None = None
    workspace: str | None = None
    default: bool | None = None

    @property
    def has_skills(self) -> bool:
        return self.skills is not None


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
            entries_raw = obj["skills"].get("entries")
            if isinstance(entries_raw, Mapping):
                skills = _with_entries(skills, entries_raw, where, file)
            mcp_raw = obj["skills"].get("mcp")
            if isinstance(mcp_raw, Mapping) and mcp_raw.get("servers") is not None:
                skills = _with_mcp_servers(skills, mcp_raw["servers"], where, file)
        if "agents" in obj:
            agents = _build_agents(convert(obj["agents"], _AgentsS, ("agents",), where, file))
        return cls(skills=skills, agents=agents, raw=MappingProxyType(dict(obj)), file=file)

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
        text = file.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot read config: {exc}", file=file) from exc
    return Config.from_mapping(_parse_json5(text, file), file=file)


def _parse_json5(text: str, file: Path) -> Any:
    try:
        return json.loads(text)  # fast path: most configs are plain JSON
    except json.JSONDecodeError:
        pass
    import json5  # lazy: slow to import and only needed for comments, trailing commas…

    try:
        return json5.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{file}: invalid JSON5: {exc}", key_path="", file=file) from exc


def default_config_path(
    paths: Paths | Path,
    *,
    explicit: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Path | None:
    """Which config file to read: ``explicit`` (``--config``) > ``$SKILLBOOK_CONFIG_PATH``
    > ``<state_dir>/skillbook.json`` if it exists > ``None`` (run with an empty config).

    ``paths`` is a :class:`skillbook.paths.Paths`, whose ``config_path`` already holds
    the resolved variable (or its ``OPENCLAW_CONFIG_PATH`` fallback), or a bare state
    directory, in which case the variable is read from ``env`` (default ``os.environ``).
    """
    if explicit is not None:
        return Path(explicit).expanduser()
    if isinstance(paths, Path):
        environ = os.environ if env is None else env
        from_env = (environ.get(CONFIG_PATH_ENV) or "").strip()
        if from_env:
            return Path(from_env).expanduser()
        state_dir = paths
    else:
        if paths.config_path is not None:
            return paths.config_path
        state_dir = paths.state_dir
    candidate = state_dir / DEFAULT_CONFIG_FILENAME
    return candidate if candidate.is_file() else None


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
        install=InstallConfig(
            prefer_brew=_opt(inst.prefer_brew), node_manager=_opt(inst.node_manager)
        ),
        limits=LimitsConfig(
            max_candidates_per_root=_opt(lim.max_candidates_per_root),
            max_skills_loaded_per_source=_opt(lim.max_skills_loaded_per_source),
            max_skills_in_prompt=_opt(lim.max_skills_in_prompt),
            max_skills_prompt_chars=_opt(lim.max_skills_prompt_chars),
            max_skill_file_bytes=_opt(lim.max_skill_file_bytes),
        ),
        prompt=PromptConfig(priority=_opt(prompt.priority)),
        read_tool=_opt(s.read_tool),
        selection=_build_selection(s.selection),
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
    )


def _with_mcp_servers(
    skills: SkillsConfig, raw: Any, where: str, file: Path | None
) -> SkillsConfig:
    from skillbook.mcp.client import parse_server_specs

    try:
        specs = parse_server_specs(raw, where="skills.mcp.servers")
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}", key_path=exc.key_path, file=file) from None
    return replace(skills, mcp_servers=specs)


def _with_entries(
    skills: SkillsConfig, entries_raw: Mapping[str, Any], where: str, file: Path | None
) -> SkillsConfig:
    entries: dict[str, SkillEntryConfig] = {}
    for key, value in entries_raw.items():
        e = convert(value, _EntryS, ("skills", "entries", key), where, file)
        api_key: str | SecretRef | None = None
        if isinstance(e.api_key, _SecretRefS):
            api_key = SecretRef(e.api_key.source, e.api_key.provider, e.api_key.id)
        elif isinstance(e.api_key, str):
            api_key = e.api_key
        entries[key] = SkillEntryConfig(
            enabled=_opt(e.enabled),
            api_key=api_key,
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
