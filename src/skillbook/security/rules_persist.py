"""Rules for a skill that installs itself to run again: cron, shell rc files,
launchd, systemd user units, Windows Run keys, ``authorized_keys``.

Input: a :class:`Document`. Output: ``persistence`` hits. Plain PATH or alias
lines appended to a shell rc file are what installers legitimately do, so they
are reported low; an autostart entry that fetches or decodes code is high, and
an SSH key planted in ``authorized_keys`` is critical.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from skillbook.security import patterns
from skillbook.security.document import CODE, Document
from skillbook.security.findings import Severity
from skillbook.security.hit import Hit

_C, _H, _M, _L = Severity.CRITICAL, Severity.HIGH, Severity.MEDIUM, Severity.LOW

_RC = r"\.(?:bashrc|bash_profile|bash_login|zshrc|zprofile|zshenv|zlogin|profile|config/fish/config\.fish)\b"
_HOME = r"(?:~|\$HOME|\$\{HOME\}|/home/[\w.-]+|/Users/[\w.-]+|/root)"
_RC_WRITE = patterns.compile(rf"(?:>>?\s*|\btee\s+(?:-a\s+)?)[\"']?{_HOME}/{_RC}", re.I)
_BENIGN_RC = patterns.compile(
    r"^\s*(?:echo|printf)\s+[\"']?\s*(?:export\s+\w+=|alias\s|eval\s+\"?\$\(|source\s|\.\s|"
    r"fpath=|path\+=|PATH=|set\s+-gx\s|fish_add_path\b|complete\s)",
    re.I,
)
_CRON = patterns.compile(
    r"\|\s*crontab\s+-(?=\s|$|\))|\bcrontab\s+(?:-\s+)?<<|\bcrontab\s+(?!-[lr]\b)[\"']?[\w./~$-]+\.(?:txt|cron|tab)\b"
    r"|/etc/cron\.(?:d|daily|hourly|weekly|monthly)/|/var/spool/cron\b|^\s*@reboot\s",
    re.I | re.M,
)
_LAUNCHD = patterns.compile(
    r"Library/Launch(?:Agents|Daemons)/|\blaunchctl\s+(?:load|bootstrap|submit|enable)\b", re.I
)
_SYSTEMD = patterns.compile(
    r"\.config/systemd/user/|/etc/systemd/system/|\bsystemctl\s+--user\s+enable\b", re.I
)
_WINDOWS = patterns.compile(
    r"\\CurrentVersion\\Run(?:Once)?\b|\bschtasks(?:\.exe)?\s+/create\b"
    r"|\\Start Menu\\Programs\\Startup\b|\bNew-ScheduledTask\w*\b|\bRegister-ScheduledTask\b",
    re.I,
)
_AUTH_KEYS = patterns.compile(
    r"(?:>>?\s*|\btee\s+(?:-a\s+)?|open\s*\(\s*)[\"']?[^\s\"'|;]*authorized_keys\b", re.I
)
_AGENT_CONFIG = patterns.compile(
    r"(?:>>?\s*|\btee\s+(?:-a\s+)?)[\"']?[^\s\"'|;]*(?:AGENTS|CLAUDE|SOUL|MEMORY|HEARTBEAT)\.md\b"
    r"|(?:>>?\s*|\btee\s+(?:-a\s+)?)[\"']?[^\s\"'|;]*(?:openclaw\.json|\.claude/settings(?:\.local)?\.json)",
)
_KEYS_WORDS = ("authorized_keys",)
_RC_WORDS = ("crontab <<", "crontab - <<", "bashrc", "bash_profile", "bash_login", "zshrc", "zprofile", "zshenv", "zlogin",
             ".profile", "fish/config.fish")  # fmt: skip
_PUBKEY = patterns.compile(r"\bssh-(?:rsa|ed25519|dss)\s+AAAA|\becdsa-sha2-\S+\s+AAAA")
_PAYLOAD = patterns.compile(
    r"\b(?:curl|wget|nc|ncat|base64|python[0-9.]*\s+-c|bash\s+-c|sh\s+-c|iwr|irm)\b|/tmp/|/dev/shm/"
    r"|https?://",
    re.I,
)
_WORDS = ("bashrc", "bash_profile", "bash_login", "zshrc", "zprofile", "zshenv", "zlogin",
          ".profile", "fish/config.fish", "crontab", "/etc/cron.", "spool/cron", "@reboot",
          "launchagents", "launchdaemons", "launchctl", "systemd/", "systemctl --user",
          "currentversion", "schtasks", "start menu", "scheduledtask", "authorized_keys",
          "agents.md", "claude.md", "soul.md", "memory.md", "heartbeat.md", "openclaw.json",
          ".claude/settings")  # fmt: skip


#: In the body of an entry (a unit, a plist, a here-document), only a download, a
#: decode or a temporary path counts: units run ``bash -c`` and link their docs.
_FETCHED = patterns.compile(r"\b(?:curl|wget|ncat|base64|iwr|irm)\b|/tmp/|/dev/shm/", re.I)
_HEREDOC = patterns.compile(r"<<-?\s*([\"']?)(?P<tag>\w+)\1")
#: How far a written entry may reach: a here-document's body, or the few lines of one
#: statement in code (a plist dict, a unit written with ``write_text``).
_STATEMENT_LINES = 4


def _entry_text(doc: Document, line: int) -> str:
    """The body of the entry written on ``line``, beyond the line itself: a
    here-document's lines up to its tag; in code, the lines around it (an entry is
    usually a literal spread over a few lines); otherwise nothing."""
    m = _HEREDOC.search(doc.line_text(line))
    if m:
        _, body_start = doc.lines_span(line, line)
        tag = re.compile(rf"^\s*{re.escape(m.group('tag'))}\s*$", re.M)
        closing = tag.search(doc.text, body_start)
        return doc.text[body_start : closing.start() if closing else body_start + 4000]
    if doc.kind == CODE:
        start, end = doc.lines_span(max(1, line - _STATEMENT_LINES), line + _STATEMENT_LINES)
        return doc.text[start:end]
    return ""


def persistence(doc: Document) -> Iterator[Hit]:
    if not doc.regions(_WORDS, after=0):
        return
    seen: set[int] = set()

    def emit(
        m: re.Match[str], severity: Severity, message: str, *, escalate: bool = True
    ) -> Hit | None:
        line = doc.line_of(m.start())
        if line in seen:
            return None
        seen.add(line)
        if (
            escalate
            and severity.rank < _H.rank
            and (_PAYLOAD.search(doc.line_text(line)) or _FETCHED.search(_entry_text(doc, line)))
        ):
            severity, message = _H, message + " and the entry fetches or runs a payload"
        return Hit("persistence", severity, m.start(), m.end(), message)

    for m in doc.finditer(_AUTH_KEYS, _KEYS_WORDS, after=0):
        planted = _PUBKEY.search(doc.line_text(doc.line_of(m.start())))
        severity = _C if planted else _H
        what = "Plants an SSH key in authorized_keys" if planted else "Writes to authorized_keys"
        h = emit(m, severity, what + " (remote login to this machine)", escalate=False)
        if h:
            yield h
    for m in doc.finditer(_RC_WRITE, _RC_WORDS, after=0):
        line_text = doc.line_text(doc.line_of(m.start()))
        benign = _BENIGN_RC.match(line_text) and not _PAYLOAD.search(line_text)
        severity = _L if benign else _M
        h = emit(m, severity, "Appends to a shell start-up file")
        if h:
            yield h
    for regex, message in (
        (_CRON, "Installs a cron job"),
        (_LAUNCHD, "Installs a launchd agent or daemon"),
        (_SYSTEMD, "Installs a systemd unit"),
        (_WINDOWS, "Installs a Windows autostart entry (Run key, scheduled task, Startup folder)"),
        (_AGENT_CONFIG, "Writes to the agent's own instructions or config"),
    ):
        for m in doc.finditer(regex, _WORDS, after=0):
            h = emit(m, _M, message)
            if h:
                yield h


#: Every keyword the rules of this module look for (for the keyword index).
KEYWORDS = (*_WORDS, *_KEYS_WORDS, *_RC_WORDS)
#: The keywords one of which a file must hold for the family to find anything.
TRIGGERS = {"persistence": _WORDS}
