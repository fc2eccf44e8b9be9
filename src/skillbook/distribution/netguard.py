"""The network guard of downloads: which hosts a download may reach (SSRF protection).

Input: a URL's host name and a :class:`NetworkPolicy`. Output: the IP addresses to
connect to (resolved once, then pinned, so a DNS answer cannot change between the
check and the connection), or an :class:`~skillbook.distribution.InstallError`
(``install.download-failed``) with OpenClaw's wording. By default (as OpenClaw's
strict guard) loopback, private, link-local, shared, reserved, multicast and other
special-use addresses are refused, as are ``localhost``, ``*.local``,
``*.localhost``, ``*.internal`` and ``metadata.google.internal``; tests serving on
127.0.0.1 say so explicitly with ``NetworkPolicy(allow_private_network=True)``.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from skillbook.distribution import InstallError

__all__ = [
    "BLOCKED_HOST_OR_IP_MESSAGE",
    "BLOCKED_RESOLVED_IP_MESSAGE",
    "DEFAULT_MAX_REDIRECTS",
    "NetworkPolicy",
    "host_matches",
    "is_blocked_hostname",
    "is_special_use_ip",
    "resolve_pinned",
]

BLOCKED_HOST_OR_IP_MESSAGE: Final = "Blocked hostname or private/internal/special-use IP address"
BLOCKED_RESOLVED_IP_MESSAGE: Final = "Blocked: resolves to private/internal/special-use IP address"
DEFAULT_MAX_REDIRECTS: Final = 3
_BLOCKED_NAMES: Final = frozenset(
    {"localhost", "localhost.localdomain", "metadata.google.internal"}
)
_BLOCKED_SUFFIXES: Final = (".localhost", ".local", ".internal")

Resolver = Callable[[str, int], Sequence[str]]


@dataclass(frozen=True, slots=True)
class NetworkPolicy:
    """What a download may reach. The default is strict."""

    #: Allow loopback/private/link-local targets (a local mirror; tests on 127.0.0.1).
    allow_private_network: bool = False
    #: Host patterns (``example.com`` or ``*.example.com``) every hop must match;
    #: empty = any public host. Redirect targets are checked too.
    allowed_hosts: tuple[str, ...] = ()
    max_redirects: int = DEFAULT_MAX_REDIRECTS


def _normalize_host(host: str) -> str:
    host = host.strip().lower().rstrip(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host


def host_matches(host: str, pattern: str) -> bool:
    """``example.com`` matches itself; ``*.example.com`` matches its subdomains only."""
    host, pattern = _normalize_host(host), _normalize_host(pattern)
    if pattern.startswith("*."):
        suffix = pattern[2:]
        return bool(suffix) and host != suffix and host.endswith("." + suffix)
    return host == pattern


def is_blocked_hostname(host: str) -> bool:
    name = _normalize_host(host)
    return name in _BLOCKED_NAMES or name.endswith(_BLOCKED_SUFFIXES)


def is_special_use_ip(address: str) -> bool:
    """True for every address that is not globally routable unicast (IPv4-in-IPv6 unwrapped)."""
    try:
        ip = ipaddress.ip_address(_normalize_host(address).split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if embedded is not None:
            return is_special_use_ip(str(embedded))
    return ip.is_multicast or not ip.is_global


def _system_resolver(host: str, port: int) -> Sequence[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    out: list[str] = []
    for info in infos:
        address = str(info[4][0])
        if address not in out:
            out.append(address)
    return out


def resolve_pinned(
    host: str, port: int, policy: NetworkPolicy, *, resolver: Resolver | None = None
) -> tuple[str, ...]:
    """Check ``host`` against ``policy``, resolve it once, check every address.

    Returns the addresses to connect to (first one first). Raises
    ``install.download-failed`` when the host or any address is refused or the name
    does not resolve.
    """
    name = _normalize_host(host)
    if not name:
        raise InstallError("install.download-failed", "Invalid hostname")
    if policy.allowed_hosts and not any(host_matches(name, p) for p in policy.allowed_hosts):
        raise InstallError(
            "install.download-failed", f"Blocked hostname (not in allowlist): {host}"
        )
    if not policy.allow_private_network and (is_blocked_hostname(name) or is_special_use_ip(name)):
        raise InstallError("install.download-failed", BLOCKED_HOST_OR_IP_MESSAGE)
    try:
        addresses = tuple((resolver or _system_resolver)(name, port))
    except (OSError, UnicodeError) as exc:
        raise InstallError(
            "install.download-failed", f"Unable to resolve hostname: {host} ({_reason(exc)})"
        ) from None
    if not addresses:
        raise InstallError("install.download-failed", f"Unable to resolve hostname: {host}")
    if not policy.allow_private_network and any(is_special_use_ip(a) for a in addresses):
        raise InstallError("install.download-failed", BLOCKED_RESOLVED_IP_MESSAGE)
    return addresses


def _reason(exc: BaseException) -> Any:
    return getattr(exc, "strerror", None) or exc
