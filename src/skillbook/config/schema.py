"""The msgspec schema of ``openclaw.json`` (the ``skills`` and ``agents`` sections).

Private to :mod:`skillbook.config.file`, which converts these structs into its public
frozen values. UNSET (not None) marks an absent key so that an explicit ``null`` is
rejected, as OpenClaw's zod schema does; strict structs reject unknown keys.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

import msgspec

from skillbook.config.mode import Mode

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


class _EntryExecS(_Strict):
    allow: list[str] | _U = _UNSET


class _ExecS(_Strict):
    policy: Literal["ask", "allowlist", "allow"] | _U = _UNSET
    allow: list[str] | _U = _UNSET


class _EntryS(_Strict):
    enabled: bool | _U = _UNSET
    api_key: str | _SecretRefS | _U = _UNSET
    env: dict[str, str] | _U = _UNSET
    exec: _EntryExecS | _U = _UNSET
    config: dict[str, Any] | _U = _UNSET


class _LoadS(_Strict):
    extra_dirs: list[str] | _U = _UNSET
    watch: bool | _U = _UNSET
    watch_debounce_ms: _NonNegInt | _U = _UNSET
    allow_symlink_targets: list[str] | _U = _UNSET
    grouped: bool | _U = _UNSET
    mode: Mode | _U = _UNSET


_InstallKind = Literal["brew", "node", "go", "uv", "download", "apt", "pip"]


class _InstallPolicyS(_Strict):
    allowed_kinds: list[_InstallKind] | _U = _UNSET
    allowed_download_hosts: list[str] | _U = _UNSET
    require_sha256: bool | _U = _UNSET
    allow_private_network: bool | _U = _UNSET


class _InstallS(_Strict):
    prefer_brew: bool | _U = _UNSET
    node_manager: Literal["npm", "pnpm", "yarn", "bun"] | _U = _UNSET
    # skillbook extensions (skillbook.distribution.install): opt-in fallbacks and the install policy.
    allow_apt: bool | _U = _UNSET
    allow_pip: bool | _U = _UNSET
    policy: _InstallPolicyS | _U = _UNSET


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
    route_margin: Annotated[float, msgspec.Meta(ge=0, le=1)] | _U = _UNSET
    placement: Literal["message", "system"] | _U = _UNSET
    null_skill: bool | _U = _UNSET


class _RegistryS(_Strict):
    url: str | _U = _UNSET


class _SkillsS(_Strict):
    compat: Literal["openclaw-2026.4", "openclaw-2026.9"] | _U = _UNSET
    cache: bool | _U = _UNSET
    allow_bundled: list[str] | _U = _UNSET
    exec: _ExecS | _U = _UNSET
    load: _LoadS | _U = _UNSET
    install: _InstallS | _U = _UNSET
    limits: _LimitsS | _U = _UNSET
    prompt: _PromptS | _U = _UNSET
    read_tool: str | _U = _UNSET
    # Validated on their own (skillbook.config.source_sections), as are the entries below.
    mcp: dict[str, Any] | _U = _UNSET
    selection: _SelectionS | _U = _UNSET
    registry: _RegistryS | _U = _UNSET
    # skillbook.config.experience
    experience: dict[str, Any] | _U = _UNSET
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
