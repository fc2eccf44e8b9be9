"""Rules for where payloads come from and how they dodge checks.

Input: a :class:`Document`. Output: :class:`Hit` values for ``raw-ip-url``,
``paste-site-url``, ``password-archive`` and ``gatekeeper-bypass`` — the
ingredients of the fake "prerequisites" of the ClawHavoc campaign (a paste-site
script fetching from a raw IP, a password-protected zip, "remove the quarantine").
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from skillbook.security import hosts, patterns
from skillbook.security.document import Document
from skillbook.security.findings import Severity
from skillbook.security.hit import Hit

_C, _H, _M, _L = Severity.CRITICAL, Severity.HIGH, Severity.MEDIUM, Severity.LOW

_FETCH_CMD = patterns.compile(r"\b(?:curl|wget|nc|ncat|scp|rsync|ftp|tftp|iwr|irm)\b[^\n]*", re.I)
_URL_WORDS = ("://",)
_FETCH_WORDS = (
    "curl",
    "wget",
    " nc ",
    "|nc ",
    "\nnc ",
    "\tnc ",
    ";nc ",
    "ncat",
    "scp",
    "rsync",
    "ftp",
    "iwr ",
    "irm ",
)


def untrusted_urls(doc: Document) -> Iterator[Hit]:
    text = doc.text
    if "://" in text:
        for m in doc.finditer(hosts.URL, _URL_WORDS, after=0):
            url = m.group(0).rstrip(".,;:!?*_~")
            verdict = hosts.classify(url)
            hit = _url_hit(verdict, m.start(), m.start() + len(url))
            if hit is not None:
                yield hit
    # Scheme-less addresses only count after a fetch command: ``curl 203.0.113.7/x``.
    for m in doc.finditer(_FETCH_CMD, _FETCH_WORDS, after=0):
        segment = m.group(0)
        for ip in hosts.BARE_IP.finditer(segment):
            before = segment[max(0, ip.start() - 3) : ip.start()]
            if "//" in before or not hosts.is_public_ip(ip.group(1)):
                continue
            kind = hosts.KNOWN_BAD if ip.group(1) in hosts.KNOWN_BAD_HOSTS else hosts.RAW_IP
            verdict = hosts.HostVerdict(ip.group(0), ip.group(1), kind)
            hit = _url_hit(verdict, m.start() + ip.start(), m.start() + ip.end())
            if hit is not None:
                yield hit


def _url_hit(verdict: hosts.HostVerdict, start: int, end: int) -> Hit | None:
    kind = verdict.kind
    if kind == hosts.KNOWN_BAD:
        return Hit("raw-ip-url", _C, start, end,
                   f"URL on {verdict.host}, a host named in a malware campaign report", floor=_H)  # fmt: skip
    if kind == hosts.RAW_IP:
        return Hit("raw-ip-url", _H, start, end, f"URL on the raw IP address {verdict.host}")
    if kind in (hosts.PASTE, hosts.FILE_DROP, hosts.CHAT_CDN):
        return Hit("paste-site-url", _H, start, end, f"URL on a {kind} ({verdict.host})")
    if kind == hosts.LOOKALIKE:
        return Hit("lookalike-host", _H, start, end,
                   f"URL on {verdict.host}, which imitates {hosts.reads_as_ascii(verdict.host)} "
                   "with look-alike letters")  # fmt: skip
    if kind in (hosts.TUNNEL, hosts.SHORTENER, hosts.RAW_GIST):
        return Hit("paste-site-url", _M, start, end, f"URL on a {kind} ({verdict.host})")
    return None


# --------------------------------------------------------------------------- password-archive

_ARCHIVE_CMD = patterns.compile(
    r"\bunzip\s+(?:-\S+\s+)*-P\s*\S+"
    r"|\b7za?\s+[xe]\b[^\n]*\s-p\S*"
    r"|\bunrar\s+[xe]\b[^\n]*\s-p\S*"
    r"|\bextractall\s*\([^\n]*\bpwd\s*="
    r"|\.setpassword\s*\("
    r"|\bExpand-7Zip\b[^\n]*-Password\b",
    re.I,
)
_ARCHIVE_PROSE = patterns.compile(
    r"(?:\b(?:zip|archive|rar|7z|7-zip)\b|\.(?:zip|rar|7z)\b|\b(?:extract|unzip|unpack|decompress)\w*)"
    r"[^\n]{0,60}?\b(?:pass(?:word|wd|code|phrase)?|pwd)\b(?:\s+is\s+|\s*[:=]\s*)[`\"'*]*[\w!@#$%^&.-]+"
    r"|\bpassword[- ]protected\s+(?:zip|archive|rar|7z|file)"
    r"|\bpassword\s*[:=]?\s*[`\"'*]*infected\b",
    re.I,
)
_ARCHIVE_WORDS = ("unzip", "7z", "unrar", "pwd", "setpassword", "password", "passwd", "passcode",
                  "passphrase", "pass:", "pass =", "pass=", "pass is", "expand-7zip")  # fmt: skip


def password_archives(doc: Document) -> Iterator[Hit]:
    if not doc.regions(_ARCHIVE_WORDS, after=0):
        return
    for m in doc.finditer(_ARCHIVE_CMD, _ARCHIVE_WORDS, after=0):
        yield Hit(
            "password-archive", _H, m.start(), m.end(), "Extracts a password-protected archive"
        )
    for m in doc.finditer(_ARCHIVE_PROSE, _ARCHIVE_WORDS, after=0):
        yield Hit("password-archive", Severity.CRITICAL, m.start(), m.end(),
                  "Tells the reader the password of an archive (hides its content from scanners)")  # fmt: skip


# --------------------------------------------------------------------------- gatekeeper-bypass

_BYPASS: tuple[tuple[re.Pattern[str], Severity, str], ...] = (
    (patterns.compile(r"\bxattr\s+(?:-\w+\s+)*-(?:d|rd|dr|c|cr|rc)\s+(?:-\w+\s+)*com\.apple\.quarantine", re.I),
     _H, "Removes macOS quarantine (skips Gatekeeper's check)"),
    (patterns.compile(r"\bxattr\s+-(?:c|cr|rc)\s+\S+", re.I), _H,
     "Clears all extended attributes, quarantine included"),
    (patterns.compile(r"\bspctl\s+--(?:master|global)-disable\b", re.I), _C, "Turns Gatekeeper off"),
    (patterns.compile(r"\bspctl\s+--add\b", re.I), _H, "Whitelists a program in Gatekeeper"),
    (patterns.compile(r"--no-quarantine\b"), _H, "Installs without macOS quarantine"),
    (patterns.compile(r"\bcsrutil\s+disable\b", re.I), _C, "Turns System Integrity Protection off"),
    (patterns.compile(r"\bSet-MpPreference\b[^\n]*-Disable\w*", re.I), _C, "Turns Microsoft Defender off"),
    (patterns.compile(r"\bAdd-MpPreference\b[^\n]*-Exclusion\w*", re.I), _C,
     "Adds a Microsoft Defender exclusion"),
    (patterns.compile(r"\bsetenforce\s+0\b"), _H, "Turns SELinux enforcement off"),
    (patterns.compile(r"\b(?:disable|turn\s+off|deactivate)\s+(?:your\s+|the\s+)?(?:antivirus|anti-virus|"
                r"windows\s+defender|defender|gatekeeper|xprotect|av\s+software)\b", re.I),
     _H, "Tells the reader to turn off malware protection"),
    (patterns.compile(r"\ballow\s+apps\s+(?:downloaded\s+)?from\s*:?\s*[\"'*]*anywhere", re.I), _H,
     "Tells the reader to allow apps from anywhere"),
)  # fmt: skip
_BYPASS_WORDS = ("xattr", "spctl", "quarantine", "csrutil", "mppreference", "setenforce",
                 "antivirus", "anti-virus", "defender", "gatekeeper", "xprotect", "anywhere",
                 "--no-quarantine")  # fmt: skip


def gatekeeper_bypass(doc: Document) -> Iterator[Hit]:
    if not doc.regions(_BYPASS_WORDS, after=0):
        return
    seen: set[int] = set()
    for regex, severity, message in _BYPASS:
        for m in doc.finditer(regex, _BYPASS_WORDS, after=0):
            line = doc.line_of(m.start())
            if line not in seen:
                seen.add(line)
                yield Hit("gatekeeper-bypass", severity, m.start(), m.end(), message)


#: Every keyword the rules of this module look for (for the keyword index).
KEYWORDS = (*_URL_WORDS, *_FETCH_WORDS, *_ARCHIVE_WORDS, *_BYPASS_WORDS)
#: Per family, the keywords one of which a file must hold for it to find anything: the
#: scanner's file-level gate (``"://" in text`` is the URL word's test).
TRIGGERS = {
    "untrusted_urls": (*_URL_WORDS, *_FETCH_WORDS),
    "password_archives": _ARCHIVE_WORDS,
    "gatekeeper_bypass": _BYPASS_WORDS,
}
