"""Where a URL points: raw IP addresses, paste and file-drop sites, tunnels, shorteners.

Input: text holding URLs. Output: :class:`HostVerdict` values saying why a host is
suspicious, or that it is a well-known installer host. Nothing here resolves a
name or touches the network.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from dataclasses import dataclass

from skillbook.security import patterns

#: Sites that host anonymous text or files. The ClawHavoc "prerequisites" pointed
#: at glot.io snippets and raw gists; stealer loaders also use file drops and tunnels.
PASTE_HOSTS = frozenset(
    {
        "pastebin.com", "glot.io", "rentry.co", "rentry.org", "paste.ee", "hastebin.com",
        "hastebin.skyra.pw", "ghostbin.com", "ghostbin.co", "controlc.com", "dpaste.org",
        "dpaste.com", "paste.rs", "ix.io", "sprunge.us", "termbin.com", "clbin.com",
        "justpaste.it", "pastes.dev", "paste.mozilla.org", "privatebin.net", "paste.c-net.org",
        "pastie.org", "bpa.st", "codepad.org", "jsfiddle.net",
    }
)  # fmt: skip
FILE_DROP_HOSTS = frozenset(
    {
        "transfer.sh", "0x0.st", "file.io", "catbox.moe", "files.catbox.moe", "litter.catbox.moe",
        "temp.sh", "gofile.io", "anonfiles.com", "bashupload.com", "oshi.at", "filebin.net",
        "tmpfiles.org", "uguu.se", "pixeldrain.com", "mega.nz", "send.now", "dropmefiles.com",
    }
)  # fmt: skip
#: Reverse tunnels expose a machine behind NAT; the ClawHavoc MCP backdoor used bore.pub.
TUNNEL_SUFFIXES = (
    "bore.pub", "ngrok.io", "ngrok-free.app", "ngrok.app", "trycloudflare.com", "serveo.net",
    "localhost.run", "loca.lt", "pinggy.io", "localtunnel.me", "telebit.cloud",
)  # fmt: skip
SHORTENER_HOSTS = frozenset(
    {
        "bit.ly", "tinyurl.com", "is.gd", "cutt.ly", "rebrand.ly", "t.ly", "shorturl.at",
        "ow.ly", "rb.gy", "v.gd", "tiny.cc", "s.id", "goo.gl",
    }
)  # fmt: skip
#: Raw file hosting without a reviewed owner: flagged, but less than a paste site.
RAW_GIST_HOSTS = frozenset({"gist.githubusercontent.com"})
#: Attachments on chat CDNs are a common malware host.
CHAT_CDN_PREFIXES = ("cdn.discordapp.com/attachments/", "media.discordapp.net/attachments/")

#: Where packages are published and their sources hosted: a package installed from one
#: of these by URL (``pip install git+https://github.com/…``) is an ordinary install.
CODE_HOSTS = frozenset(
    {
        "github.com", "codeload.github.com", "objects.githubusercontent.com", "gitlab.com",
        "bitbucket.org", "codeberg.org", "pypi.org", "files.pythonhosted.org",
        "registry.npmjs.org", "download.pytorch.org", "huggingface.co",
    }
)  # fmt: skip

#: Installer scripts that vendors publish for ``curl … | sh``; still a remote
#: script, but a known one (rated medium rather than high).
KNOWN_INSTALLER_HOSTS = frozenset(
    {
        "sh.rustup.rs", "astral.sh", "bun.sh", "bun.com", "deno.land", "deno.com",
        "get.docker.com", "brew.sh", "get.pnpm.io", "install.python-poetry.org", "pyenv.run",
        "ollama.com", "claude.ai", "openclaw.ai", "tailscale.com", "fly.io", "get.helm.sh",
        "starship.rs", "sdk.cloud.google.com", "cli.github.com", "mise.run", "get.volta.sh",
        "raw.githubusercontent.com/homebrew/", "raw.githubusercontent.com/nvm-sh/",
        "raw.githubusercontent.com/ohmyzsh/", "npmjs.org", "nodejs.org", "pixi.sh",
        "cursor.com", "opencode.ai", "vercel.com", "supabase.com", "railway.app", "fnm.vercel.app",
        "console.cloud.google.com", "awscli.amazonaws.com", "aka.ms", "dot.net", "uv.run",
        "github.com/astral-sh/", "foundry.paradigm.xyz", "get.jenv.io", "sdkman.io", "get.sdkman.io",
    }
)  # fmt: skip
#: Hosts named in public campaign reports (landscape §4); only inert test strings here.
KNOWN_BAD_HOSTS = frozenset({"91.92.242.30"})

URL = patterns.compile(r"""\b(?:https?|ftp)://[^\s'"`<>()\[\]{}\\|]+""", re.I)
_HOST = patterns.compile(r"^(?:[^@/]*@)?(\[[0-9a-f:.]+\]|[^/:?#]+)", re.I)
#: A bare IPv4 address after a fetch command (``curl 203.0.113.7/x``).
BARE_IP = patterns.compile(r"(?<![\w.])(\d{1,3}(?:\.\d{1,3}){3})(?::\d+)?(?=[/\s'\"]|$)")

