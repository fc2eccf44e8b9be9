"""OpenClaw's own skill scanner (spec §8.3 step 4), rule for rule, so verdicts compare.

Input: the text of a JavaScript/TypeScript file. Output: :class:`Hit` values with
OpenClaw's rule ids, messages, lines and evidence. The matching follows OpenClaw
2026.4.12 exactly: line rules report their first matching line once per file
(``dangerous-exec`` only in a file that mentions ``child_process``); source rules
test the whole file and point at the first line that matches; ``warn`` becomes
``medium``. Which files it reads (extensions, dot-folders, limits) is in
:mod:`skillbook.security.walk`.

skillbook re-rates three of OpenClaw's criticals in its own verdict (the hit
carries ``demoted_from``): they flag capabilities that most legitimate scripts
have, while the malicious uses are caught by the precise rules.
"""

from __future__ import annotations

import re

from skillbook.base.js import js_trim
from skillbook.security import patterns
from skillbook.security.findings import RULESET_OPENCLAW, Severity
from skillbook.security.hit import Hit

#: OpenClaw reads these extensions only (lower-cased).
EXTENSIONS = frozenset({".js", ".ts", ".mjs", ".cjs", ".mts", ".cts", ".jsx", ".tsx"})
MAX_FILES = 500
MAX_FILE_BYTES = 1024 * 1024
EVIDENCE_MAX = 120
STANDARD_PORTS = frozenset({80, 443, 8080, 8443, 3000})

_C, _M = Severity.CRITICAL, Severity.MEDIUM
#: JavaScript's ``\s`` (Python's differs on U+FEFF and U+001C-U+001F); ``\b`` is ASCII there.
_S = "[\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"


def _js(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return patterns.compile(pattern.replace(r"\s", _S), flags | re.ASCII)


#: (id, severity, message, pattern, requires-context-in-the-whole-file)
_LINE_RULES = (
    ("dangerous-exec", _C, "Shell command execution detected (child_process)",
     _js(r"\b(exec|execSync|spawn|spawnSync|execFile|execFileSync)\s*\("),
     _js(r"child_process")),
    ("dynamic-code-execution", _C, "Dynamic code execution detected",
     _js(r"\beval\s*\(|new\s+Function\s*\("), None),
    ("crypto-mining", _C, "Possible crypto-mining reference detected",
     _js(r"stratum\+tcp|stratum\+ssl|coinhive|cryptonight|xmrig", re.I), None),
    ("suspicious-network", _M, "WebSocket connection to non-standard port",
     _js(r"new\s+WebSocket\s*\(\s*[\"']wss?://[^\"']*:(\d+)"), None),
)  # fmt: skip
_NET_CONTEXT = _js(r"\bfetch\b|\bpost\b|http\.request", re.I)
_SOURCE_RULES = (
    ("potential-exfiltration", _M,
     "File read combined with network send — possible data exfiltration",
     _js(r"readFileSync|readFile"), _NET_CONTEXT),
    ("obfuscated-code", _M, "Hex-encoded string sequence detected (possible obfuscation)",
     _js(r"(\\x[0-9a-fA-F]{2}){6,}"), None),
    ("obfuscated-code", _M,
     "Large base64 payload with decode call detected (possible obfuscation)",
     _js(r"(?:atob|Buffer\.from)\s*\(\s*[\"'][A-Za-z0-9+/=]{200,}[\"']"), None),
    ("env-harvesting", _C,
     "Environment variable access combined with network send — possible credential harvesting",
     _js(r"process\.env"), _NET_CONTEXT),
)  # fmt: skip

#: skillbook's own rating of OpenClaw's noisiest criticals, and why.
RERATED: dict[str, tuple[Severity, str]] = {
    "dangerous-exec": (
        Severity.MEDIUM,
        "skillbook re-rates: running programs is what many skills do; remote-fetch-exec, "
        "reverse-shell and encoded-exec catch the malicious forms",
    ),
    "dynamic-code-execution": (
        Severity.HIGH,
        "skillbook re-rates: eval of fixed text is not an attack; encoded-exec and "
        "remote-fetch-exec catch eval of decoded or fetched code",
    ),
    "env-harvesting": (
        Severity.MEDIUM,
        "skillbook re-rates: reading an API key from process.env and calling fetch is normal; "
        "env-exfil catches the whole environment being sent",
    ),
}


def _evidence(text: str) -> str:
    text = js_trim(text)
    return text if len(text) <= EVIDENCE_MAX else text[:EVIDENCE_MAX] + "…"


def scan_source(source: str, *, rerate: bool = True) -> list[Hit]:
    """OpenClaw's ``scanSource``: one hit per line rule and per source rule message."""
    hits: list[Hit] = []
    lines = source.split("\n")
    offsets = [0]
    for line in lines[:-1]:
        offsets.append(offsets[-1] + len(line) + 1)
    for rule, severity, message, pattern, context in _LINE_RULES:
        if context is not None and not context.search(source):
            continue
        for i, line in enumerate(lines):
            match = pattern.search(line)
            if not match:
                continue
            if rule == "suspicious-network" and int(match.group(1)) in STANDARD_PORTS:
                continue
            hits.append(_hit(rule, severity, message, offsets[i], line, rerate))
            break
    for rule, severity, message, pattern, context in _SOURCE_RULES:
        if not pattern.search(source):
            continue
        if context is not None and not context.search(source):
            continue
        for i, line in enumerate(lines):
            if pattern.search(line):
                hits.append(_hit(rule, severity, message, offsets[i], line, rerate))
                break
        else:  # the match spans lines: OpenClaw points at line 1 and the first 120 chars
            hits.append(_hit(rule, severity, message, 0, source[:EVIDENCE_MAX], rerate))
    return hits


def _hit(rule: str, severity: Severity, message: str, start: int, line: str, rerate: bool) -> Hit:
    demoted_from = None
    demotion = None
    if rerate and rule in RERATED:
        demoted_from = severity
        severity, demotion = RERATED[rule]
    return Hit(
        rule,
        severity,
        start,
        start + len(line),
        message,
        excerpt=_evidence(line),
        ruleset=RULESET_OPENCLAW,
        demoted_from=demoted_from,
        demotion=demotion,
    )
