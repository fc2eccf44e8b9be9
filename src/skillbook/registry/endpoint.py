"""Which registry to talk to, and with which token.

Input: the environment, the home folder, the platform, ``--registry`` and the config's
``skills.registry.url``. Output: an :class:`Endpoint`: the base URL and the token,
each with the reason it was chosen (``skillbook doctor``-style). Reads at most the
``clawhub`` CLI's config files; never the network.

Base URL, first found (OpenClaw's order, then the CLI's, clawhub-api.md §1):
``--registry``, ``OPENCLAW_CLAWHUB_URL``, ``CLAWHUB_URL``, ``CLAWHUB_REGISTRY``,
``CLAWDHUB_REGISTRY``, ``skills.registry.url``, the ``apiBase`` of the site's
``/.well-known/clawhub.json`` (the CLI's discovery, when a site is given: ``--site``,
``CLAWHUB_SITE``, ``CLAWDHUB_SITE``; the caller passes the fetch as ``discover``), the
``registry`` cached in the CLI's config file (unless it is one of the CLI's legacy
hosts), ``https://clawhub.ai``. Values are trimmed and lose trailing ``/``. Unlike the
CLI, no site means no discovery: the default site's document names the default
registry, so asking it would only hide a cached self-hosted registry, and would need
the network before anything was asked for.

Token, first found (§2): ``OPENCLAW_CLAWHUB_TOKEN``, ``CLAWHUB_TOKEN``,
``CLAWHUB_AUTH_TOKEN``, then the config files OpenClaw and the CLI read
(``OPENCLAW_CLAWHUB_CONFIG_PATH``/``CLAWHUB_CONFIG_PATH``/``CLAWDHUB_CONFIG_PATH``, else
``clawhub/config.json`` and the legacy ``clawdhub/config.json`` under Application
Support on macOS, ``%APPDATA%`` on Windows, ``$XDG_CONFIG_HOME`` or ``~/.config``),
with OpenClaw's field lookup (``accessToken``, ``authToken``, ``apiToken``, ``token``,
also inside ``auth``/``session``/``credentials``/``user``). Beyond OpenClaw: a token
from a config file that names its ``registry`` is used only for that registry, so a
clawhub.ai token never goes to a self-hosted one (environment tokens are explicit and
always sent). Tokens holding CR or LF are refused.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from skillbook.registry.errors import RegistryError
from skillbook.registry.lockfile import read_json

__all__ = [
    "DEFAULT_REGISTRY",
    "LEGACY_HOSTS",
    "Endpoint",
    "config_tokens",
    "normalize_base_url",
    "resolve_endpoint",
]

DEFAULT_REGISTRY: Final = "https://clawhub.ai"
#: Hosts the CLI no longer uses; a cached registry on one of them is skipped.
LEGACY_HOSTS: Final = frozenset(
    {"auth.clawdhub.com", "auth.clawhub.com", "auth.clawhub.ai", "registry.clawhub.ai"}
)
_URL_VARS: Final = ("OPENCLAW_CLAWHUB_URL", "CLAWHUB_URL", "CLAWHUB_REGISTRY", "CLAWDHUB_REGISTRY")
_SITE_VARS: Final = ("CLAWHUB_SITE", "CLAWDHUB_SITE")
_TOKEN_VARS: Final = ("OPENCLAW_CLAWHUB_TOKEN", "CLAWHUB_TOKEN", "CLAWHUB_AUTH_TOKEN")
_CONFIG_VARS: Final = (
    "OPENCLAW_CLAWHUB_CONFIG_PATH",
    "CLAWHUB_CONFIG_PATH",
    "CLAWDHUB_CONFIG_PATH",
)
_TOKEN_FIELDS: Final = ("accessToken", "authToken", "apiToken", "token")
_NESTED: Final = ("auth", "session", "credentials", "user")


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A registry base URL and the token to send it (never printed)."""

    base_url: str
    base_reason: str = "the default"
    token: str | None = field(default=None, repr=False)
    token_reason: str | None = None
    #: The site (``--site``, ``CLAWHUB_SITE``) discovery asked, if any.
    site: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "registry": self.base_url,
            "registryReason": self.base_reason,
            "site": self.site,
            "token": self.token is not None,
            "tokenReason": self.token_reason,
        }


def normalize_base_url(raw: str) -> str:
    value = raw.strip().rstrip("/") or raw.strip()
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise RegistryError("registry.invalid-url", f"Invalid registry URL: {raw}")
    return value


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


