"""Eligibility: may this skill run on this host with this configuration? (spec §4)

Input: a :class:`~skillbook.model.Skill`, a :class:`~skillbook.config.file.Config`, a
:class:`Host` (platform and environment), a :class:`BinaryLookup` (a ``PATH``
scanner whose cache the caller owns) and, optionally, a :class:`RemoteEligibility`
(a paired macOS node that can run binaries for us). Output: an
:class:`Eligibility` value. Nothing here writes anything; the only I/O is the
``PATH`` probe in :class:`BinaryLookup`.

:func:`evaluate` is the one evaluator behind both the runtime gate
(:func:`eligible_skills`, prompt, commands) and the status report, so the two
cannot disagree. It follows §4.1: skill key and config entry; ``enabled: false``;
the bundled allowlist; the OS (checked before ``always``, remote platforms count);
``always: true`` skips the ``requires`` checks; then bins, anyBins, env and config.
Unlike OpenClaw's short-circuiting gate it collects *every* missing item, so the
report can list them all; the verdict is the same.

Deliberate fix: OpenClaw's status report empties all missing lists for an
``always: true`` skill, even when its ``os`` list excludes the host, while its
runtime gate leaves that skill out. Here such a skill reports ``missing.os`` and
is not eligible, in the report as at run time.

Which skills an agent may use (its allowlist, §4.3) is :mod:`skillbook.config.skill_filter`;
its names are re-exported here for code written against earlier releases.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal, NamedTuple, Protocol

from skillbook.base.fast_init import fast_init
from skillbook.base.js import is_truthy, js_string, js_trim
from skillbook.config.errors import MISSING
from skillbook.config.file import Config, resolve_config_path
from skillbook.config.profile import DEFAULT_PROFILE, GateRules
from skillbook.config.skill_filter import (
    apply_filter,
)
from skillbook.model import Requires, Skill, Source
from skillbook.pipeline.cache.footprint import binary

__all__ = [
    "CONFIG_PATH_DEFAULTS",
    "DEFAULT_PATHEXT",
    "BinaryLookup",
    "ConfigCheck",
    "Eligibility",
    "EligibilityStatus",
    "Host",
    "RemoteEligibility",
    "Requirements",
    "StaticRemote",
    "bundled_allowlist",
    "eligible_skills",
    "evaluate",
    "is_config_path_truthy",
    "node_platform",
    "resolve_skill_source",
]

#: Config paths that count as set when absent (OpenClaw's ``DEFAULT_CONFIG_VALUES``).
CONFIG_PATH_DEFAULTS: Final[Mapping[str, bool]] = MappingProxyType(
    {"browser.enabled": True, "browser.evaluateEnabled": True}
)
DEFAULT_PATHEXT: Final = ".EXE;.CMD;.BAT;.COM"
_UNKNOWN_SOURCE: Final = "unknown"


# --------------------------------------------------------------------------- host


def node_platform(sys_platform: str | None = None) -> str:
    """Node's ``process.platform`` name for a Python ``sys.platform`` value."""
    p = sys.platform if sys_platform is None else sys_platform
    if p.startswith("linux"):
        return "linux"
    if p in ("win32", "cygwin", "msys"):
        return "win32"
    if p.startswith("sunos"):
        return "sunos"
    for prefix in ("freebsd", "openbsd", "netbsd", "aix"):
        if p.startswith(prefix):
            return prefix
    return p  # darwin, android, ios … already match Node's names


@dataclass(frozen=True, slots=True)
class Host:
    """The machine skills run on: its Node-style platform and its environment."""

    platform: str
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def from_process(cls) -> Host:
        """This process: ``sys.platform`` mapped to Node's name, a snapshot of ``os.environ``."""
        return cls(platform=node_platform(), env=MappingProxyType(dict(os.environ)))

    @classmethod
    def with_env(cls, env: Mapping[str, str]) -> Host:
        """This machine's platform with a given environment (tests, other processes)."""
        return cls(platform=node_platform(), env=env)


