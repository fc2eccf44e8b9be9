"""One skill's environment overlay for its own subprocesses (spec §11.3, Appendix A).

Input: a :class:`~skillbook.model.Skill`, the :class:`~skillbook.config.file.Config`, the
base environment its commands would start from, and a secret resolver for
``apiKey`` refs. Output: a frozen :class:`SkillEnv` with the variables to add, the
keys refused (with reasons) and value warnings. :meth:`SkillEnv.apply` returns a
*new* dict for ``subprocess`` — nothing here reads or writes ``os.environ``.

This is where skillbook departs from OpenClaw on purpose. OpenClaw injects every
skill's variables into its own ``process.env`` (ref-counted, restored after the
run), so they reach every child process, including other skills' commands and
unrelated harnesses (openclaw#78528; a skill's ``OPENAI_API_KEY`` switched a Codex
child to paid billing, PR #36293). Here a skill's values go only into the
environment of that skill's own subprocesses (see ``runtime.tools.ExecTool``), and
there is no process-wide state to count or restore.

Also fixed: OpenClaw's snapshot path looks entries up by skill *name*, so a skill
whose ``metadata.openclaw.skillKey`` differs from its name gets no env; the lookup
here always uses :attr:`Skill.skill_key`.

The rules, per skill with a ``skills.entries.<skillKey>`` entry:

1. ``allowedSensitive`` = ``primaryEnv`` ∪ ``requires.env`` (trimmed, exact case).
2. ``entries.<key>.env`` pairs (key trimmed) are candidates unless the key or the
   value is empty or ``base_env`` already has the key ("env injected only if the
   variable isn't already set").
3. ``primaryEnv`` gets ``apiKey`` (a trimmed string, a ``${ENV}`` template or a
   resolved SecretRef) unless ``env`` already supplied it (``env.PRIMARY`` beats
   ``apiKey``) or ``base_env`` has it (then a SecretRef is not even resolved).
4. Sanitising: keys in :data:`ALWAYS_BLOCKED_ENV_KEYS`, starting with one of
   :data:`ALWAYS_BLOCKED_ENV_PREFIXES` or matching :data:`ALWAYS_BLOCKED_ENV_PATTERNS`
   (compared upper-cased; OpenClaw 2026.9.6's list under every compat profile) are
   refused even when declared; sensitive names
   (:data:`SENSITIVE_ENV_PATTERNS`) only pass when in ``allowedSensitive``; a value
   holding NUL is refused; a value over 32 768 UTF-16 units or looking like base64
   (``^[A-Za-z0-9+/=]{80,}$``) only warns.

Log lines and warnings name keys, never values.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from skillbook.base.js import utf16_len
from skillbook.config.file import Config, SecretRef, SkillEntryConfig
from skillbook.model import Skill
from skillbook.runtime import SecretError
from skillbook.runtime.secrets import SecretLookup, ref_label, template_ref

__all__ = [
    "ALWAYS_BLOCKED_ENV_KEYS",
    "ALWAYS_BLOCKED_ENV_PATTERNS",
    "ALWAYS_BLOCKED_ENV_PREFIXES",
    "HOST_DANGEROUS_ENV_KEYS",
    "HOST_DANGEROUS_ENV_PREFIXES",
    "HOST_OVERRIDE_BLOCKED_ENV_KEYS",
    "HOST_OVERRIDE_BLOCKED_ENV_PREFIXES",
    "MAX_ENV_VALUE_CHARS",
    "SENSITIVE_ENV_PATTERNS",
    "SkillEnv",
    "is_always_blocked",
    "is_host_dangerous",
    "is_sensitive",
    "skill_env",
]

log = logging.getLogger(__name__)

# ------------------------------------------------------------------ data (spec)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Sensitive names (case-insensitive): injected only when the skill declares them.
#: JavaScript's ``$`` (no ``m`` flag) is Python's ``\Z``: Python's ``$`` also matches
#: before a final newline.
SENSITIVE_ENV_PATTERNS: Final = tuple(
    re.compile(p.removesuffix("$") + r"\Z", re.IGNORECASE)
    for p in (
        r"^ANTHROPIC_API_KEY$",
        r"^OPENAI_API_KEY$",
        r"^GEMINI_API_KEY$",
        r"^OPENROUTER_API_KEY$",
        r"^MINIMAX_API_KEY$",
        r"^ELEVENLABS_API_KEY$",
        r"^SYNTHETIC_API_KEY$",
        r"^TELEGRAM_BOT_TOKEN$",
        r"^DISCORD_BOT_TOKEN$",
        r"^SLACK_(BOT|APP)_TOKEN$",
        r"^LINE_CHANNEL_SECRET$",
        r"^LINE_CHANNEL_ACCESS_TOKEN$",
        r"^OPENCLAW_GATEWAY_(TOKEN|PASSWORD)$",
        r"^AWS_(SECRET_ACCESS_KEY|SECRET_KEY|SESSION_TOKEN)$",
        r"^(GH|GITHUB)_TOKEN$",
        r"^(AZURE|AZURE_OPENAI|COHERE|AI_GATEWAY|OPENROUTER)_API_KEY$",
        r"_?(API_KEY|TOKEN|PASSWORD|PRIVATE_KEY|SECRET)$",
    )
)

# The host environment policy of OpenClaw 2026.9.6 (``src/infra/host-env-security-
# policy.json`` and ``host-env-security.ts``), under *every* compat profile: it is a
# superset of 2026.4.12's (spec Appendix A), and a security floor is never looser for an
# older profile. tests/runtime/test_env_policy.py holds these sets to a snapshot of the
# package's lists and, with the oracle installed, to the package itself.

#: Keys blocked everywhere (host-dangerous: they change how programs start).
HOST_DANGEROUS_ENV_KEYS: Final = _words(
    """NODE_OPTIONS NODE_PATH NODE_REDIRECT_WARNINGS NODE_REPL_EXTERNAL_MODULE
    NODE_REPL_HISTORY NODE_V8_COVERAGE PYTHONHOME PYTHONPATH PERL5LIB PERL5OPT RUBYLIB
    RUBYOPT BASHOPTS BASH_ENV ENV KSH_ENV BROWSER GIT_ALLOW_PROTOCOL GIT_EDITOR
    GIT_EXTERNAL_DIFF GIT_DIR GIT_WORK_TREE GIT_COMMON_DIR GIT_EXEC_PATH GIT_INDEX_FILE
    GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES GIT_NAMESPACE GIT_PROTOCOL_FROM_USER
    GIT_SEQUENCE_EDITOR GIT_TEMPLATE_DIR GIT_SSL_NO_VERIFY GIT_SSL_CAINFO GIT_SSL_CAPATH CC
    CPP CXX CXXCPP CARGO_BUILD_RUSTC CARGO_BUILD_RUSTC_WRAPPER
    CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER CARGO_BUILD_RUSTDOC RUSTC RUSTC_WRAPPER
    RUSTC_WORKSPACE_WRAPPER RUSTDOC CMAKE_C_COMPILER CMAKE_CXX_COMPILER SHELL SHELLOPTS PS4
    GCONV_PATH IFS SSLKEYLOGFILE JAVA_OPTS JAVA_TOOL_OPTIONS _JAVA_OPTIONS JDK_JAVA_OPTIONS
    PYTHONBREAKPOINT DOTNET_STARTUP_HOOKS DOTNET_ADDITIONAL_DEPS FPATH GLIBC_TUNABLES
    MAVEN_OPTS MAKE MAKEFLAGS MFLAGS SBT_OPTS GRADLE_OPTS ANT_OPTS HGRCPATH HGEDITOR HGMERGE
    EXINIT VIMINIT MYVIMRC GVIMINIT LUA_INIT LUA_INIT_5_1 LUA_INIT_5_2 LUA_INIT_5_3
    LUA_INIT_5_4 EMACSLOADPATH RUBYSHELL GIT_HOOK_PATH SVN_EDITOR SVN_SSH BZR_EDITOR BZR_SSH
    BZR_PLUGIN_PATH SUDO_ASKPASS JULIA_EDITOR CONFIG_SITE CONFIG_SHELL CMAKE_TOOLCHAIN_FILE
    CATALINA_OPTS CORECLR_PROFILER HELM_PLUGINS PACKER_PLUGIN_PATH VAGRANT_VAGRANTFILE
    ERL_AFLAGS ERL_FLAGS ERL_ZFLAGS ELIXIR_ERL_OPTIONS R_ENVIRON R_PROFILE R_ENVIRON_USER
    R_PROFILE_USER TCLLIBPATH HOSTALIASES"""
)

#: "Override-only" keys: a skill may not set them either (home and tool folders,
#: pagers and editors, proxies and trust stores, package indexes, credentials).
HOST_OVERRIDE_BLOCKED_ENV_KEYS: Final = _words(
    """HOME GRADLE_USER_HOME ZDOTDIR GIT_DIR GIT_WORK_TREE GIT_COMMON_DIR GIT_INDEX_FILE
    GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES GIT_NAMESPACE GIT_SSH_COMMAND
    GIT_SSH GIT_PROXY_COMMAND GIT_ASKPASS GIT_SSL_NO_VERIFY GIT_SSL_CAINFO GIT_SSL_CAPATH
    SSH_ASKPASS LESSOPEN LESSCLOSE PAGER MANPAGER GIT_PAGER EDITOR VISUAL FCEDIT SUDO_EDITOR
    PROMPT_COMMAND HISTFILE PERL5DB PERL5DBCMD OPENSSL_CONF OPENSSL_ENGINES PYTHONSTARTUP
    WGETRC CURL_HOME CLASSPATH CFLAGS CGO_CFLAGS CGO_LDFLAGS GOFLAGS MAKEFLAGS MFLAGS
    CORECLR_PROFILER_PATH PHPRC PHP_INI_SCAN_DIR DENO_DIR BUN_CONFIG_REGISTRY
    YARN_RC_FILENAME HTTP_PROXY HTTPS_PROXY ALL_PROXY NO_PROXY NODE_TLS_REJECT_UNAUTHORIZED
    NODE_EXTRA_CA_CERTS SSL_CERT_FILE SSL_CERT_DIR REQUESTS_CA_BUNDLE CURL_CA_BUNDLE
    DOCKER_HOST DOCKER_TLS_VERIFY DOCKER_CERT_PATH PIP_INDEX_URL PIP_PYPI_URL
    PIP_EXTRA_INDEX_URL PIP_CONFIG_FILE PIP_FIND_LINKS PIP_TRUSTED_HOST UV_INDEX UV_INDEX_URL
    UV_PYTHON UV_EXTRA_INDEX_URL UV_DEFAULT_INDEX DOCKER_CONTEXT LIBRARY_PATH LDFLAGS CPATH
    C_INCLUDE_PATH CPLUS_INCLUDE_PATH OBJC_INCLUDE_PATH GOPROXY GONOSUMCHECK GONOSUMDB
    GONOPROXY GOPRIVATE GOENV GOPATH HGRCPATH PYTHONUSERBASE RUSTC_WRAPPER RUSTFLAGS
    RUSTUP_DIST_ROOT RUSTUP_DIST_SERVER RUSTUP_HOME RUSTUP_TOOLCHAIN RUSTUP_UPDATE_ROOT
    CARGO_HOME VIRTUAL_ENV LUA_PATH LUA_CPATH GEM_HOME GEM_PATH BUNDLE_GEMFILE COMPOSER_HOME
    CONDA_DEFAULT_ENV CONDA_PREFIX CARGO_BUILD_RUSTC_WRAPPER XDG_CACHE_HOME XDG_CONFIG_DIRS
    XDG_CONFIG_HOME XDG_DATA_DIRS XDG_DATA_HOME XDG_RUNTIME_DIR XDG_STATE_HOME
    AWS_CONFIG_FILE KUBECONFIG GOOGLE_APPLICATION_CREDENTIALS AWS_SHARED_CREDENTIALS_FILE
    AWS_WEB_IDENTITY_TOKEN_FILE AZURE_AUTH_LOCATION HELM_HOME ANSIBLE_CONFIG ANSIBLE_LIBRARY
    ANSIBLE_CALLBACK_PLUGINS ANSIBLE_COLLECTIONS_PATH ANSIBLE_CONNECTION_PLUGINS
    ANSIBLE_FILTER_PLUGINS ANSIBLE_INVENTORY_PLUGINS ANSIBLE_LOOKUP_PLUGINS
    ANSIBLE_MODULE_UTILS ANSIBLE_REMOTE_TEMP ANSIBLE_ROLES_PATH ANSIBLE_STRATEGY_PLUGINS
    R_LIBS_USER TF_CLI_CONFIG_FILE TF_PLUGIN_CACHE_DIR AMQP_URL AWS_ACCESS_KEY_ID
    AWS_CONTAINER_CREDENTIALS_FULL_URI AWS_CONTAINER_CREDENTIALS_RELATIVE_URI
    AWS_SECRET_ACCESS_KEY AWS_SECURITY_TOKEN AWS_SESSION_TOKEN AZURE_CLIENT_ID
    AZURE_CLIENT_SECRET DATABASE_URL GH_TOKEN GITHUB_TOKEN GITLAB_TOKEN MONGODB_URI
    NODE_AUTH_TOKEN NPM_TOKEN REDIS_URL SSH_AUTH_SOCK SYSTEMROOT WINDIR"""
)

#: Every key a skill can never set, whatever it declares (``OPENSSL_CONF`` included).
ALWAYS_BLOCKED_ENV_KEYS: Final = (
    HOST_DANGEROUS_ENV_KEYS | HOST_OVERRIDE_BLOCKED_ENV_KEYS | frozenset({"OPENSSL_CONF"})
)

#: Prefixes blocked everywhere (loader and shell injection), compared upper-cased.
HOST_DANGEROUS_ENV_PREFIXES: Final = frozenset({"DYLD_", "LD_", "BASH_FUNC_"})
#: Prefixes of the override-only policy (config injection), compared upper-cased.
HOST_OVERRIDE_BLOCKED_ENV_PREFIXES: Final = frozenset(
    {"GIT_CONFIG_", "NPM_CONFIG_", "CARGO_REGISTRIES_", "TF_VAR_"}
)
#: Both kinds of prefix.
ALWAYS_BLOCKED_ENV_PREFIXES: Final = (
    HOST_DANGEROUS_ENV_PREFIXES | HOST_OVERRIDE_BLOCKED_ENV_PREFIXES
)

#: Patterns matched against the upper-cased key: Cargo's per-target ``linker`` and
#: ``runner`` (each names a program Cargo runs). JavaScript's ``$`` is ``\Z`` here.
ALWAYS_BLOCKED_ENV_PATTERNS: Final = (re.compile(r"CARGO_TARGET_[A-Z0-9_]+_(?:LINKER|RUNNER)\Z"),)

MAX_ENV_VALUE_CHARS: Final = 32768
_BASE64_RE: Final = re.compile(r"^[A-Za-z0-9+/=]{80,}\Z")

REASON_ALWAYS_BLOCKED: Final = "always blocked (host environment policy)"
REASON_UNDECLARED: Final = "sensitive name not declared by the skill (primaryEnv or requires.env)"
REASON_NUL: Final = "value contains a NUL character"
REASON_BAD_NAME: Final = 'name contains "=" or a NUL character'
WARN_TOO_LONG: Final = "Value exceeds maximum length"
WARN_BASE64: Final = "Value looks like base64-encoded credential data"

_EMPTY: Final[Mapping[str, str]] = MappingProxyType({})


def is_sensitive(key: str) -> bool:
    return any(p.search(key) for p in SENSITIVE_ENV_PATTERNS)


def is_always_blocked(key: str) -> bool:
    """Whether a skill may never set ``key`` (trimmed, compared upper-cased)."""
    upper = key.strip().upper()
    return (
        upper in ALWAYS_BLOCKED_ENV_KEYS
        or upper.startswith(_ALL_PREFIXES)
        or any(p.match(upper) for p in ALWAYS_BLOCKED_ENV_PATTERNS)
    )


def is_host_dangerous(key: str) -> bool:
    """Whether ``key`` changes how programs start (``LD_PRELOAD``, ``NODE_OPTIONS``, a
    ``GIT_CONFIG_*`` or Cargo runner…): :func:`is_always_blocked` less the override-only
    keys (credentials, proxies, home folders), which are the user's to pass on."""
    upper = key.strip().upper()
    return (
        upper in HOST_DANGEROUS_ENV_KEYS
        or upper == "OPENSSL_CONF"
        or upper.startswith(_ALL_PREFIXES)
        or any(p.match(upper) for p in ALWAYS_BLOCKED_ENV_PATTERNS)
    )


