"""Which registry to talk to, and with which token: the one decision every command uses.

Input: the environment, the home folder, the platform, ``--registry`` and the config's
``skills.registry.url``. Output: an :class:`Endpoint`: the base URL and the token,
each with the reason it was chosen (what ``skillbook doctor`` shows). Reads at most the
``clawhub`` CLI's config files; never the network (site discovery is the caller's fetch).
``search``, ``install``, ``update``, ``verify --remote`` and ``publish`` all ask
:func:`resolve_endpoint`; nothing else picks a registry.

Base URL, first found (skillbook's own variable, then OpenClaw's order, then the CLI's,
clawhub-api.md §1):

1. ``--registry`` (``kind`` ``flag``);
2. ``SKILLBOOK_REGISTRY_URL`` (``env``);
3. ``OPENCLAW_CLAWHUB_URL``, ``CLAWHUB_URL`` (OpenClaw's), ``CLAWHUB_REGISTRY``,
   ``CLAWDHUB_REGISTRY`` (the ``clawhub`` CLI's) (``env``);
4. ``skills.registry.url`` (``config``);
5. the ``apiBase`` of a site's ``/.well-known/clawhub.json`` (the CLI's discovery, when a
   site is given: ``--site``, ``CLAWHUB_SITE``, ``CLAWDHUB_SITE``; the caller passes the
   fetch as ``discover``) (``site``);
6. the ``registry`` cached in the CLI's config file, unless it is one of the CLI's
   legacy hosts (``cached``);
7. ``https://clawhub.ai`` (``default``).

Values are trimmed and lose trailing ``/``. Unlike the CLI, no site means no discovery:
the default site's document names the default registry, so asking it would only hide a
cached self-hosted registry, and would need the network before anything was asked for.
Environment beats config because it is the narrower, per-run setting.

An installed skill (``update``, ``verify --remote``) is asked of the registry recorded
in its ``origin.json`` (or lock entry), whatever the above says, as OpenClaw does: it
updates from where it came from, so a same-named skill elsewhere never replaces it.
:func:`installed_endpoint` applies that rule; the command's registry applies only to a
skill with no recorded one. ``publish`` takes steps 1 to 5 only: a cached or default
registry is never published to by mistake.

Token, first found (§2): ``SKILLBOOK_REGISTRY_TOKEN``, ``OPENCLAW_CLAWHUB_TOKEN``,
``CLAWHUB_TOKEN``, ``CLAWHUB_AUTH_TOKEN``, then the config files OpenClaw and the CLI read
(``OPENCLAW_CLAWHUB_CONFIG_PATH``/``CLAWHUB_CONFIG_PATH``/``CLAWDHUB_CONFIG_PATH``, else
``clawhub/config.json`` and the legacy ``clawdhub/config.json`` under Application
Support on macOS, ``%APPDATA%`` on Windows, ``$XDG_CONFIG_HOME`` or ``~/.config``),
with OpenClaw's field lookup (``accessToken``, ``authToken``, ``apiToken``, ``token``,
also inside ``auth``/``session``/``credentials``/``user``). Beyond OpenClaw: a token
from a config file that names its ``registry`` is used only for that registry, so a
clawhub.ai token never goes to a self-hosted one (environment tokens are explicit and
go to the chosen registry, never to an installed skill's other one;
``SKILLBOOK_REGISTRY_TOKEN`` goes only to a registry set in steps 1 to 5, never to the
cached or default one). Tokens holding CR or LF are refused.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from skillbook.distribution.registry import RegistryError
from skillbook.distribution.registry.lockfile import read_json

__all__ = [
    "DEFAULT_REGISTRY",
    "LEGACY_HOSTS",
    "REGISTRY_ENV",
    "TOKEN_ENV",
    "Endpoint",
    "config_tokens",
    "installed_endpoint",
    "normalize_base_url",
    "resolve_endpoint",
    "same_registry",
]

DEFAULT_REGISTRY: Final = "https://clawhub.ai"
#: Hosts the CLI no longer uses; a cached registry on one of them is skipped.
LEGACY_HOSTS: Final = frozenset(
    {"auth.clawdhub.com", "auth.clawhub.com", "auth.clawhub.ai", "registry.clawhub.ai"}
)
#: skillbook's own variables, tried before the clawhub clients'.
REGISTRY_ENV: Final = "SKILLBOOK_REGISTRY_URL"
TOKEN_ENV: Final = "SKILLBOOK_REGISTRY_TOKEN"
_URL_VARS: Final = (
    REGISTRY_ENV,
    "OPENCLAW_CLAWHUB_URL",
    "CLAWHUB_URL",
    "CLAWHUB_REGISTRY",
    "CLAWDHUB_REGISTRY",
)
_SITE_VARS: Final = ("CLAWHUB_SITE", "CLAWDHUB_SITE")
_TOKEN_VARS: Final = (TOKEN_ENV, "OPENCLAW_CLAWHUB_TOKEN", "CLAWHUB_TOKEN", "CLAWHUB_AUTH_TOKEN")
_CONFIG_VARS: Final = (
    "OPENCLAW_CLAWHUB_CONFIG_PATH",
    "CLAWHUB_CONFIG_PATH",
    "CLAWDHUB_CONFIG_PATH",
)
_TOKEN_FIELDS: Final = ("accessToken", "authToken", "apiToken", "token")
_NESTED: Final = ("auth", "session", "credentials", "user")


#: Where a registry choice came from (:attr:`Endpoint.kind`), in precedence order.
KINDS: Final = ("flag", "env", "config", "site", "cached", "default", "recorded", "given")


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A registry base URL and the token to send it (never printed)."""

    base_url: str
    base_reason: str = "the default"
    token: str | None = field(default=None, repr=False)
    token_reason: str | None = None
    #: The site (``--site``, ``CLAWHUB_SITE``) discovery asked, if any.
    site: str | None = None
    #: Which step chose the URL (:data:`KINDS`); ``given`` when built by hand.
    kind: str = "given"

    @property
    def label(self) -> str:
        """How output names this registry: its URL, or ``clawhub.ai (default)`` when
        nothing chose it (so a team sees at once that its own registry was not used)."""
        if self.kind == "default" and self.base_url == DEFAULT_REGISTRY:
            return "clawhub.ai (default)"
        return self.base_url

    def to_json(self) -> dict[str, Any]:
        return {
            "registry": self.base_url,
            "registryReason": self.base_reason,
            "registrySource": self.kind,
            "site": self.site,
            "token": self.token is not None,
            "tokenReason": self.token_reason,
        }


