"""WHATWG URL serialisation for http(s) URLs: what ``new URL(v).toString()`` gives.

Input: a URL string without white space. Output: the normalised string (scheme and
host lower-cased, default port and dot segments removed, a bare host given its
``/``, unsafe characters percent-encoded), or None when the URL is not a valid
http/https URL. OpenClaw stores install-spec download URLs this way (spec §2.6).
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import unquote

_C0 = "".join(map(chr, range(0x20)))
_FRAGMENT_SET = frozenset(_C0 + ' "<>`')
_QUERY_SET = frozenset(_C0 + " \"#<>'")
_PATH_SET = frozenset(_C0 + ' "#<>?`{}')
_USERINFO_SET = _PATH_SET | frozenset("/:;=@[\\]^|")
_FORBIDDEN_HOST = frozenset(_C0 + " #%/:<>?@[\\]^|\x7f")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+\-.]*):")
_DEFAULT_PORT = {"http": "80", "https": "443"}


def _pct(text: str, encode_set: frozenset[str]) -> str:
    if text.isascii() and not any(ch in encode_set for ch in text):
        return text
    out = []
    for ch in text:
        if ch in encode_set or ord(ch) > 0x7E:
            out.append("".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass")))
        else:
            out.append(ch)
    return "".join(out)


def normalize_http_url(value: str) -> str | None:
    """``new URL(value).toString()`` for http/https URLs; None when not one or invalid."""
    value = value.strip(_C0 + " ").replace("\t", "").replace("\n", "").replace("\r", "")
    match = _SCHEME.match(value)
    if match is None or match.group(1).lower() not in _DEFAULT_PORT:
        return None
    scheme = match.group(1).lower()
    rest = value[match.end() :].lstrip("/\\")
    fragment = query = None
    if "#" in rest:
        rest, fragment = rest.split("#", 1)
    if "?" in rest:
        rest, query = rest.split("?", 1)
    cut = min((i for i in (rest.find("/"), rest.find("\\")) if i >= 0), default=len(rest))
    userinfo, authority = _userinfo(rest[:cut])
    host_port = _host_port(authority, scheme)
    if host_port is None:
        return None
    out = f"{scheme}://{userinfo}{host_port}{_serialize_path(rest[cut:])}"
    if query is not None:
        out += "?" + _pct(query, _QUERY_SET)
    if fragment is not None:
        out += "#" + _pct(fragment, _FRAGMENT_SET)
    return out


def _userinfo(authority: str) -> tuple[str, str]:
    """``(user[:password]@ percent-encoded, or "", the authority after it)``."""
    if "@" not in authority:
        return "", authority
    user_raw, authority = authority.rsplit("@", 1)
    user, _, password = user_raw.partition(":")
    user, password = _pct(user, _USERINFO_SET), _pct(password, _USERINFO_SET)
    if password:
        return f"{user}:{password}@", authority
    return (f"{user}@" if user else ""), authority


def _host_port(authority: str, scheme: str) -> str | None:
    """The serialised ``host[:port]`` (a default port dropped), None when invalid."""
    if authority.startswith("["):
        close = authority.find("]")
        if close == -1:
            return None
        host_raw, port = authority[: close + 1], authority[close + 1 :]
        if port and not port.startswith(":"):
            return None
        port = port[1:]
    else:
        host_raw, _, port = authority.partition(":")
    host = _parse_host(host_raw)
    if host is None or (port and not port.isdigit()) or (port and not port.isascii()):
        return None
    if port:
        if int(port) > 65535:
            return None
        port = "" if str(int(port)) == _DEFAULT_PORT[scheme] else str(int(port))
    return f"{host}:{port}" if port else host


def _serialize_path(path: str) -> str:
    if path[:1] in ("/", "\\"):
        path = path[1:]
    segments = re.split(r"[/\\]", path)
    out: list[str] = []
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        lowered = segment.lower()
        if lowered in ("..", ".%2e", "%2e.", "%2e%2e"):
            if out:
                out.pop()
            if last:
                out.append("")
        elif lowered in (".", "%2e"):
            if last:
                out.append("")
        else:
            out.append(_pct(segment, _PATH_SET))
    return "/" + "/".join(out)


def _parse_host(raw: str) -> str | None:
    if not raw:
        return None
    if raw.startswith("["):
        if not raw.endswith("]"):
            return None
        try:
            return "[" + ipaddress.IPv6Address(raw[1:-1]).compressed + "]"
        except ValueError:
            return None
    domain = unquote(raw, errors="strict") if "%" in raw else raw
    try:
        # IDNA 2003 (the stdlib codec) differs from WHATWG's UTS #46 only for the
        # deviation characters (ß, ς, ZWJ, ZWNJ), which it maps instead of keeping.
        if not domain.isascii():
            domain = domain.encode("idna").decode("ascii")
        domain = domain.lower()
        for label in domain.split("."):
            if label.startswith("xn--"):
                label[4:].encode("ascii").decode("punycode")
    except UnicodeError:
        return None
    if not domain or any(ch in _FORBIDDEN_HOST for ch in domain):
        return None
    parts = domain.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    last = parts[-1]
    if (last.isdigit() and last.isascii()) or re.fullmatch(r"0x[0-9a-f]*", last):
        return _ipv4(parts)  # a host ending in a number must be an IPv4 address
    return domain


def _ipv4(parts: list[str]) -> str | None:
    """WHATWG's IPv4 parser (``0x7f.1`` → ``127.0.0.1``); None when invalid."""
    numbers: list[int] = []
    for part in parts:
        if not part or len(parts) > 4:
            return None
        try:
            if part.startswith("0x"):
                numbers.append(int(part[2:] or "0", 16))
            elif len(part) > 1 and part.startswith("0"):
                numbers.append(int(part[1:], 8))
            else:
                numbers.append(int(part, 10))
        except ValueError:
            return None
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        return None
    address = numbers[-1] + sum(n * 256 ** (3 - i) for i, n in enumerate(numbers[:-1]))
    return ".".join(str((address >> s) & 255) for s in (24, 16, 8, 0))