class BinaryLookup:
    """``hasBinary``: is ``bin`` an executable on ``PATH``? Results cached per name.

    ``env`` is read on every call (default: the live ``os.environ``) and the cache is
    dropped whenever its ``PATH`` (or, on Windows, ``PATHEXT``) changes. Like Node's
    ``access(X_OK)`` any executable entry counts, a directory included.
    """

    __slots__ = ("_cache", "_env", "_key", "_platform")

    def __init__(self, env: Mapping[str, str] | None = None, *, platform: str | None = None):
        self._env: Mapping[str, str] = os.environ if env is None else env
        self._platform = node_platform() if platform is None else platform
        self._cache: dict[str, bool] = {}
        self._key: tuple[str, str] | None = None

    @classmethod
    def for_host(cls, host: Host) -> BinaryLookup:
        return cls(host.env, platform=host.platform)

    def has(self, bin: str) -> bool:
        windows = self._platform == "win32"
        path_env = self._env.get("PATH") or ""
        pathext = (self._env.get("PATHEXT") or "") if windows else ""
        if self._key != (path_env, pathext):
            self._key = (path_env, pathext)
            self._cache.clear()
        cached = self._cache.get(bin)
        if cached is not None:
            return cached
        found = self._scan(bin, path_env, windows)
        self._cache[bin] = found
        binary(bin, found)
        return found

    def has_any(self, bins: Iterable[str]) -> bool:
        return any(self.has(b) for b in bins)

    def clear(self) -> None:
        self._cache.clear()

    def _scan(self, bin: str, path_env: str, windows: bool) -> bool:
        parts = [p for p in path_env.split(";" if windows else ":") if p]
        if windows:
            raw = self._env.get("PATHEXT")
            exts = [e.strip() for e in (raw if raw is not None else DEFAULT_PATHEXT).split(";")]
            extensions = ["", *(e for e in exts if e)]
        else:
            extensions = [""]
        return any(
            _executable(os.path.join(part, bin + ext)) for part in parts for ext in extensions
        )


def _executable(path: str) -> bool:
    # A NUL in a `requires.bins` name (or in PATH) made os.access raise and stopped the
    # whole load; OpenClaw's access check throws too and counts it as not found.
    try:
        return os.access(path, os.X_OK)
    except ValueError:
        return False


class RemoteEligibility(Protocol):
    """A remote node that can run skills for us (OpenClaw: a paired macOS node)."""

    @property
    def platforms(self) -> Sequence[str]: ...

    @property
    def note(self) -> str | None: ...

    def has_bin(self, bin: str) -> bool: ...

    def has_any_bin(self, bins: Sequence[str]) -> bool: ...


@dataclass(frozen=True, slots=True)
class StaticRemote:
    """A :class:`RemoteEligibility` with a fixed set of platforms and binaries."""

    platforms: tuple[str, ...] = ("darwin",)
    bins: frozenset[str] = frozenset()
    note: str | None = None

    def has_bin(self, bin: str) -> bool:
        return bin in self.bins

    def has_any_bin(self, bins: Sequence[str]) -> bool:
        return any(b in self.bins for b in bins)


# --------------------------------------------------------------------------- results

EligibilityStatus = Literal["ready", "disabled", "blocked", "needs-setup"]


@fast_init
@dataclass(frozen=True, slots=True)
class Requirements:
    """Five lists in OpenClaw's shape: what a skill requires, or what is missing."""

    bins: tuple[str, ...] = ()
    any_bins: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    config: tuple[str, ...] = ()
    os: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not (self.bins or self.any_bins or self.env or self.config or self.os)

    def to_json(self) -> dict[str, list[str]]:
        return {
            "bins": list(self.bins),
            "anyBins": list(self.any_bins),
            "env": list(self.env),
            "config": list(self.config),
            "os": list(self.os),
        }


