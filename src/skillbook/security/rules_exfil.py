"""Rules for secrets leaving the machine: credential files, the environment, beacons.

Input: a :class:`Document`. Output: :class:`Hit` values for ``credential-exfil``
(a credential store read where a network send is in reach: the whole script, or
the same fenced block of a Markdown file), ``credential-access`` (the read alone),
``env-exfil`` (the whole environment serialised or piped to the network) and
``markdown-exfil`` (image URLs that carry data out in their query string).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from skillbook.security import envflow, patterns
from skillbook.security.document import CODE, MARKDOWN, Document
from skillbook.security.findings import Severity
from skillbook.security.hit import Hit

_C, _H, _L = Severity.CRITICAL, Severity.HIGH, Severity.LOW

#: (what, pattern) — the stores that stealers such as AMOS read.
_CREDENTIALS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (what, patterns.compile(pattern, re.I))
    for what, pattern in (
        ("SSH private keys", r"\.ssh(?:/id_(?:[\w-]+(?![\w.-]*\.pub\b)|\*)|/?\*|/?(?=[\s\"')]|$))"),
        ("cloud credentials", r"\.aws/credentials|\.aws[\"']?\s*[,)/]\s*[\"']?credentials"
                              r"|application_default_credentials\.json|\.config/gcloud\b|\.azure/"
                              r"|\.kube/config\b|\.docker/config\.json"),
        ("token files", r"(?<![\w-])\.(?:netrc|npmrc|pypirc|git-credentials)\b|\.password-store\b"
                        r"|\.gnupg\b"),
        ("browser profiles", r"[/\\\"']Login Data|[/\\\"']Web Data\b|[/\\\"']Local State\b|logins\.json|key[34]\.db"
                             r"|cookies\.sqlite|signons\.sqlite|Google[/\\]+Chrome|BraveSoftware"
                             r"|Microsoft[/\\]+Edge|\.mozilla/firefox|Mozilla[/\\]+Firefox"
                             r"|\.config/(?:google-chrome|chromium)\b"),
        ("the keychain", r"\bsecurity\s+(?:find-generic-password|find-internet-password|dump-keychain)"
                         r"|login\.keychain|Library/Keychains"),
        ("crypto wallets", r"wallet\.dat|\.electrum\b|exodus\.wallet|[/\\]Exodus[/\\]|\.bitcoin\b"
                           r"|\.ethereum/keystore|solana/id\.json|nkbihfbeogaeaoehlefnkodbefgpgknn"
                           r"|Local Extension Settings|Ledger Live|atomic/Local Storage"),
        ("Telegram sessions", r"\btdata\b|Telegram Desktop"),
        ("system password hashes", r"/etc/shadow\b"),
        ("agent credentials", r"\.openclaw/(?:openclaw\.json|credentials|agents/)|auth-profiles\.json"),
    )
)  # fmt: skip
#: A project's .env file: common in legitimate code, so only a send on the same line counts.
_DOTENV = patterns.compile(r"(?:^|[\s/\\\"'=@])\.env(?![\w.-])")
_CRED_WORDS = (".ssh", ".aws", "application_default_credentials", ".config/gcloud", ".azure/",
               ".kube/config", ".docker/config", ".netrc", ".npmrc", ".pypirc", ".git-credentials",
               ".password-store", ".gnupg", "login data", "web data", "local state", "logins.json",
               "key3.db", "key4.db", "cookies.sqlite", "signons.sqlite", "chrome", "bravesoftware",
               "microsoft", "firefox", "chromium", "find-generic-password", "find-internet-password",
               "dump-keychain", "login.keychain", "library/keychains", "wallet.dat", ".electrum",
               "exodus", ".bitcoin", ".ethereum/keystore", "solana/id.json", "nkbihfbeogaeaoehlefnkodbefgpgknn",
               "local extension settings", "ledger live", "atomic/local storage", "tdata",
               "telegram desktop", "/etc/shadow", ".openclaw/", "auth-profiles.json")  # fmt: skip

#: Network sends, each with the lower-case keywords that must be on its line, and whether
#: it is *raw*: a socket (netcat, bash's ``/dev/tcp``) or a drop box for stolen data (chat
#: webhooks, request catchers), through which no service's own API is called.
_NET: tuple[tuple[tuple[str, ...], re.Pattern[str], bool], ...] = tuple(
    (words, patterns.compile(pattern, re.I), raw)
    for words, pattern, raw in (
        (("curl",), r"\bcurl\b[^\n]*?(?:\s-d\b|\s-d\S|\s--data(?:-binary|-raw|-urlencode)?\b|\s-F\b"
                    r"|\s--form\b|\s-T\b|\s--upload-file\b|\s-X\s*(?:POST|PUT)\b"
                    r"|\s--request\s+(?:POST|PUT)\b)", False),
        (("wget",), r"\bwget\b[^\n]*--post-(?:data|file)", False),
        ((" nc ", "|nc ", "\nnc ", "\tnc ", ";nc ", "ncat", "netcat"), r"\bn(?:c|cat|etcat)\s+(?:-\w+\s+)*[\w.-]+\s+\d{2,5}\b", True),
        (("/dev/tcp",), r"/dev/tcp/", True),
        # The other raw sockets of the shell: TLS through openssl, socat, telnet.
        (("s_client",), r"\bopenssl\s+s_client\b[^\n]*\s-connect\b", True),
        (("socat",), r"\bsocat\b[^\n]*\b(?:tcp|udp|openssl|ssl)[46]?(?:-connect)?:[\w.-]+:\d", True),
        (("telnet",), r"\btelnet\s+[\w.-]+\s+\d{2,5}\b", True),
        (("scp", "rsync"), r"\bscp\b[^\n]*\s[\w.-]+@?[\w.-]+:|\brsync\b[^\n]*\s[\w.-]+@[\w.-]+:", False),
        (("sendmail", "mail -s", "mailx"), r"\bsendmail\b|\bmailx?\s+-s\b", False),
        (("telegram", "discord", "slack", "webhook", "requestbin", "pipedream", "interact.sh",
          "oast.", "burpcollaborator"),
         r"api\.telegram\.org/bot|discord(?:app)?\.com/api/webhooks|hooks\.slack\.com/services"
         r"|webhook\.site|requestbin|pipedream\.net|\binteract\.sh|\boast\.\w+|burpcollaborator", True),
        ((".post", ".put", ".patch"), r"\.(?:post|put|patch)\s*\(", False),
        (("urlopen", "request("), r"\b(?:urlopen|Request)\s*\([^\n]*\bdata\s*=", False),
        (("http.client", "socket", "sendall", "smtplib", "ftplib"),
         r"\bhttp\.client\b|\bsocket\.(?:socket|create_connection)\b|\.sendall\s*\(|\bsmtplib\b"
         r"|\bftplib\b", False),
        (("fetch", "'post'", '"post"', "'put'", '"put"'), r"\bfetch\s*\([^\n]*(?:method\s*:\s*[\"']?(?:POST|PUT)|body\s*:)"
                              r"|method\s*:\s*[\"'](?:POST|PUT)[\"']", False),
        (("axios", ".request", "xmlhttprequest", "sendbeacon"),
         r"\baxios\.(?:post|put)\b|\bhttps?\.request\s*\(|\bXMLHttpRequest\b|\bsendBeacon\s*\(", False),
        (("invoke-", "upload"), r"Invoke-(?:WebRequest|RestMethod)\b[^\n]*-Method\s+(?:Post|Put)"
                                r"|\.Upload(?:File|String|Data)\s*\(", False),
    )
)  # fmt: skip


def sends(doc: Document, start: int = 0, end: int | None = None) -> bool:
    """Whether ``doc`` sends data over the network between ``start`` and ``end``."""
    return any(doc.search(regex, words, start, end) is not None for words, regex, _ in _NET)


def raw_sends(doc: Document, start: int = 0, end: int | None = None) -> bool:
    """Whether one of the sends between ``start`` and ``end`` is a raw socket or a drop box."""
    return any(
        doc.search(regex, words, start, end) is not None for words, regex, raw in _NET if raw
    )


_API_CREDENTIALS = frozenset({"cloud credentials", "token files", "agent credentials"})
_DOTENV_WORDS = (".env",)
_COMMENT_LINE = patterns.compile(r"^\s*(?:#|//|\*|/\*|--|REM\b|::)")


def send_scope(doc: Document, line: int) -> tuple[int, int]:
    """The text a network send must share with a credential read: the whole script, or the
    same fenced block (else the line and its neighbours) of a Markdown file."""
    if doc.kind != MARKDOWN:
        return 0, len(doc.text)
    fence = doc.fence_at(line)
    first, last = (fence.start, fence.end) if fence else (line - 1, line + 1)
    return doc.lines_span(first, last)


def credentials(doc: Document) -> Iterator[Hit]:
    if not doc.regions(_CRED_WORDS, after=0):
        return
    accessed: set[str] = set()
    sent_lines: set[int] = set()
    for what, regex in _CREDENTIALS:
        for m in doc.finditer(regex, _CRED_WORDS, after=0):
            line = doc.line_of(m.start())
            line_text = doc.line_text(line)
            if doc.kind == CODE and _COMMENT_LINE.match(line_text):
                continue
            start, end = send_scope(doc, line)
            if line not in sent_lines and sends(doc, start, end):
                sent_lines.add(line)
                # API tokens are read to call the API they belong to; keys, browser data,
                # keychains and wallets have no business near a network call, and no API
                # is called through netcat or a webhook.
                raw = what in _API_CREDENTIALS and raw_sends(doc, start, end)
                severity = _H if what in _API_CREDENTIALS and not raw else _C
                yield Hit("credential-exfil", severity, m.start(), m.end(),
                          f"Reads {what} and sends data over the network")  # fmt: skip
            elif what not in accessed and line not in sent_lines:
                accessed.add(what)
                yield Hit("credential-access", _L, m.start(), m.end(), f"Reads {what}")
    if ".env" in doc.lower:
        for m in doc.finditer(_DOTENV, _DOTENV_WORDS, after=0):
            line = doc.line_of(m.start())
            if line not in sent_lines and sends(doc, *doc.lines_span(line, line)):
                sent_lines.add(line)
                yield Hit("credential-exfil", _C, m.start(), m.end(),
                          "Sends the project's .env file over the network")  # fmt: skip


# --------------------------------------------------------------------------- env-exfil

_SENDERS = r"(?:curl|wget|nc|ncat|netcat|socat|telnet|openssl\s+s_client)\b"
_ENV_PIPE = patterns.compile(
    rf"(?:^|[;&|(`]\s*|\$\(\s*)(?:env|printenv|set|export\s+-p|declare\s+-x)\s*"
    rf"(?:\|(?!\|)[^\n|]*)*?\|(?!\|)\s*(?:sudo\s+)?{_SENDERS}",
    re.I | re.M,
)
_ENV_SUBST = patterns.compile(
    r"\b(?:curl|wget)\b[^\n]*?\$\(\s*(?:env|printenv)\s*(?:\|[^\n)]*)?\)", re.I
)
_ENV_TO_FILE = patterns.compile(r"(?:^|[;&(]\s*)(?:env|printenv)\s*>>?\s*(?P<f>[^\s;&|]+)", re.M)
_PY_ENV_SEND = patterns.compile(
    r"\.(?:post|put|patch|urlopen|request)\s*\([^\n]*\b(?:data|json|params|files|body)\s*=\s*"
    r"(?:dict\(\s*|\{\*\*\s*)?os\.environ\b(?!\s*[\[.])"
)
_PY_ENV_SERIAL = patterns.compile(
    r"\b(?:json\.dumps|str|repr|base64\.b64encode|pickle\.dumps|yaml\.(?:safe_)?dump|urlencode)"
    r"\s*\(\s*(?:dict\(\s*)?os\.environ\s*\)"
)
_JS_ENV = patterns.compile(r"JSON\.stringify\s*\(\s*process\.env\s*\)|\bbody\s*:\s*process\.env\b")
_PS_ENV = patterns.compile(
    r"(?:Get-ChildItem|gci|ls|dir)\s+env:(?![\w$])|\[Environment\]::GetEnvironmentVariables\(\)",
    re.I,
)
_ENV_WORDS = ("environ", "process.env", "env:", "environment")
_ENV_CMD_WORDS = ("env |", "env|", "env >", "env>", "printenv", "set |", "set|", "export -p",
                  "declare -x", "$(env")  # fmt: skip


def env_exfil(doc: Document) -> Iterator[Hit]:
    if not doc.regions((*_ENV_WORDS, *_ENV_CMD_WORDS, *envflow.WORDS), after=0):
        return
    text = doc.text
    seen: set[int] = set()

    def hit(start: int, end: int, message: str) -> Hit | None:
        line = doc.line_of(start)
        if line in seen:
            return None
        seen.add(line)
        return Hit("env-exfil", _C, start, end, message)

    for regex in (_ENV_PIPE, _ENV_SUBST):
        for m in doc.finditer(regex, _ENV_CMD_WORDS, after=0):
            h = hit(m.start(), m.end(), "Pipes the whole environment to a network command")
            if h:
                yield h
    for m in doc.finditer(_ENV_TO_FILE, _ENV_CMD_WORDS, after=0):
        base = m.group("f").rsplit("/", 1)[-1]
        if base not in text[m.end() :]:
            continue  # the upload pattern holds the file name literally
        name = re.escape(base)
        upload = re.compile(rf"(?:@|--upload-file\s+|-T\s+|--post-file=?\s*)[\"']?\S*{name}\b")
        if upload.search(text, m.end()):
            h = hit(m.start(), m.end(), "Writes the environment to a file that is then uploaded")
            if h:
                yield h
    for m in doc.finditer(_PY_ENV_SEND, _ENV_WORDS, after=0):
        h = hit(m.start(), m.end(), "Sends os.environ in a network request")
        if h:
            yield h
    # Critical flows first; a high "encoded, not sent" flow waits until the critical rules
    # below have had their say, so it never shadows one of them on the same line.
    weaker: list[tuple[int, int, str]] = []
    for start, end, message, severity in envflow.flows(doc):
        line = doc.line_of(start)
        if severity is not _C:
            weaker.append((start, end, message))
        elif line not in seen:
            seen.add(line)
            yield Hit("env-exfil", severity, start, end, message)
    for regex, what in (
        (_PY_ENV_SERIAL, "Serialises os.environ in a file that sends data over the network"),
        (_JS_ENV, "Serialises process.env in a file that sends data over the network"),
        (_PS_ENV, "Lists every environment variable in a script that sends data"),
    ):
        for m in doc.finditer(regex, _ENV_WORDS, after=0):
            if sends(doc):
                h = hit(m.start(), m.end(), what)
                if h:
                    yield h
    for start, end, message in weaker:
        if doc.line_of(start) not in seen:
            seen.add(doc.line_of(start))
            yield Hit("env-exfil", _H, start, end, message)


# --------------------------------------------------------------------------- markdown-exfil

_BEACON_WORDS = ("![",)
_MD_BEACON = patterns.compile(
    r"!\[[^\]\n]*\]\(\s*(?:https?:)?//[^)\s]+\?[^)\s]*"
    r"(?:\{\{?|\$\{?[A-Za-z_]|%7B|\[(?:DATA|SECRET|KEY|TOKEN|PASSWORD|CONVERSATION|HISTORY|INPUT|CHAT)"
    r"|<(?:data|secret|key|token|conversation|history|input)>"
    # A placeholder described in words (``<contents of ~/.aws/credentials>``) or named as
    # a secret variable (``=OPENAI_API_KEY``, for the model to fill in; not YOUR_TOKEN, a
    # template's blank for the reader).
    r"|<[^>\n]{0,100}?\b(?:contents?|credentials?|secrets?|tokens?|passwords?|api[\s_-]?keys?|cookies?"
    r"|conversation|history|environment|id_(?:rsa|ed25519|ecdsa))\b[^>\n]{0,100}>"
    r"|=(?-i:(?!YOUR_|MY_)[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:KEY|TOKEN|SECRET|PASSWORD))(?![\w-]))",
    re.I,
)


def markdown_exfil(doc: Document) -> Iterator[Hit]:
    if doc.kind != MARKDOWN or "![" not in doc.text:
        return
    for m in doc.finditer(_MD_BEACON, _BEACON_WORDS, after=0):
        yield Hit("markdown-exfil", _H, m.start(), m.end(),
                  "Image URL with a placeholder for data: rendering it sends that data to the host")  # fmt: skip


#: Every keyword the rules of this module look for (for the keyword index).
#: A dialog that asks for a password, to a script that has no business asking: the
#: fake "System Preferences needs your password" of macOS stealers and its kin.
_PROMPT = patterns.compile(
    r"\bdisplay\s+dialog\b[^\n]{0,300}?\b(?:hidden\s+answer|password|passcode)\b"
    r"|\bdisplayDialog\s*\([^\n]{0,300}?\b(?:hiddenAnswer|password|passcode)\b"
    r"|\bzenity\b[^\n]{0,120}?--(?:password\b|entry\b[^\n]{0,120}?--hide-text\b)"
    r"|\bkdialog\b[^\n]{0,60}?--password\b|\bPromptForCredential\s*\("
    r"|\bGet-Credential\b[^\n]{0,80}?-Message\b",
    re.I,
)
_PROMPT_WORDS = ("display dialog", "displaydialog", "zenity", "kdialog", "promptforcredential",
                 "get-credential")  # fmt: skip


def credential_prompt(doc: Document) -> Iterator[Hit]:
    if not doc.regions(_PROMPT_WORDS, after=0):
        return
    seen: set[int] = set()
    for m in doc.finditer(_PROMPT, _PROMPT_WORDS, after=0):
        line = doc.line_of(m.start())
        if line in seen:
            continue
        seen.add(line)
        start, end = send_scope(doc, line)
        sent = sends(doc, start, end)
        yield Hit("credential-prompt", _C if sent else _H, m.start(), m.end(),
                  "Shows a dialog asking for the user's password"
                  + (" and sends data over the network" if sent else ""))  # fmt: skip


KEYWORDS = (*_PROMPT_WORDS, *_CRED_WORDS, *_DOTENV_WORDS, *_ENV_WORDS, *_ENV_CMD_WORDS, *_BEACON_WORDS, *envflow.WORDS,
            *(w for words, _, _ in _NET for w in words))  # fmt: skip
#: Per family, the keywords one of which a file must hold for it to find anything (its
#: first step asks the same of :meth:`Document.regions`): the scanner's file-level gate.
TRIGGERS = {
    "credentials": _CRED_WORDS,
    "credential_prompt": _PROMPT_WORDS,
    "env_exfil": (*_ENV_WORDS, *_ENV_CMD_WORDS, *envflow.WORDS),
    "markdown_exfil": _BEACON_WORDS,
}