_ALL_PREFIXES: Final = tuple(sorted(ALWAYS_BLOCKED_ENV_PREFIXES))


# ------------------------------------------------------------------ the overlay


@dataclass(frozen=True, slots=True)
class SkillEnv:
    """The variables one skill adds to its own subprocesses' environment.

    ``values`` is kept out of ``repr`` because it holds secrets.
    """

    skill_key: str
    values: Mapping[str, str] = field(default_factory=lambda: _EMPTY, repr=False)
    #: ``(key, reason)`` for every variable refused.
    blocked: tuple[tuple[str, str], ...] = ()
    #: ``"KEY: warning"`` lines (keys only, never values).
    warnings: tuple[str, ...] = ()
    #: Keys of ``values`` whose values are secrets (primaryEnv and sensitive names).
    secret_keys: frozenset[str] = frozenset()

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(self.values)

    def secret_values(self) -> tuple[str, ...]:
        """The secret values, longest first (the order redaction needs)."""
        found = {self.values[k] for k in self.secret_keys if self.values.get(k)}
        return tuple(sorted(found, key=len, reverse=True))

    def apply(self, base_env: Mapping[str, str]) -> dict[str, str]:
        """A new environment for a child: ``base_env`` plus this overlay.

        A key already in ``base_env`` keeps its value (the spec's "only if not set").
        """
        out = dict(base_env)
        for key, value in self.values.items():
            out.setdefault(key, value)
        return out


