"""Excerpts that are safe to print: secrets masked, invisible characters shown, length capped.

Input: a line of a scanned file. Output: the same line with API keys, tokens,
private keys and passwords in URLs replaced by ``****`` (keeping a short prefix so
a reader can tell which credential it was), cut to :data:`EXCERPT_MAX` characters.
"""

from __future__ import annotations

import re

from skillbook.security import patterns
from skillbook.security.rules_text import visible

#: Longest excerpt kept in a finding.
EXCERPT_MAX = 200
MASK = "****"

_TOKEN_PATTERNS = tuple(
    patterns.compile(p)
    for p in (
        r"\b(sk-(?:proj-|ant-(?:api\d+-)?|live-)?)[A-Za-z0-9_-]{16,}",  # OpenAI / Anthropic
        r"\b(gh[pousr]_)[A-Za-z0-9]{20,}",  # GitHub tokens
        r"\b(github_pat_)[A-Za-z0-9_]{20,}",
        r"\b(glpat-)[A-Za-z0-9_-]{16,}",  # GitLab
        r"\b(xox[abposr]-)[A-Za-z0-9-]{10,}",  # Slack
        r"\b(AKIA|ASIA)[A-Z0-9]{16}\b",  # AWS access key id
        r"\b(AIza)[A-Za-z0-9_-]{30,}",  # Google API key
        r"\b((?:sk|rk|pk)_(?:live|test)_)[A-Za-z0-9]{16,}",  # Stripe
        r"\b(npm_)[A-Za-z0-9]{30,}",
        r"\b(hf_)[A-Za-z0-9]{30,}",
        r"\b(eyJ)[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",  # JWT
        r"\b(\d{8,10}:)[A-Za-z0-9_-]{35}\b",  # Telegram bot token
        r"(discord(?:app)?\.com/api/webhooks/\d+/)[A-Za-z0-9_-]{20,}",
        r"(hooks\.slack\.com/services/)[A-Za-z0-9/]{20,}",
    )
)
_BEARER = patterns.compile(r"(?i)\b(bearer\s+|token\s+)([A-Za-z0-9._~+/-]{12,}=*)")
_URL_PASSWORD = patterns.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s:/@]+:)([^\s@/]+)(@)")
_ASSIGNMENT = patterns.compile(
    r"(?i)\b((?:api[_-]?key|apikey|secret|token|passw(?:or)?d|pwd|auth|access[_-]?key|"
    r"private[_-]?key|client[_-]?secret)[\w-]*[\"']?\s*[:=]\s*[\"']?)([^\s\"',;&]{6,})"
)
_PRIVATE_KEY = patterns.compile(
    r"-----BEGIN ([A-Z ]*PRIVATE KEY)-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)", re.S
)
_PLACEHOLDER = patterns.compile(
    r"^(?:\$\{?\w+\}?|<[^>]+>|\{\{?[^}]+\}?\}|x+|\*+|\.{3}|your[_-]\w+)$", re.I
)


def mask_secrets(text: str) -> str:
    """``text`` with credential-looking values replaced by ``****``."""
    text = _PRIVATE_KEY.sub(lambda m: f"-----BEGIN {m.group(1)}-----{MASK}", text)
    for pattern in _TOKEN_PATTERNS:
        text = pattern.sub(lambda m: m.group(1) + MASK, text)
    text = _URL_PASSWORD.sub(lambda m: m.group(1) + MASK + m.group(3), text)
    text = _BEARER.sub(lambda m: m.group(1) + MASK, text)
    return _ASSIGNMENT.sub(
        lambda m: m.group(0) if _PLACEHOLDER.match(m.group(2)) else m.group(1) + MASK, text
    )


def excerpt(text: str, *, column: int | None = None) -> str:
    """A printable, masked excerpt of ``text`` centred on ``column`` when the line is long.

    Secrets are masked before cutting, so a cut never leaves half a token unmasked.
    """
    text = mask_secrets(text.strip("\r\n"))
    if len(text) > EXCERPT_MAX:
        start = 0
        if column is not None and column > EXCERPT_MAX // 2:
            start = max(0, min(column - EXCERPT_MAX // 4, len(text) - EXCERPT_MAX))
        piece = text[start : start + EXCERPT_MAX]
        text = ("…" if start > 0 else "") + piece + ("…" if start + EXCERPT_MAX < len(text) else "")
    return visible(text.strip())
