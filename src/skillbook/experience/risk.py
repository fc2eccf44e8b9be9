"""The risk marker: a run touched user data and nobody approved it.

Input: the tool calls of a session. Output: the :class:`RiskFinding` values of calls
that used one of the capabilities below *without an approval step* (the user was not
asked and said yes for that call; a command allowed by a policy or ``--yes`` was not
asked about, and a ``read`` is never asked about). A draft with findings shows a
warning and cannot be promoted unless the reviewer acknowledges it.

The capabilities (:data:`CAPABILITIES`), looked for in ``read`` paths and ``exec``
commands:

``credential-files``  SSH keys, ``~/.aws``, ``~/.config/gcloud``, ``~/.kube/config``,
                      ``~/.docker/config.json``, ``.netrc``, ``.pgpass``, ``.git-credentials``,
                      ``.npmrc``, ``.pypirc``, ``.env`` files, ``*.pem``/``*.key``/``*.p12``,
                      ``~/.gnupg``, keychains, ``/etc/shadow``, ``credentials*`` files
``personal-files``    ``~/Documents``, ``~/Desktop``, ``~/Downloads``, ``~/Pictures``,
                      ``~/Library/Messages``/``Mail``, browser profiles and cookies,
                      shell histories, contacts and calendars
``network-send``      uploads and writes over the network: ``curl -d/-F/-T/--data*/
                      --upload-file/-X POST|PUT|PATCH|DELETE``, ``wget --post-*``,
                      ``scp``/``rsync``/``sftp``/``ftp`` to a host, ``nc``/``ncat``/``socat``,
                      ``http POST|PUT`` (HTTPie)
``messaging``         ``mail``, ``sendmail``, ``mutt``, ``msmtp``, ``osascript`` with Messages
                      or Mail, Slack/Discord/Telegram/Twilio APIs and webhooks
``payment``           ``stripe``, PayPal, Braintree, Square, Adyen APIs or CLIs, and
                      commands that name a charge, payout, refund or invoice
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from skillbook.experience._markdown import code_span
from skillbook.experience.record import ToolEntry

__all__ = ["CAPABILITIES", "RiskFinding", "capabilities_of", "find_risks"]

#: Capability → what it means, as the draft's warning says it.
CAPABILITIES: Final[Mapping[str, str]] = {
    "credential-files": "read credential files",
    "personal-files": "read personal files",
    "network-send": "sent data over the network",
    "messaging": "sent messages",
    "payment": "ran payment commands",
}

_CREDENTIALS: Final = re.compile(
    r"(?:^|[\s/'\"=~])(?:"
    r"\.ssh/(?:id_[\w-]+|[\w.-]*key[\w.-]*|authorized_keys|config)|id_(?:rsa|dsa|ecdsa|ed25519)\b"
    r"|\.aws/(?:credentials|config)|\.config/gcloud|\.kube/config|\.docker/config\.json"
    r"|\.netrc\b|\.pgpass\b|\.git-credentials\b|\.npmrc\b|\.pypirc\b|\.gnupg\b"
    r"|\.env(?:\.[\w-]+)?(?![\w/.-])|[\w.-]+\.(?:pem|key|p12|pfx|keystore|jks)\b"
    r"|Keychains?/|/etc/(?:shadow|gshadow|sudoers)\b|credentials(?:\.[\w]+)?\b|secrets?\.(?:json|ya?ml|toml)\b"
    r")",
    re.IGNORECASE,
)
_PERSONAL: Final = re.compile(
    r"(?:~|/home/[^/\s]+|/Users/[^/\s]+)/(?:Documents|Desktop|Downloads|Pictures|Movies|Music"
    r"|Library/(?:Messages|Mail|Calendars|Application Support/AddressBook|Cookies|Safari))"
    r"|\.mozilla/firefox|google-chrome/|Google/Chrome/|BraveSoftware/|/Cookies\b"
    r"|\.(?:bash|zsh|python|psql|mysql|node_repl)_history\b|\.local/share/(?:evolution|contacts)",
)
_NETWORK: Final = re.compile(
    r"\bcurl\b[^|;&]*?(?:\s(?:-d|-F|-T|--data(?:-\w+)?|--form|--upload-file|--json)\b"
    r"|\s-X\s*(?:POST|PUT|PATCH|DELETE)\b|\s--request\s+(?:POST|PUT|PATCH|DELETE)\b)"
    r"|\bwget\b[^|;&]*--post-(?:data|file)\b"
    r"|\b(?:scp|rsync|sftp)\b[^|;&]*\s[\w.-]+@?[\w.-]*:[^\s]*"
    r"|\b(?:nc|ncat|netcat|socat|ftp)\s"
    r"|\bhttps?\s+(?:POST|PUT|PATCH|DELETE)\b",
)
_MESSAGING: Final = re.compile(
    r"(?:^|[\s;|&(])(?:mail|mailx|sendmail|mutt|msmtp|ssmtp)\s"
    r"|\bosascript\b[^|;&]*(?:Messages|Mail)\b"
    r"|hooks\.slack\.com|slack\.com/api/chat\.|discord(?:app)?\.com/api/webhooks"
    r"|api\.telegram\.org/bot|api\.twilio\.com|graph\.facebook\.com/[^\s]*/messages",
    re.IGNORECASE,
)
_PAYMENT: Final = re.compile(
    r"(?:^|[\s;|&(])stripe\s|api\.stripe\.com|api(?:-m)?\.(?:sandbox\.)?paypal\.com"
    r"|braintreegateway\.com|connect\.squareup\.com|adyen\.com"
    r"|\b(?:charges?|payouts?|refunds?|invoices?|payment_intents)\b[^\s]*\s*(?:create|pay)\b",
    re.IGNORECASE,
)
_RULES: Final = (
    ("credential-files", _CREDENTIALS),
    ("personal-files", _PERSONAL),
    ("network-send", _NETWORK),
    ("messaging", _MESSAGING),
    ("payment", _PAYMENT),
)
_READ_ONLY: Final = frozenset({"credential-files", "personal-files"})


@dataclass(frozen=True, slots=True)
class RiskFinding:
    """One call that used a capability with no approval step."""

    capability: str
    tool: str
    evidence: str
    call_id: str

    def to_json(self) -> dict[str, Any]:
        return {
            "capability": self.capability,
            "tool": self.tool,
            "evidence": self.evidence,
            "call": self.call_id,
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> RiskFinding:
        return cls(
            str(value.get("capability", "")),
            str(value.get("tool", "")),
            str(value.get("evidence", "")),
            str(value.get("call", "")),
        )

    def describe(self) -> str:
        what = CAPABILITIES.get(self.capability, self.capability)
        return f"{what} ({self.capability}): {code_span(self.evidence)}"


def capabilities_of(tool: str, arguments: Mapping[str, Any]) -> list[str]:
    """The capabilities one call uses (a ``read`` can only read files)."""
    if tool == "read" and isinstance(arguments.get("path"), str):
        text = " " + arguments["path"]
        return [name for name, rule in _RULES if name in _READ_ONLY and rule.search(text)]
    text = " ".join(str(v) for v in arguments.values() if isinstance(v, str))
    return [name for name, rule in _RULES if rule.search(" " + text)]


def find_risks(tools: Iterable[ToolEntry]) -> tuple[RiskFinding, ...]:
    """Risky calls that ran without the user saying yes to them."""
    found: list[RiskFinding] = []
    for entry in tools:
        if entry.declined or entry.approved is True:
            continue
        evidence = entry.path if entry.name == "read" else entry.command
        for capability in capabilities_of(entry.name, entry.arguments):
            found.append(RiskFinding(capability, entry.name, evidence or "", entry.call_id))
    return tuple(found)