def skill_env(
    skill: Skill,
    *,
    config: Config,
    base_env: Mapping[str, str],
    resolver: SecretLookup | None = None,
) -> SkillEnv:
    """The §11.3 overlay for ``skill``; raises :class:`SecretError` for a bad ``apiKey``.

    Without ``resolver`` an ``apiKey`` SecretRef (or ``${ENV}`` template) that is
    needed raises, as OpenClaw does for an unresolved ref.
    """
    key = skill.skill_key
    entry = config.entry(key)
    if entry is None:
        return SkillEnv(skill_key=key)
    primary, allowed_sensitive = _declared(skill)
    pending = _pending(entry, key, primary, base_env, resolver)
    values, blocked, warnings = _admitted(pending, allowed_sensitive)
    if blocked:
        log.warning("Blocked skill env overrides for %s: %s", key, ", ".join(k for k, _ in blocked))
    if warnings:
        log.warning("Suspicious skill env overrides for %s: %s", key, ", ".join(warnings))
    secret_keys = frozenset(k for k in values if k == primary or is_sensitive(k))
    return SkillEnv(
        skill_key=key,
        values=MappingProxyType(values),
        blocked=tuple(blocked),
        warnings=tuple(warnings),
        secret_keys=secret_keys,
    )


def _declared(skill: Skill) -> tuple[str, set[str]]:
    """The skill's ``primaryEnv``, and the sensitive names it may set (it declares them)."""
    meta = skill.metadata
    primary = (meta.primary_env or "").strip() if meta is not None else ""
    required = meta.requires.env if meta is not None and meta.requires is not None else ()
    return primary, {e.strip() for e in (primary, *required) if e.strip()}


