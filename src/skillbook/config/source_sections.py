"""The config sections that describe skill sources: ``skills.mcp`` and ``plugins``.

Private to :mod:`skillbook.config.file`, which validates the whole file and re-exports the
values. ``skills.mcp.servers`` is strict (skillbook's own key); ``plugins`` belongs
to OpenClaw and holds many keys skillbook does not read (installs, hooks, …), so only
the keys it reads are checked: ``enabled``, ``allow``, ``deny``, ``load.paths``,
``slots.memory``, ``slots.contextEngine`` and ``entries.<id>.enabled``.
"""

from __future__ import annotations

import hashlib
import math
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, Final, Literal

import msgspec

from skillbook.config.checks import check_env
from skillbook.config.errors import convert, render
from skillbook.errors import ConfigError

_U = msgspec.UnsetType
_UNSET: Any = msgspec.UNSET
_EMPTY: Final[Mapping[str, str]] = MappingProxyType({})

#: Labels name cache folders and qualify colliding skill names (``label:name``).
MCP_LABEL_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_Label = Annotated[
    str,
    msgspec.Meta(
        pattern=f"^{MCP_LABEL_RE.pattern}$",
        extra={"label": "1-64 letters, digits, '.', '_', '-' (starting with a letter or digit)"},
    ),
]
_Arg = Annotated[str, msgspec.Meta(min_length=1)]
_EnvName = Annotated[
    str,
    msgspec.Meta(
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        extra={"label": "the name of an environment variable (letters, digits, '_')"},
    ),
]
_Seconds = Annotated[float, msgspec.Meta(gt=0, extra={"label": "a number of seconds > 0"})]