class ConfigCheck(NamedTuple):
    """One ``requires.config`` path and whether it is truthy (never the value)."""

    path: str
    satisfied: bool

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "satisfied": self.satisfied}


@fast_init
@dataclass(frozen=True, slots=True)
class Eligibility:
    skill_key: str
    eligible: bool
    disabled: bool
    blocked_by_allowlist: bool
    always: bool
    requirements: Requirements
    missing: Requirements
    config_checks: tuple[ConfigCheck, ...] = ()
    #: The runtime gate's verdict (prompt, commands). It differs from ``eligible`` (the
    #: status report's) only under a profile whose status compares ``os`` loosely.
    runtime: bool | None = None

    @property
    def ready(self) -> bool:
        """Whether the skill passes the runtime gate (what the prompt and commands use)."""
        return self.eligible if self.runtime is None else self.runtime

    @property
    def status(self) -> EligibilityStatus:
        if self.eligible:
            return "ready"
        if self.disabled:
            return "disabled"
        if self.blocked_by_allowlist:
            return "blocked"
        return "needs-setup"


# --------------------------------------------------------------------------- evaluation

#: What a skill without ``requires`` or ``os`` requires and misses (shared, frozen).
_NOTHING: Final = Requirements()


def resolve_skill_source(skill: Skill) -> str:
    return skill.source.strip() or _UNKNOWN_SOURCE


def bundled_allowlist(config: Config) -> tuple[str, ...] | None:
    """``skills.allowBundled`` trimmed, blanks dropped; ``None`` = no restriction."""
    raw = config.skills.allow_bundled
    if raw is None:
        return None
    items = tuple(s for s in (js_string(x).strip() for x in raw) if s)
    return items or None


def is_config_path_truthy(config: Config, path: str) -> bool:
    value = resolve_config_path(config.raw, path)
    if value is MISSING:
        return CONFIG_PATH_DEFAULTS.get(path, False)
    return is_truthy(value)


def evaluate(
    skill: Skill,
    *,
    config: Config,
    host: Host,
    bins: BinaryLookup,
    remote: RemoteEligibility | None = None,
    rules: GateRules = DEFAULT_PROFILE.gate,
) -> Eligibility:
    """Evaluate every gate of §4.1 for one skill (see the module docstring); ``rules``
    are the compat profile's (2026.9: blank env values do not count; the status report
    compares ``os`` case-insensitively with ``macos`` = ``darwin``)."""
    meta = skill.metadata
    key = skill.skill_key
    entry = config.entry(key)
    disabled = entry is not None and entry.enabled is False
    blocked = config.skills.allow_bundled is not None and _blocked(skill, key, config)
    always = meta is not None and meta.always is True
    req = meta.requires if meta is not None else None
    wanted_os = (meta.os or ()) if meta is not None else ()
    required = _required(req, wanted_os)
    os_ok = runtime_os_ok = True
    if wanted_os:
        os_ok, runtime_os_ok = _os_verdicts(wanted_os, host, remote, rules)
    missing_os = () if os_ok else wanted_os
    # Config checks are reported even for `always` skills (OpenClaw does too).
    checks = _config_checks(config, required.config) if required.config else ()
    if always or req is None:
        missing = Requirements(os=missing_os) if missing_os else _NOTHING
    else:
        missing = _missing(required, checks, missing_os, skill, config, host, bins, remote, rules)
    eligible = not disabled and not blocked and missing.is_empty
    return Eligibility(
        key,
        eligible,
        disabled,
        blocked,
        always,
        required,
        missing,
        checks,
        None if runtime_os_ok == os_ok else eligible and runtime_os_ok,
    )


def _required(req: Requires | None, wanted_os: tuple[str, ...]) -> Requirements:
    # Most skills require nothing (or only an OS): one shared empty value for them.
    if req is not None:
        return Requirements(req.bins, req.any_bins, req.env, req.config, wanted_os)
    return Requirements(os=wanted_os) if wanted_os else _NOTHING