def _pending(
    entry: SkillEntryConfig,
    key: str,
    primary: str,
    base_env: Mapping[str, str],
    resolver: SecretLookup | None,
) -> dict[str, str]:
    """The entry's ``env`` and its ``apiKey`` as ``primaryEnv``, for names not set already."""
    pending: dict[str, str] = {}
    for raw_key, value in entry.env.items():
        env_key = raw_key.strip()
        if env_key and value and env_key not in base_env:
            pending[env_key] = value
    if primary and primary not in pending and primary not in base_env:
        api_key = _api_key(entry.api_key, key, resolver)
        if api_key:
            pending[primary] = api_key
    return pending


def _admitted(
    pending: Mapping[str, str], allowed_sensitive: set[str]
) -> tuple[dict[str, str], list[tuple[str, str]], list[str]]:
    """The values let through, the ones blocked with why, and warnings about the kept ones."""
    values: dict[str, str] = {}
    blocked: list[tuple[str, str]] = []
    warnings: list[str] = []
    for env_key, value in pending.items():
        reason = _refusal(env_key, value, allowed_sensitive)
        if reason is not None:
            blocked.append((env_key, reason))
            continue
        warning = _value_warning(value)
        if warning is not None:
            warnings.append(f"{env_key}: {warning}")
        values[env_key] = value
    return values, blocked, warnings


def _api_key(value: str | SecretRef | None, key: str, resolver: SecretLookup | None) -> str:
    if value is None:
        return ""
    ref = value if isinstance(value, SecretRef) else template_ref(value)
    if ref is None:
        assert isinstance(value, str)
        return value.strip()
    config_key = f"skills.entries.{key}.apiKey"
    if resolver is None:
        label = ref_label(ref)
        raise SecretError(
            f'{config_key}: unresolved SecretRef "{label}" (no secret resolver was given)',
            key=config_key,
            ref=label,
        )
    return resolver.resolve(ref, key=config_key).reveal()


def _refusal(key: str, value: str, allowed_sensitive: set[str]) -> str | None:
    if "=" in key or "\0" in key:  # the config refuses these; a Config made in code may not
        return REASON_BAD_NAME
    if is_always_blocked(key):
        return REASON_ALWAYS_BLOCKED
    if is_sensitive(key) and key not in allowed_sensitive:
        return REASON_UNDECLARED
    if "\0" in value:
        return REASON_NUL
    return None


def _value_warning(value: str) -> str | None:
    if utf16_len(value) > MAX_ENV_VALUE_CHARS:
        return WARN_TOO_LONG
    if _BASE64_RE.match(value):
        return WARN_BASE64
    return None