def normalize_base_url(raw: str) -> str:
    """``raw`` trimmed, without trailing ``/``; ``registry.invalid-url`` unless it is an
    ``http(s)://`` URL with a host and no whitespace or control characters (the URL is
    printed in every message that names the registry)."""
    value = raw.strip().rstrip("/") or raw.strip()
    try:
        parts = urlsplit(value)
        valid = parts.scheme in ("http", "https") and bool(parts.netloc)
    except ValueError:  # a malformed IPv6 host, say
        valid = False
    if not valid or any(c.isspace() or not c.isprintable() for c in value):
        raise RegistryError("registry.invalid-url", f"Invalid registry URL: {raw.strip()}")
    return value


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


def same_registry(a: str, b: str) -> bool:
    """Whether two base URLs name one registry (case of scheme and host, trailing ``/``)."""
    a, b = a.strip().rstrip("/"), b.strip().rstrip("/")
    return _origin(a) == _origin(b) and urlsplit(a).path == urlsplit(b).path


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
    base, reason, kind = DEFAULT_REGISTRY, "the default", "default"
    candidates: list[tuple[str | None, str, str]] = [(explicit, "--registry", "flag")]
    candidates += [(env.get(n), n, "env") for n in _URL_VARS]
    candidates.append((config_url, config_url_reason, "config"))
    chosen_site = _site(env, site)
    for value, why, source in candidates:
        if value is not None and value.strip():
            base, reason, kind = normalize_base_url(value), why, source
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
            base, reason, kind = normalize_base_url(found[0]), f"apiBase in {found[1]}", "site"
        elif cached:
            base, reason, kind = normalize_base_url(cached[0][0]), cached[0][1], "cached"
    endpoint = _with_token(env, configs, base, reason, chosen=kind not in ("cached", "default"))
    return Endpoint(
        endpoint.base_url,
        endpoint.base_reason,
        endpoint.token,
        endpoint.token_reason,
        chosen_site,
        kind,
    )


def installed_endpoint(chosen: Endpoint, recorded: str | None) -> Endpoint:
    """The registry to ask about an installed skill: the one it recorded (its
    ``origin.json`` or lock entry), else the command's ``chosen`` one.

    The chosen endpoint's token goes only to the chosen registry: a team token set for
    its own registry never reaches the public one a skill happened to come from."""
    if recorded is None or not recorded.strip():
        return chosen
    try:
        base = normalize_base_url(recorded)
    except RegistryError:
        # Falling back to the chosen registry would fetch a same-named skill from
        # somewhere it never came from.
        raise RegistryError(
            "registry.invalid-url",
            f"Invalid registry URL recorded for an installed skill: {recorded.strip()!r} "
            "(reinstall it with `skillbook install NAME --force`)",
        ) from None
    if same_registry(base, chosen.base_url):
        return chosen
    return Endpoint(base, "origin.json", kind="recorded")


def _site(env: Mapping[str, str], explicit: str | None) -> str | None:
    for value in (explicit, *(env.get(n) for n in _SITE_VARS)):
        if value is not None and value.strip():
            return normalize_base_url(value)
    return None


def _with_token(
    env: Mapping[str, str],
    configs: list[tuple[Path, dict[str, Any]]],
    base: str,
    reason: str,
    *,
    chosen: bool,
) -> Endpoint:
    for name in _TOKEN_VARS:
        if name == TOKEN_ENV and not chosen:
            # skillbook's token is a team's token for the registry it set: a registry
            # nobody chose (the cached one, clawhub.ai) never gets it.
            continue
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