def _config_checks(config: Config, paths: tuple[str, ...]) -> tuple[ConfigCheck, ...]:
    return tuple(ConfigCheck(p, is_config_path_truthy(config, p)) for p in paths)


def _blocked(skill: Skill, key: str, config: Config) -> bool:
    """A bundled skill that ``skills.allowBundled`` does not name (by key or name)."""
    allow = bundled_allowlist(config)
    return (
        allow is not None
        and resolve_skill_source(skill) == Source.BUNDLED.value
        and key not in allow
        and skill.name not in allow
    )


def _os_verdicts(
    wanted_os: tuple[str, ...], host: Host, remote: RemoteEligibility | None, rules: GateRules
) -> tuple[bool, bool]:
    """``(os_ok, runtime_os_ok)``: the host or a remote platform is listed; the first as
    the status report compares (2026.9: normalised names), the second as the gate."""
    remote_platforms = tuple(remote.platforms) if remote is not None else ()
    os_ok = host.platform in wanted_os or any(p in wanted_os for p in remote_platforms)
    runtime_os_ok = os_ok
    if rules.status_os_normalized and not os_ok:
        names = {_os_name(p) for p in wanted_os}
        os_ok = _os_name(host.platform) in names or any(
            _os_name(p) in names for p in remote_platforms
        )
    return os_ok, runtime_os_ok


def _missing(
    required: Requirements,
    checks: tuple[ConfigCheck, ...],
    missing_os: tuple[str, ...],
    skill: Skill,
    config: Config,
    host: Host,
    bins: BinaryLookup,
    remote: RemoteEligibility | None,
    rules: GateRules,
) -> Requirements:
    """Every required bin, env variable and config path that is not there."""
    return Requirements(
        tuple(
            b
            for b in required.bins
            if not bins.has(b) and not (remote is not None and remote.has_bin(b))
        )
        if required.bins
        else (),
        _missing_any_bins(required.any_bins, bins, remote),
        tuple(n for n in required.env if not _env_satisfied(n, skill, config, host, rules))
        if required.env
        else (),
        tuple(c.path for c in checks if not c.satisfied) if checks else (),
        missing_os,
    )


def _os_name(platform: str) -> str:
    name = platform.strip().lower()
    return "darwin" if name == "macos" else name


def _missing_any_bins(
    any_bins: tuple[str, ...], bins: BinaryLookup, remote: RemoteEligibility | None
) -> tuple[str, ...]:
    if not any_bins or bins.has_any(any_bins):
        return ()
    if remote is not None and remote.has_any_bin(any_bins):
        return ()
    return any_bins


def _env_satisfied(
    name: str, skill: Skill, config: Config, host: Host, rules: GateRules = DEFAULT_PROFILE.gate
) -> bool:
    # 2026.4: JavaScript truthiness, any non-empty string counts, even "  ";
    # 2026.9 (`isSkillEnvRequirementSatisfied`): the value must be non-blank.
    present = _non_blank if rules.env_trimmed else bool
    if present(host.env.get(name)):
        return True
    entry = config.entry(skill.skill_key)
    if entry is None:
        return False
    if present(entry.env.get(name)):
        return True
    meta = skill.metadata
    if meta is None or meta.primary_env != name:
        return False
    if rules.env_trimmed and isinstance(entry.api_key, str):
        return _non_blank(entry.api_key)
    return entry.has_api_key


def _non_blank(value: str | None) -> bool:
    return bool(value) and bool(js_trim(value or ""))


def eligible_skills(
    skills: Iterable[Skill],
    *,
    config: Config,
    host: Host,
    bins: BinaryLookup,
    remote: RemoteEligibility | None = None,
    skill_filter: Sequence[str] | None = None,
) -> list[Skill]:
    """The runtime gate: eligible skills, then the (already effective) filter."""
    gated = [
        s
        for s in skills
        if evaluate(s, config=config, host=host, bins=bins, remote=remote).eligible
    ]
    return apply_filter(gated, skill_filter)
