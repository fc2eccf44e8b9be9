"""Which installers may run at all: ``skills.install.policy`` and the fallback opt-ins.

Input: the validated config (``skills.install``) and, per install, the installer kind
and download URL. Output: an :class:`InstallPolicy` value and, from
:meth:`InstallPolicy.refusal`, ``None`` or an ``install.policy-refused`` message
naming the config key that refuses it. The default policy allows every kind, every
public download host, no sha256 required, no fallbacks, no private network.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from skillbook.config.file import Config
from skillbook.distribution.netguard import NetworkPolicy, host_matches

__all__ = ["FALLBACKS", "InstallPolicy"]

#: The opt-in fallbacks (``--fallback`` / ``skills.install.allowApt`` / ``allowPip``).
FALLBACKS = ("apt", "pip")
_KEY = "skills.install.policy"


@dataclass(frozen=True, slots=True)
class InstallPolicy:
    #: Installer kinds that may run (``apt`` and ``pip`` are the fallbacks); None = all.
    allowed_kinds: frozenset[str] | None = None
    #: Host patterns downloads may come from (``*.example.com`` for subdomains); None = any.
    allowed_download_hosts: tuple[str, ...] | None = None
    require_sha256: bool = False
    allow_private_network: bool = False
    #: Opt-in fallbacks on Linux when brew or uv is missing.
    fallbacks: frozenset[str] = frozenset()

    @classmethod
    def from_config(cls, config: Config, *, fallbacks: tuple[str, ...] = ()) -> InstallPolicy:
        """The configured policy; ``fallbacks`` (``--fallback``) add to the opt-ins."""
        inst = config.skills.install
        pol = inst.policy
        enabled = set(fallbacks)
        if inst.allow_apt:
            enabled.add("apt")
        if inst.allow_pip:
            enabled.add("pip")
        return cls(
            allowed_kinds=frozenset(pol.allowed_kinds) if pol.allowed_kinds is not None else None,
            allowed_download_hosts=pol.allowed_download_hosts,
            require_sha256=bool(pol.require_sha256),
            allow_private_network=bool(pol.allow_private_network),
            fallbacks=frozenset(enabled),
        )

    def network(self) -> NetworkPolicy:
        return NetworkPolicy(
            allow_private_network=self.allow_private_network,
            allowed_hosts=self.allowed_download_hosts or (),
        )

    def refusal(
        self, kind: str, *, url: str | None = None, sha256: str | None = None
    ) -> str | None:
        """Why this policy refuses an installer of ``kind`` (and download ``url``), or None."""
        if self.allowed_kinds is not None and kind not in self.allowed_kinds:
            allowed = ", ".join(sorted(self.allowed_kinds)) or "none"
            return f'{_KEY}.allowedKinds does not allow "{kind}" installers (allowed: {allowed})'
        if kind != "download" or url is None:
            return None
        host = urlsplit(url).hostname or ""
        hosts = self.allowed_download_hosts
        if hosts is not None and not any(host_matches(host, p) for p in hosts):
            allowed = ", ".join(hosts) or "none"
            return (
                f'{_KEY}.allowedDownloadHosts does not allow downloads from "{host}" '
                f"(allowed: {allowed})"
            )
        if self.require_sha256 and not sha256:
            return f"{_KEY}.requireSha256 is set and the download of {url} has no sha256"
        return None