_IPV4_CHARS = "0123456789."
_LOCAL_NETS = tuple(
    ipaddress.ip_network(n)
    for n in (
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
        "172.16.0.0/12", "192.168.0.0/16", "224.0.0.0/3", "::1/128", "::/128", "fe80::/10",
        "fc00::/7", "ff00::/8",
    )
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class HostVerdict:
    """Why a URL's host is notable. ``kind`` is one of the constants below."""

    url: str
    host: str
    kind: str

    @property
    def untrusted(self) -> bool:
        return self.kind in UNTRUSTED_KINDS


RAW_IP = "raw IP address"
KNOWN_BAD = "host named in a malware campaign report"
PASTE = "paste site"
FILE_DROP = "anonymous file-drop site"
TUNNEL = "reverse tunnel"
SHORTENER = "URL shortener"
RAW_GIST = "raw gist"
CHAT_CDN = "chat attachment CDN"
PLAIN_HTTP = "plain http (no TLS)"
LOOKALIKE = "look-alike host"
KNOWN_INSTALLER = "known installer host"
OTHER = "other host"
UNTRUSTED_KINDS = frozenset(
    {
        RAW_IP,
        KNOWN_BAD,
        PASTE,
        FILE_DROP,
        TUNNEL,
        SHORTENER,
        RAW_GIST,
        CHAT_CDN,
        PLAIN_HTTP,
        LOOKALIKE,
    }
)


def host_of(url: str) -> str:
    rest = url.split("://", 1)[-1]
    match = _HOST.match(rest)
    return match.group(1).strip("[]").lower().rstrip(".") if match else ""


def is_public_ip(host: str) -> bool:
    """An IP literal outside loopback, private, link-local and multicast ranges.

    Documentation ranges (203.0.113.0/24 …) count as public: they stand in for
    real addresses in examples and in our own test fixtures.
    """
    # Most hosts are names: an IPv4 literal is digits and dots only, an IPv6 one has
    # colons. Anything else cannot parse, so the (costly) failed parse is skipped.
    if ":" not in host and host.strip(_IPV4_CHARS):
        return False
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        return False
    return not any(addr in net for net in _LOCAL_NETS if net.version == addr.version)


class _HostSet:
    """Host entries (``host`` or ``host/path/`` prefixes), asked whether a host is one
    of them or a subdomain of one: the host's dot-suffixes are looked up in a set
    instead of comparing every entry."""

    def __init__(self, entries: frozenset[str]) -> None:
        self.hosts = frozenset(e for e in entries if "/" not in e)
        self.prefixes = tuple(sorted(e for e in entries if "/" in e))

    def matches(self, host: str, path: str) -> bool:
        if host in self.hosts:
            return True
        dot = host.find(".")
        while dot != -1:
            if host[dot + 1 :] in self.hosts:
                return True
            dot = host.find(".", dot + 1)
        return bool(self.prefixes) and f"{host}{path}".startswith(self.prefixes)


_PASTE = _HostSet(PASTE_HOSTS)
_FILE_DROP = _HostSet(FILE_DROP_HOSTS)
_KNOWN_INSTALLER = _HostSet(KNOWN_INSTALLER_HOSTS)
_TUNNEL = _HostSet(frozenset(TUNNEL_SUFFIXES))


@functools.lru_cache(maxsize=4096)
def classify(url: str) -> HostVerdict:
    """What kind of host ``url`` points at (``OTHER`` when nothing is notable).
    Cached: the same URLs recur across the files of a scan."""
    host = host_of(url)
    rest = url.split("://", 1)[-1]
    path = rest[len(rest.split("/", 1)[0]) :].lower()
    kind = OTHER
    if not host.isascii() and reads_as_ascii(host) is not None:
        kind = LOOKALIKE
    elif host in KNOWN_BAD_HOSTS:
        kind = KNOWN_BAD
    elif is_public_ip(host):
        kind = RAW_IP
    elif _PASTE.matches(host, path):
        kind = PASTE
    elif _FILE_DROP.matches(host, path):
        kind = FILE_DROP
    elif _TUNNEL.matches(host, path):
        kind = TUNNEL
    elif host in SHORTENER_HOSTS:
        kind = SHORTENER
    elif host in RAW_GIST_HOSTS:
        kind = RAW_GIST
    elif any((host + path).startswith(p) for p in CHAT_CDN_PREFIXES):
        kind = CHAT_CDN
    elif _KNOWN_INSTALLER.matches(host, path):
        kind = KNOWN_INSTALLER if url.lower().startswith("https://") else PLAIN_HTTP
    elif url.lower().startswith(("http://", "ftp://")) and not _is_local_name(host):
        kind = PLAIN_HTTP
    return HostVerdict(url=url, host=host, kind=kind)


def reads_as_ascii(host: str) -> str | None:
    """The plain ASCII name a host imitates with look-alike letters (``gіthub.com``, its
    ``і`` Cyrillic, reads as ``github.com``), or None.

    Only a host whose every non-ASCII character has an ASCII look-alike counts: a name
    written in another script (``пример.рф``, ``例え.jp``) or with accents (``münchen.de``)
    holds letters no ASCII glyph imitates, and is that script's own name.
    """
    # Imported here: only a non-ASCII host needs the table.
    from skillbook.security.lookalike_table import LATIN

    out: list[str] = []
    for char in host:
        if char.isascii():
            out.append(char)
        elif char in LATIN:
            out.append(LATIN[char].lower())
        else:
            return None
    return "".join(out)


def _is_local_name(host: str) -> bool:
    if host in ("localhost", "") or host.endswith((".local", ".localhost", ".internal", ".lan")):
        return True
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return not is_public_ip(host)


def urls_in(text: str) -> list[str]:
    """Every URL in ``text``, trailing punctuation removed."""
    return [m.group(0).rstrip(".,;:!?*_~") for m in URL.finditer(text)]


def worst_host(text: str) -> HostVerdict | None:
    """The most suspicious URL host in ``text`` (or a bare IP), ``None`` if it has none."""
    best: HostVerdict | None = None
    for url in urls_in(text):
        verdict = classify(url)
        if best is None or _ORDER[verdict.kind] > _ORDER[best.kind]:
            best = verdict
    if best is None or not best.untrusted:
        for match in BARE_IP.finditer(text):
            ip = match.group(1)
            if is_public_ip(ip):
                kind = KNOWN_BAD if ip in KNOWN_BAD_HOSTS else RAW_IP
                return HostVerdict(url=match.group(0), host=ip, kind=kind)
    return best


_ORDER = {
    KNOWN_BAD: 10,
    RAW_IP: 9,
    PASTE: 8,
    FILE_DROP: 8,
    TUNNEL: 8,
    LOOKALIKE: 8,
    CHAT_CDN: 7,
    SHORTENER: 6,
    RAW_GIST: 5,
    PLAIN_HTTP: 4,
    OTHER: 2,
    KNOWN_INSTALLER: 1,
}