class _McpServerS(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    name: _Label
    command: Annotated[list[_Arg], msgspec.Meta(min_length=1)] | _U = _UNSET
    env: dict[str, str] | _U = _UNSET
    url: str | _U = _UNSET
    # The *name* of the variable holding the bearer token, never the token.
    token_env: _EnvName | _U = _UNSET
    cwd: str | _U = _UNSET
    timeout: _Seconds | _U = _UNSET


class _McpS(msgspec.Struct, forbid_unknown_fields=True):
    servers: list[_McpServerS] | _U = _UNSET


class _PluginEntryS(msgspec.Struct):
    enabled: bool | _U = _UNSET


class _PluginLoadS(msgspec.Struct):
    paths: list[str] | _U = _UNSET


class _PluginSlotsS(msgspec.Struct, rename="camel"):
    memory: str | _U = _UNSET
    context_engine: str | _U = _UNSET


class _PluginsS(msgspec.Struct):
    enabled: bool | _U = _UNSET
    allow: list[str] | _U = _UNSET
    deny: list[str] | _U = _UNSET
    load: _PluginLoadS | _U = _UNSET
    slots: _PluginSlotsS | _U = _UNSET
    # One by one (see plugins_config), so that an error can name the entry.
    entries: dict[str, Any] | _U = _UNSET


# --------------------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class McpServerConfig:
    """One ``skills.mcp.servers[]`` entry; ``name`` is the host-assigned label (never
    the server's own ``serverInfo``). Exactly one of ``command`` and ``url`` is set."""

    name: str
    command: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    url: str | None = None
    cwd: str | None = None
    timeout_s: float | None = None
    #: ``tokenEnv`` (HTTP only): the environment variable whose value is sent as
    #: ``Authorization: Bearer <value>``; the value is read when connecting, never stored.
    token_env: str | None = None

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "http" if self.url is not None else "stdio"

    @property
    def target(self) -> str:
        """The URL, or the command line as a shell would show it."""
        return self.url if self.url is not None else shlex.join(self.command)

    @property
    def origin(self) -> str:
        """What ``Skill.origin`` records: the label and where the server is."""
        return f"{self.name} ({self.target})"

    @property
    def key(self) -> str:
        """Cache folder name: the label plus a hash of the target, so a changed URL
        or command never reuses another server's materialised files."""
        digest = hashlib.sha256(f"{self.transport}\0{self.target}".encode()).hexdigest()
        return f"{self.name}-{digest[:12]}"


@dataclass(frozen=True, slots=True)
class PluginEntryConfig:
    """``plugins.entries.<id>``: ``enabled`` (``None`` = not said)."""

    enabled: bool | None = None


@dataclass(frozen=True, slots=True)
class PluginsConfig:
    """``plugins``, as written (ids are normalised where plugins are resolved)."""

    #: ``False`` only when ``plugins.enabled`` is ``false``.
    enabled: bool = True
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    load_paths: tuple[str, ...] = ()
    #: ``plugins.slots.memory`` (``None`` = absent: OpenClaw's default memory plugin).
    memory_slot: str | None = None
    context_engine_slot: str | None = None
    entries: Mapping[str, PluginEntryConfig] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def configured(self) -> bool:
        """Whether anything here can change which plugins contribute skills."""
        return self != PluginsConfig()


# --------------------------------------------------------------------------- building


def _opt(value: Any) -> Any:
    return None if value is msgspec.UNSET else value


def mcp_servers(raw: Any, where: str, file: Path | None) -> tuple[McpServerConfig, ...]:
    """``skills.mcp`` → its servers; raises :class:`ConfigError` naming the key path."""
    prefix = ("skills", "mcp")
    mcp = convert(raw, _McpS, prefix, where, file)
    servers = [] if isinstance(mcp.servers, msgspec.UnsetType) else mcp.servers
    specs: list[McpServerConfig] = []
    seen: set[str] = set()
    for i, s in enumerate(servers):
        at = f"skills.mcp.servers[{i}]"
        has_command, has_url = s.command is not msgspec.UNSET, s.url is not msgspec.UNSET
        if has_command == has_url:
            raise _error(where, file, at, "give exactly one of `command` (stdio) or `url` (HTTP)")
        if isinstance(s.url, str):
            _check_url(s.url, where, file, f"{at}.url")
            for key in ("env", "cwd"):
                if getattr(s, key) is not msgspec.UNSET:
                    raise _error(where, file, f"{at}.{key}", "only a stdio server has env and cwd")
        elif s.token_env is not msgspec.UNSET:
            raise _error(
                where,
                file,
                f"{at}.tokenEnv",
                "only an HTTP server (`url`) takes a bearer token; give a stdio server its "
                "secrets in `env`",
            )
        if isinstance(s.env, dict):
            check_env(s.env, ["skills", "mcp", "servers", i, "env"], where, file)
        if isinstance(s.timeout, float) and not math.isfinite(s.timeout):
            raise _error(
                where, file, f"{at}.timeout", f"expected a number of seconds > 0, got {s.timeout}"
            )
        if s.name in seen:
            raise _error(where, file, f"{at}.name", f"the label {s.name!r} is used twice")
        seen.add(s.name)
        specs.append(
            McpServerConfig(
                name=s.name,
                command=tuple(s.command) if isinstance(s.command, list) else (),
                env=MappingProxyType(dict(s.env)) if isinstance(s.env, dict) else _EMPTY,
                url=_opt(s.url),
                cwd=_opt(s.cwd),
                timeout_s=_opt(s.timeout),
                token_env=_opt(s.token_env),
            )
        )
    return tuple(specs)


def _check_url(url: str, where: str, file: Path | None, key_path: str) -> None:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        raise _error(
            where, file, key_path, f"expected an http:// or https:// URL, got {render(url)}"
        )


def _error(where: str, file: Path | None, key_path: str, detail: str) -> ConfigError:
    return ConfigError(f"{where}: {key_path}: {detail}", key_path=key_path, file=file)


def plugins_config(raw: Any, where: str, file: Path | None) -> PluginsConfig:
    """``plugins`` → :class:`PluginsConfig`; raises :class:`ConfigError` naming the key path."""
    p = convert(raw, _PluginsS, ("plugins",), where, file)
    load = p.load if isinstance(p.load, _PluginLoadS) else _PluginLoadS()
    slots = p.slots if isinstance(p.slots, _PluginSlotsS) else _PluginSlotsS()
    entries: dict[str, PluginEntryConfig] = {}
    if isinstance(p.entries, dict):
        for key, value in p.entries.items():
            e = convert(value, _PluginEntryS, ("plugins", "entries", key), where, file)
            entries[key] = PluginEntryConfig(enabled=_opt(e.enabled))
    return PluginsConfig(
        enabled=p.enabled is not False,
        allow=tuple(p.allow) if isinstance(p.allow, list) else (),
        deny=tuple(p.deny) if isinstance(p.deny, list) else (),
        load_paths=tuple(load.paths) if isinstance(load.paths, list) else (),
        memory_slot=_opt(slots.memory),
        context_engine_slot=_opt(slots.context_engine),
        entries=MappingProxyType(entries),
    )