def config_files(env: Mapping[str, str], home: Path, platform: str) -> list[Path]:
    """The ``clawhub`` config files to read, in order."""
    explicit = [Path(env[n]).expanduser() for n in _CONFIG_VARS if env.get(n, "").strip()]
    if explicit:
        return explicit
    bases: list[Path] = []
    if platform == "darwin":
        bases.append(home / "Library" / "Application Support")
    if platform.startswith("win") and env.get("APPDATA") and not env.get("XDG_CONFIG_HOME"):
        bases.append(Path(env["APPDATA"]))
    xdg = env.get("XDG_CONFIG_HOME", "").strip()
    bases.append(Path(xdg) if xdg else home / ".config")
    return [base / f"{name}/config.json" for base in bases for name in ("clawhub", "clawdhub")]


def config_tokens(env: Mapping[str, str], home: Path, platform: str) -> list[str]:
    """Every token the ``clawhub`` config files hold, whatever registry they name (the
    experience engine redacts them all)."""
    found = (_find_token(raw) for _, raw in _read_configs(config_files(env, home, platform)))
    return [token for token in found if token is not None]


def _find_token(value: Any, depth: int = 0) -> str | None:
    if not isinstance(value, dict) or depth > 4:
        return None
    for name in _TOKEN_FIELDS:
        token = value.get(name)
        if isinstance(token, str) and token.strip():
            return token.strip()
    for name in _NESTED:
        found = _find_token(value.get(name), depth + 1)
        if found:
            return found
    return None


def _read_configs(files: list[Path]) -> list[tuple[Path, dict[str, Any]]]:
    out = []
    for path in files:
        try:
            raw = read_json(path)
        except (OSError, ValueError):
            continue
        if isinstance(raw, dict):
            out.append((path, raw))
    return out


def _check_token(token: str, where: str) -> str:
    if "\r" in token or "\n" in token:
        raise RegistryError("registry.invalid-token", f"Invalid API token (from {where})")
    return token


def resolve_endpoint(
    env: Mapping[str, str],
    *,
    home: Path,
    platform: str,
    explicit: str | None = None,
    config_url: str | None = None,
    config_url_reason: str = "skills.registry.url",
    site: str | None = None,
    discover: Callable[[str], tuple[str, str] | None] | None = None,
) -> Endpoint:
    """The registry and token (see the module docstring); raises ``registry.invalid-url``.

    ``discover(site)`` returns ``(api base, document URL)`` or None."""
    configs = _read_configs(config_files(env, home, platform))
    base, reason = DEFAULT_REGISTRY, "the default"
    candidates: list[tuple[str | None, str]] = [(explicit, "--registry")]
    candidates += [(env.get(n), n) for n in _URL_VARS]
    candidates.append((config_url, config_url_reason))
    chosen_site = _site(env, site)
    for value, why in candidates:
        if value is not None and value.strip():
            base, reason = normalize_base_url(value), why
            break
    else:
        found = discover(chosen_site) if chosen_site and discover else None
        cached = [
            (raw["registry"], f"registry in {path}")
            for path, raw in configs
            if isinstance(raw.get("registry"), str)
            and raw["registry"].strip()
            and urlsplit(raw["registry"].strip()).hostname not in LEGACY_HOSTS
        ]
        if found is not None:
            base, reason = normalize_base_url(found[0]), f"apiBase in {found[1]}"
        elif cached:
            base, reason = normalize_base_url(cached[0][0]), cached[0][1]
    endpoint = _with_token(env, configs, base, reason)
    return Endpoint(
        endpoint.base_url, endpoint.base_reason, endpoint.token, endpoint.token_reason, chosen_site
    )


def _site(env: Mapping[str, str], explicit: str | None) -> str | None:
    for value in (explicit, *(env.get(n) for n in _SITE_VARS)):
        if value is not None and value.strip():
            return normalize_base_url(value)
    return None


def _with_token(
    env: Mapping[str, str], configs: list[tuple[Path, dict[str, Any]]], base: str, reason: str
) -> Endpoint:
    for name in _TOKEN_VARS:
        token = env.get(name, "").strip()
        if token:
            return Endpoint(base, reason, _check_token(token, name), name)
    for path, raw in configs:
        found = _find_token(raw)
        if found is None:
            continue
        owner = raw.get("registry")
        if isinstance(owner, str) and owner.strip():
            try:
                if _origin(normalize_base_url(owner)) != _origin(base):
                    continue
            except RegistryError:
                continue
        return Endpoint(base, reason, _check_token(found, str(path)), f"token in {path}")
    return Endpoint(base, reason)
