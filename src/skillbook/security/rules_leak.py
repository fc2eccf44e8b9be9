"""Rules for data leaving the machine by the smaller doors, and for poisoned installs.

Input: a :class:`Document`. Output: :class:`Hit` values for ``secret-exfil`` (one named
secret — an API key, a token — put in a request's body or query for a host that is
not its vendor's, or any data sent to a request catcher or chat webhook),
``dns-exfil`` (data put in a DNS name), ``cloud-metadata`` (the instance metadata
service that hands out a cloud machine's credentials), ``clipboard-capture`` (the
clipboard read where a send is in reach), ``credential-dump`` (keychains, browser
databases, password hashes and Windows secrets dumped, sent or not) and
``typosquat-package`` (a package installed under a misspelling of a popular name).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from pathlib import PurePosixPath

from skillbook.security import hosts, patterns
from skillbook.security.document import CODE, MARKDOWN, Document
from skillbook.security.findings import Severity
from skillbook.security.hit import Hit
from skillbook.security.rules_exfil import send_scope, sends
from skillbook.security.rules_openclaw import EXTENSIONS as OPENCLAW_EXTENSIONS

_C, _H, _M = Severity.CRITICAL, Severity.HIGH, Severity.MEDIUM

# --------------------------------------------------------------------------- secret-exfil

#: Request catchers and chat webhooks: places that collect whatever is sent to them.
SINK = patterns.compile(
    r"webhook\.site\b|\brequestbin\.\w+|\.m\.pipedream\.net|\bpipedream\.net\b|\binteract\.sh\b"
    r"|\boast\.(?:fun|me|pro|live|site|online)\b|burpcollaborator\.net|\bcanarytokens\.com"
    r"|\bbeeceptor\.com|\brequestcatcher\.com|\bhookbin\.com|\bpostb\.in\b|\bngrok-free\.app|\bngrok\.io"
    r"|discord(?:app)?\.com/api/webhooks/|hooks\.slack\.com/(?:services|workflows)/|api\.telegram\.org/bot"
    r"|\bdnslog\.cn\b|\bceye\.io\b|\bxss\.ht\b",
    re.I,
)
_SINK_WORDS = ("webhook.site", "requestbin", "pipedream", "interact.sh", "oast.", "burpcollaborator",
               "canarytokens", "beeceptor", "requestcatcher", "hookbin", "postb.in", "ngrok",
               "/api/webhooks/", "hooks.slack.com", "api.telegram.org", "dnslog", "ceye.io", "xss.ht")  # fmt: skip
_SECRET_NAME = r"[A-Za-z0-9_]*(?:API_?KEY|_KEY|TOKEN|SECRET|PASSWORD|PASSWD|PRIVATE_KEY|ACCESS_KEY|CREDENTIALS?|_AUTH)[A-Za-z0-9_]*"
#: A secret environment variable read, in shell, Python, Node, PowerShell, Ruby, Go.
_SECRET_REF = patterns.compile(
    rf"\$\{{?(?P<sh>{_SECRET_NAME})\}}?"
    rf"|\bos\.(?:environ\s*\[\s*|environ\.get\s*\(\s*|getenv\s*\(\s*)[\"'](?P<py>{_SECRET_NAME})[\"']"
    rf"|\bprocess\.env(?:\.(?P<js>{_SECRET_NAME})\b|\[\s*[\"'](?P<js2>{_SECRET_NAME})[\"']\s*\])"
    rf"|\$env:(?P<ps>{_SECRET_NAME})\b|\bENV\s*\[\s*[\"'](?P<rb>{_SECRET_NAME})[\"']\s*\]"
    rf"|\bos\.Getenv\s*\(\s*\"(?P<go>{_SECRET_NAME})\""
)
#: A request on one line: what carries the secret (body, form, query), not a header.
_REQUEST = patterns.compile(
    r"\b(?:curl|wget|http|https|Invoke-WebRequest|Invoke-RestMethod|iwr|irm|fetch|axios|requests|httpx"
    r"|urlopen|got|needle|superagent|Net::HTTP|http\.Post|\.post|\.put|\.get|sendBeacon|nc|ncat)\b",
    re.I,
)
_REQUEST_WORDS = ("curl", "wget", "http", "invoke-", "iwr", "irm", "fetch", "axios", "requests", "httpx",
                  "urlopen", "got(", "needle", "superagent", "net::http", ".post", ".put", ".get", "sendbeacon",
                  "nc ", "ncat")  # fmt: skip
_HEADER = patterns.compile(
    r"(?:-H|--header|-u|--user|--oauth2-bearer|Authorization|headers?|auth|-Headers|x-api-key|Bearer|Basic)"
    r"\s*[:=]?\s*[\"'{\[(]?[^\n]{0,40}$",
    re.I,
)
#: Words of a secret's variable name as code spells it (not the prose words "key" or
#: "token", which most files hold).
_SECRET_WORDS = ("_key", "apikey", "_token", "$token", "{token", "token}", "_secret", "$secret", "secret_",
                 "_password", "$password", "password_", "_passwd", "credential", "_auth")  # fmt: skip
_URLISH = patterns.compile(r"\b(?:https?|ftp)://[^\s'\"`<>()\[\]{}\\|]+", re.I)


def _vendor(name: str) -> str:
    """The vendor part of a secret's name (``OPENAI_API_KEY`` -> ``openai``)."""
    first = re.split(r"_+", name.strip("_"))[0].lower()
    return (
        first
        if len(first) >= 3 and first not in ("api", "my", "the", "app", "access", "secret")
        else ""
    )


def secret_exfil(doc: Document) -> Iterator[Hit]:
    if not doc.regions((*_SECRET_WORDS, *_SINK_WORDS), after=0):
        return
    seen: set[int] = set()
    for m in doc.finditer_in(_SECRET_REF, doc.regions_all(_SECRET_WORDS, _REQUEST_WORDS)):
        line = doc.line_of(m.start())
        if line in seen:
            continue
        text = doc.line_text(line)
        start, _ = doc.lines_span(line, line)
        if not _REQUEST.search(text):
            continue
        before = text[: m.start() - start]
        if _HEADER.search(before):
            continue  # an Authorization header: the secret goes to the API it belongs to
        name = next(g for g in m.groups() if g)
        urls = [u.group(0) for u in _URLISH.finditer(text)]
        sink = SINK.search(text)
        kinds = {hosts.classify(u).kind for u in urls}
        if sink or kinds & {
            hosts.RAW_IP,
            hosts.KNOWN_BAD,
            hosts.PASTE,
            hosts.FILE_DROP,
            hosts.TUNNEL,
        }:
            seen.add(line)
            yield Hit("secret-exfil", _C, m.start(), m.end(),
                      f"Sends the secret {name} to a collecting host", floor=_H)  # fmt: skip
            continue
        vendor = _vendor(name)
        if not urls or (vendor and any(vendor in hosts.host_of(u).lower() for u in urls)):
            continue  # no fixed host to judge, or the key's own vendor
        if all(hosts.host_of(u).lower() in ("localhost", "127.0.0.1", "0.0.0.0") for u in urls):
            continue
        seen.add(line)
        yield Hit("secret-exfil", _H, m.start(), m.end(),
                  f"Sends the secret {name} in a request body or query to {hosts.host_of(urls[0])}, "
                  "not its vendor's host")  # fmt: skip
    # Data gathered from the machine and sent to a request catcher or chat webhook.
    for m in doc.finditer(SINK, _SINK_WORDS, after=0):
        line = doc.line_of(m.start())
        if line in seen:
            continue
        start, end = doc.lines_span(line - 2, line + 2)
        window = doc.text[start:end]
        if _GATHER.search(window) or (doc.kind == MARKDOWN and _SEND_VERB.search(window)):
            seen.add(line)
            yield Hit("secret-exfil", _C, m.start(), m.end(),
                      "Sends data from this machine to a request catcher or chat webhook", floor=_H)  # fmt: skip


#: Data about this machine or its user, gathered next to a send.
_GATHER = patterns.compile(
    r"\$\((?:whoami|hostname|id|uname|cat|env|printenv|ls|pwd|ifconfig|ip\s+a|curl\s+-s\s+ifconfig)\b"
    r"|`(?:whoami|hostname|id|uname|cat|env|printenv|ls|pwd)\b|\bos\.(?:getlogin|uname|environ|listdir|getcwd)\b"
    r"|\bsocket\.gethostname\b|\bplatform\.(?:node|uname)\b|\bgetpass\.getuser\b|\bos\.(?:userInfo|hostname|homedir)\s*\("
    r"|\bprocess\.env\b|\breadFileSync\b|\bopen\s*\(|\bGet-Content\b|\$env:|\bGet-Clipboard\b|\bpbpaste\b"
    r"|\$\{?[A-Z_]*(?:KEY|TOKEN|SECRET|PASSWORD)\b|-d\s+@|-F\s+[\"']?\w+=@|--data-binary\s+@|--upload-file\b",
    re.I,
)
_SEND_VERB = patterns.compile(
    r"\b(?:send|post|upload|forward|report|submit|copy)\b[^\n]{0,80}?\b(?:keys?|tokens?|secrets?|passwords?|credentials?"
    r"|env(?:ironment)?|conversation|history|files?|contents|output|cookies)\b",
    re.I,
)

# --------------------------------------------------------------------------- dns-exfil

_DNS = patterns.compile(
    r"\b(?:dig|nslookup|host|drill|kdig|Resolve-DnsName|ping)\b(?:\s+[-+@]\S+)*\s+[\"']?[^\s\"']*"
    r"(?:\$\(|`|\$\{?\w+\}?\.|\$env:\w+\.|%\w+%\.)[^\n]{0,300}?\.[a-z]{2,}"
    r"|\b(?:gethostbyname|getaddrinfo|dns\.(?:resolve\w*|lookup)|resolver\.(?:resolve|query)|Dns\.GetHostAddresses|net\.LookupHost)"
    r"\s*\([^\n]{0,300}(?:\+|\.format\(|f[\"'][^\"'\n]*\{|`[^`\n]*\$\{|%s)[^\n]{0,300}\.[a-z]{2,}",
    re.I,
)
_DNS_WORDS = ("dig ", "nslookup", "host ", "drill ", "kdig", "resolve-dnsname", "ping ", "gethostbyname",
              "getaddrinfo", "dns.", "resolver.", "gethostaddresses", "lookuphost")  # fmt: skip
_DNS_DATA = patterns.compile(
    r"whoami|hostname|\bid\b|uname|cat\s|env|printenv|base64|base32|xxd|od\s|hexdump|KEY|TOKEN|SECRET|PASS"
    r"|environ|getlogin|userInfo|homedir|readFile|open\s*\(|\.hex\(\)|b32encode|b64encode|USERNAME|COMPUTERNAME",
    re.I,
)


def dns_exfil(doc: Document) -> Iterator[Hit]:
    if not doc.regions(_DNS_WORDS, after=0):
        return
    seen: set[int] = set()
    for m in doc.finditer(_DNS, _DNS_WORDS, after=0):
        line = doc.line_of(m.start())
        if line in seen:
            continue
        seen.add(line)
        start, end = doc.lines_span(line - 3, line)
        data = _DNS_DATA.search(doc.text, start, end)
        if data:
            yield Hit("dns-exfil", _C if re.search(r"KEY|TOKEN|SECRET|PASS|environ|env\b|cat\s|readFile|open",
                                                   data.group(0), re.I) else _H,
                      m.start(), m.end(), "Puts data from this machine in a DNS name (DNS exfiltration)")  # fmt: skip


# --------------------------------------------------------------------------- cloud-metadata

_METADATA = patterns.compile(
    r"169\.254\.169\.254|\bmetadata\.google\.internal\b|\b100\.100\.100\.200\b|169\.254\.170\.2\b"
    r"|\[?fd00:ec2::254\]?|\bmetadata\.azure\.com\b|/latest/meta-data/|/computeMetadata/v1/",
    re.I,
)
_METADATA_WORDS = ("169.254.169.254", "metadata.google.internal", "100.100.100.200", "169.254.170.2",
                   "fd00:ec2::254", "metadata.azure.com", "/latest/meta-data", "/computemetadata/v1")  # fmt: skip
_METADATA_CREDS = patterns.compile(
    r"security-credentials|service-accounts/[^\s/]+/token|/identity/oauth2/token|/metadata/identity|ram/security-credentials",
    re.I,
)


def cloud_metadata(doc: Document) -> Iterator[Hit]:
    if not doc.regions(_METADATA_WORDS, after=0):
        return
    seen: set[int] = set()
    for m in doc.finditer(_METADATA, _METADATA_WORDS, after=0):
        line = doc.line_of(m.start())
        if line in seen:
            continue
        seen.add(line)
        start, end = doc.lines_span(line - 3, line + 3)
        creds = _METADATA_CREDS.search(doc.text, start, end)
        scope = (0, len(doc.text)) if doc.kind == CODE else (start, end)
        sent = sends(doc, *scope) or SINK.search(doc.text, *scope)
        severity = _C if creds and sent else _H
        what = "the cloud machine's credentials" if creds else "the cloud metadata service"
        yield Hit("cloud-metadata", severity, m.start(), m.end(),
                  f"Reads {what}" + (" and sends data over the network" if sent else ""))  # fmt: skip


# --------------------------------------------------------------------------- clipboard-capture

_CLIPBOARD = patterns.compile(
    r"\bpbpaste\b|\bxclip\b[^\n]{0,300}-o\b|\bxclip\b[^\n]{0,300}-out\b|\bxsel\b[^\n]{0,300}(?:-o|--output|-b)\b|\bwl-paste\b"
    r"|\bGet-Clipboard\b|\bpyperclip\.paste\s*\(|\bclipboard\.(?:readText|read|paste|get_text)\s*\("
    r"|\bclipboardy\.(?:read|readSync)\s*\(|\bGetClipboardData\b|\bNSPasteboard\b[^\n]{0,300}stringForType"
    r"|\btkinter\b[^\n]{0,300}clipboard_get|\.clipboard_get\s*\(|the\s+clipboard\s+(?:contents?|history)",
    re.I,
)
_CLIP_WORDS = ("pbpaste", "xclip", "xsel", "wl-paste", "get-clipboard", "pyperclip", "clipboard",
               "getclipboarddata", "nspasteboard")  # fmt: skip
#: A clipboard replaced with a wallet address (clipper malware).
_CLIPPER = patterns.compile(
    r"(?:pbcopy|xclip|Set-Clipboard|pyperclip\.copy|clipboard\.(?:writeText|write|copy))\b[^\n]{0,300}"
    r"(?:\b(?:bc1[a-z0-9]{25,59}|[13][a-km-zA-HJ-NP-Z1-9]{25,39})\b|\b0x[0-9a-fA-F]{40}\b|\b[1-9A-HJ-NP-Za-km-z]{43,44}\b)"
    r"|\b(?:bc1[a-z0-9]{25,59}|[13][a-km-zA-HJ-NP-Z1-9]{25,39})\b[^\n]{0,300}(?:\|\s*pbcopy|Set-Clipboard|pyperclip\.copy|writeText)",
    re.I,
)


def clipboard_capture(doc: Document) -> Iterator[Hit]:
    if not doc.regions((*_CLIP_WORDS, "pbcopy", "set-clipboard"), after=0):
        return
    seen: set[int] = set()
    for m in doc.finditer(_CLIPPER, (*_CLIP_WORDS, "pbcopy", "set-clipboard"), after=0):
        seen.add(doc.line_of(m.start()))
        yield Hit("clipboard-capture", _C, m.start(), m.end(),
                  "Replaces the clipboard with a crypto-wallet address (clipper)")  # fmt: skip
    for m in doc.finditer(_CLIPBOARD, _CLIP_WORDS, after=0):
        line = doc.line_of(m.start())
        if line in seen:
            continue
        scope = send_scope(doc, line)
        if (
            sends(doc, *scope)
            or SINK.search(doc.text, *scope)
            or _ANY_UPLOAD.search(doc.text, *scope)
        ):
            seen.add(line)
            yield Hit("clipboard-capture", _H, m.start(), m.end(),
                      "Reads the clipboard where data is sent over the network")  # fmt: skip


_ANY_UPLOAD = patterns.compile(
    r"\bcurl\b[^\n]{0,300}(?:\s-d\b|--data|\s-F\b|-X\s*POST)|\brequests\.post\b|\bfetch\s*\(|\bInvoke-(?:WebRequest|RestMethod)\b"
    r"|\bhttpx\.post\b|\burlopen\s*\(",
    re.I,
)

# --------------------------------------------------------------------------- credential-dump

_DUMP = patterns.compile(
    r"\bsecurity\s+dump-keychain\b|\bchainbreaker\b|\b(?:Chrome|Chromium|Brave|Edge|Opera|Vivaldi|Arc)\s+Safe\s+Storage\b"
    r"|\bsecurity\s+find-generic-password\s+(?:-\w+\s+)*-w?a\s+[\"']?(?:Chrome|Chromium|Brave|Edge|Opera)\b"
    r"|\bmimikatz\b|\bsekurlsa\b|\blsadump\b|\bprocdump(?:64)?(?:\.exe)?\b[^\n]{0,300}lsass|\bcomsvcs(?:\.dll)?\b[^\n]{0,300}MiniDump"
    r"|\blsass(?:\.exe|\.dmp)\b|\breg(?:\.exe)?\s+save\s+[\"']?HKLM\\+(?:SAM|SYSTEM|SECURITY)\b|\blazagne\b|\bunshadow\b"
    r"|\b(?:cat|cp|head|tail|less|more|base64|xxd|tar|zip|scp|nc)\b[^\n]{0,300}/etc/(?:shadow|gshadow|master\.passwd)\b"
    r"|\bgpg\s+(?:--\S+\s+)*--export-secret-(?:keys|subkeys)\b|\bsecret-tool\s+search\s+--all\b"
    r"|\bsqlite3?\b[^\n]{0,300}(?:Cookies|Login\s+Data|cookies\.sqlite|logins\.json|Web\s+Data|places\.sqlite|History\b)"
    r"|\bsqlite3\.connect\s*\([^\n]{0,300}(?:Cookies|Login\s+Data|cookies\.sqlite|Web\s+Data|places\.sqlite)"
    r"|\bbrowser_cookie3\b|\bbrowsercookie\b|\bpycookiecheat\b|\bCryptUnprotectData\b|\bProtectedData\]::Unprotect\b"
    r"|\b(?:vaultcmd|VaultCmd)(?:\.exe)?\s+/list|\bcmdkey\s+/list\b"
    r"|\.password-store\b[^\n]{0,300}\b(?:pass\s+show|gpg\s+(?:-d|--decrypt))|\bfind\b[^\n]{0,300}\.password-store[^\n]{0,300}-exec",
    re.I,
)
_DUMP_WORDS = ("dump-keychain", "chainbreaker", "safe storage", "find-generic-password", "mimikatz",
               "sekurlsa", "lsadump", "procdump", "comsvcs", "lsass", "reg save", "reg.exe save", "lazagne",
               "unshadow", "/etc/shadow", "/etc/gshadow", "master.passwd", "export-secret", "secret-tool",
               "sqlite", "browser_cookie3", "browsercookie", "pycookiecheat", "cryptunprotectdata",
               "protecteddata", "vaultcmd", "cmdkey", ".password-store")  # fmt: skip


def credential_dump(doc: Document) -> Iterator[Hit]:
    if not doc.regions(_DUMP_WORDS, after=0):
        return
    seen: set[int] = set()
    for m in doc.finditer(_DUMP, _DUMP_WORDS, after=0):
        line = doc.line_of(m.start())
        if line in seen:
            continue
        seen.add(line)
        scope = send_scope(doc, line)
        sent = sends(doc, *scope) or bool(SINK.search(doc.text, *scope))
        yield Hit("credential-dump", _C if sent else _H, m.start(), m.end(),
                  "Dumps stored passwords, keys or browser secrets"
                  + (" and sends data over the network" if sent else ""))  # fmt: skip


# --------------------------------------------------------------------------- surveillance

#: Capturing what the user types, sees or says: keyloggers, silent screenshots, the
#: microphone and the camera.
_SPY = patterns.compile(
    r"\bpynput\.keyboard\b|\bkeyboard\.Listener\s*\(|\bkeyboard\.(?:on_press|hook|on_release)\s*\("
    r"|\bGetAsyncKeyState\b|\bSetWindowsHookEx\w*\b|\bCGEventTapCreate\b|\bNSEvent\.addGlobalMonitorForEvents\b"
    r"|\baddGlobalMonitorForEventsMatchingMask\b|\bxinput\s+(?:test|--test-xi2)\b|\blogkeys\b|\biohook\b"
    r"|\bscreencapture\s+(?:-\w+\s+)*-x\b|\bImageGrab\.grab\s*\(|\bpyautogui\.screenshot\s*\(|\bmss\(\)\.(?:grab|shot)\b"
    r"|\bimport\s+-window\s+root\b|\bCopyFromScreen\s*\(|\bgnome-screenshot\b[^\n]{0,80}-f\b"
    r"|\bimagesnap\b|\bffmpeg\b[^\n]{0,120}-f\s+(?:avfoundation|dshow|v4l2|alsa|pulse)\b|\barecord\b|\bsox\s+-d\b"
    r"|\bsounddevice\.rec\s*\(|\bpyaudio\b[^\n]{0,120}\binput\s*=\s*True|\bcv2\.VideoCapture\s*\(\s*0\s*\)"
    r"|\bgetUserMedia\s*\(",
    re.I,
)
_SPY_WORDS = ("pynput", "keyboard.", "getasynckeystate", "setwindowshookex", "cgeventtapcreate",
              "addglobalmonitorforevents", "xinput", "logkeys", "iohook", "screencapture", "imagegrab",
              "pyautogui.screenshot", "mss()", "-window root", "copyfromscreen", "gnome-screenshot", "imagesnap",
              "ffmpeg", "arecord", "sox -d", "sounddevice", "pyaudio", "videocapture", "getusermedia")  # fmt: skip


def surveillance(doc: Document) -> Iterator[Hit]:
    if not doc.regions(_SPY_WORDS, after=0):
        return
    seen: set[int] = set()
    for m in doc.finditer(_SPY, _SPY_WORDS, after=0):
        line = doc.line_of(m.start())
        if line in seen:
            continue
        seen.add(line)
        scope = send_scope(doc, line)
        sent = (
            sends(doc, *scope)
            or bool(SINK.search(doc.text, *scope))
            or bool(_ANY_UPLOAD.search(doc.text, *scope))
        )
        # Screen, camera and microphone tools are ordinary on their own (a screenshot skill);
        # captured input that leaves the machine, or a keylogger at all, is not.
        keys = re.search(r"key|hook|event|xinput|logkeys", m.group(0), re.I) is not None
        if not (sent or keys):
            continue
        yield Hit("surveillance", _C if sent else _H, m.start(), m.end(),
                  ("Captures keystrokes" if keys else "Captures the screen, camera or microphone")
                  + (" and sends data over the network" if sent else ""))  # fmt: skip


# --------------------------------------------------------------------------- crypto-miner

_MINER = patterns.compile(
    r"stratum\+(?:tcp|ssl|tls)://|\bxmrig\b|\bcpuminer\b|\bminerd\b|\bnbminer\b|\bt-rex\b[^\n]{0,80}-a\s|\bphoenixminer\b"
    r"|\blolminer\b|\bccminer\b|\bethminer\b|--donate-level\b|\bcoinhive\b|\bcryptonight\b|\bmoneroocean\b"
    r"|\b(?:pool\.)?(?:supportxmr|minexmr|nanopool|2miners|f2pool|hashvault)\.\w+",
    re.I,
)
_MINER_WORDS = ("stratum+", "xmrig", "cpuminer", "minerd", "nbminer", "t-rex", "phoenixminer", "lolminer", "ccminer",
                "ethminer", "--donate-level", "coinhive", "cryptonight", "moneroocean", "supportxmr", "minexmr",
                "nanopool", "2miners", "f2pool", "hashvault")  # fmt: skip


#: OpenClaw's own ``crypto-mining`` words: in the files its rule reads, it reports the
#: first line they occur on, and this rule does not report that line again.
_OPENCLAW_MINER = patterns.compile(r"stratum\+tcp|stratum\+ssl|coinhive|cryptonight|xmrig", re.I)


def crypto_miner(doc: Document) -> Iterator[Hit]:
    if not doc.regions(_MINER_WORDS, after=0):
        return
    seen: set[int] = set()
    if PurePosixPath(doc.name).suffix.lower() in OPENCLAW_EXTENSIONS:
        first = _OPENCLAW_MINER.search(doc.text)
        if first is not None:
            seen.add(doc.line_of(first.start()))
    for m in doc.finditer(_MINER, _MINER_WORDS, after=0):
        line = doc.line_of(m.start())
        if line not in seen:
            seen.add(line)
            yield Hit(
                "crypto-miner",
                _C,
                m.start(),
                m.end(),
                "Runs a cryptocurrency miner or points at a mining pool",
            )


# --------------------------------------------------------------------------- typosquat-package

#: Very popular package names (PyPI and npm, the most downloaded and those the agents'
#: skills install); a name one edit away from one of these, and not itself one of them
#: or a known real package, is a typosquat.
POPULAR = frozenset(
    """
requests numpy pandas urllib3 setuptools boto3 botocore certifi idna charset-normalizer python-dateutil
pyyaml typing-extensions cryptography packaging jinja2 markupsafe pydantic attrs click flask django
fastapi uvicorn sqlalchemy pytest matplotlib scipy scikit-learn tensorflow torch torchvision pillow
beautifulsoup4 selenium colorama openai anthropic langchain transformers httpx aiohttp psutil
paramiko pymongo psycopg2 psycopg2-binary redis celery jsonschema pyjwt docker kubernetes google-auth
protobuf grpcio websocket-client websockets playwright openpyxl pytz tzdata simplejson jmespath pyasn1
oauthlib werkzeug gunicorn keras opencv-python nltk pygments docutils virtualenv filelock platformdirs
black mypy pyparsing decorator wrapt multidict frozenlist gitpython pycryptodome bcrypt pynacl
discord.py python-telegram-bot tweepy yt-dlp youtube-dl streamlit gradio huggingface-hub tiktoken
chromadb sentence-transformers pyperclip pyautogui termcolor xmltodict markdown pyinstaller cython
numba python-dotenv tabulate tenacity pandas-datareader seaborn plotly sympy networkx lxml
react react-dom lodash express axios chalk commander moment request webpack typescript eslint
prettier mocha nodemon dotenv yargs inquirer colors underscore jquery bluebird body-parser mongoose
socket.io node-fetch cross-env rimraf semver minimist fs-extra puppeteer discord.js electron
@babel/core tailwindcss esbuild ethers bcryptjs jsonwebtoken nodemailer cheerio redux graphql
prisma sequelize mysql mysql2 sqlite3 ioredis coffee-script cross-spawn shelljs request-promise
passport helmet morgan multer execa superagent classnames prop-types styled-components rxjs
core-js mkdirp nanoid winston typeorm @anthropic-ai/sdk @modelcontextprotocol/sdk serve-static
""".split()  # noqa: SIM905 - a word list reads better as text
)
#: Real packages one edit away from a popular one (not typosquats).
_NEIGHBOURS = frozenset(
    """
psycopg psycopg2 scapy preact color attr boto jinja openapi request requests mysql mysql2 httpie
pandas colors execa torch2 flask-cors react-is redux-saga urllib3 urllib bcrypt bcryptjs uvloop
black blackd plotly typing docker dockerfile pytest pytest-cov pytests attrs sympy click clicks
chalk3 moments express-session pillow-heif keras-nlp langchain-core jest debug ws express-ws
telegram discord selenium-wire socket.io-client ethers5 sqlite websocket websocket-client
python-jose python-dotenv dotenv-cli tensorflow-cpu tensorflow-gpu torchaudio markdown2 scipy2
python python3 node nodejs npm pnpm yarn pip pip3 java cargo rustc bunx deno
""".split()  # noqa: SIM905 - a word list reads better as text
)
_INSTALL = patterns.compile(
    r"\b(?:pip[0-9.]*|pipx|uv\s+pip|uv|poetry|pdm|rye|conda|mamba|easy_install)\s+(?:install|add|inject)\b(?P<py>(?:[^\n;&|#\"'`]|[\"'`](?!\s*[,}\]):]))*)"
    r"|\b(?:npm|pnpm|cnpm|yarn|bun)\s+(?:install|i|add|global\s+add)\b(?P<js>(?:[^\n;&|#\"'`]|[\"'`](?!\s*[,}\]):]))*)"
    r"|\b(?:npx|bunx|pnpx)\s+(?P<npx>(?:-\S+\s+)*[@\w./-]+)"
    r"|[\"']pip[0-9.]*[\"']\s*,\s*[\"']install[\"']\s*,(?P<pylist>[^\]\n]*)"
    r"|[\"']npm[\"']\s*,\s*[\"'](?:install|i)[\"']\s*,(?P<jslist>[^\]\n]*)",
    re.I,
)
_INSTALL_WORDS = ("pip install", "pip3 install", "pip add", "pipx install", "pipx inject", "uv add", "poetry add",
                  "pdm add", "rye add", "conda install", "mamba install", "easy_install", "npm install",
                  "npm i ", "pnpm add", "pnpm install", "pnpm i ", "yarn add", "yarn global", "bun add", "bun install",
                  "bun i ", "npx ", "bunx ", "pnpx ", "'pip", '"pip', "'npm'", '"npm"', "pip install")  # fmt: skip
_INSTALL_SET = frozenset(_INSTALL_WORDS)
_OPTION_WITH_VALUE = frozenset({"-r", "-c", "-e", "-i", "-t", "--index-url", "--extra-index-url", "--target",
                                "--prefix", "--requirement", "--constraint", "--editable", "--root", "-f",
                                "--find-links", "--python", "-p", "--registry", "--cache",
                                "--trusted-host", "--platform", "--only-binary", "--no-binary", "-w",
                                "--workspace", "-C", "--cwd", "--dir", "--filter"})  # fmt: skip
_VERSION_SPLIT = re.compile(r"[\[<>=!~;]|(?<=.)@")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.lower())


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` becomes ``b`` by one insertion, deletion, substitution or swap of
    neighbouring letters."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(short) and short[i] == long_[i]:
        i += 1
    return short[i:] == long_[i + 1 :]


_POPULAR_CANON = {_canonical(p): p for p in POPULAR}
_KNOWN_CANON = frozenset(_POPULAR_CANON) | {_canonical(n) for n in _NEIGHBOURS}
_POPULAR_SQUASHED = {re.sub(r"[-_.]", "", c): p for c, p in _POPULAR_CANON.items()}


def _deletions(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


#: Every popular name and each of its one-letter deletions -> the names they come from:
#: two names one edit apart share an entry (one of them, or a deletion of both), so a
#: candidate is compared with a handful of names, not with all of them.
_NEAR: dict[str, set[str]] = {}
for _canon in _POPULAR_CANON:
    if len(_canon) >= 5:
        for _key in {_canon} | _deletions(_canon):
            _NEAR.setdefault(_key, set()).add(_canon)


@functools.lru_cache(maxsize=4096)
def squatted(name: str) -> str | None:
    """The popular package ``name`` imitates, or None."""
    canon = _canonical(name)
    if canon in _KNOWN_CANON or len(canon) < 5:
        return None
    squashed = re.sub(r"[-_.]", "", canon)
    if squashed in _POPULAR_SQUASHED and "/" not in name:
        return _POPULAR_SQUASHED[squashed]  # crossenv for cross-env
    near = set().union(*(_NEAR.get(k, ()) for k in {canon} | _deletions(canon)))
    for popular_canon in sorted(near):
        if _one_edit(canon, popular_canon):
            return _POPULAR_CANON[popular_canon]
    for prefix in ("python-", "python3-", "py-", "py3-", "node-"):
        bare = canon.removeprefix(prefix)
        if bare != canon and bare in _POPULAR_CANON:
            return _POPULAR_CANON[bare]  # python-requests, node-axios
    for suffix in ("-python", "-py", "-js", "-node"):
        bare = canon.removesuffix(suffix)
        if bare != canon and bare in _POPULAR_CANON:
            return _POPULAR_CANON[bare]
    return None


def _package_names(args: str) -> Iterator[tuple[str, int]]:
    """The package names in the arguments of an install command, with their offsets."""
    skip = False
    for m in re.finditer(r"[^\s,\"'`\[\]]+(?:\[[^\]\s]*\])?", args):
        token = m.group(0).rstrip(".:)")
        if skip:
            skip = False
            continue
        if token.startswith("-"):
            skip = token in _OPTION_WITH_VALUE
            continue
        if ("/" in token and not token.startswith("@")) or token.startswith(
            (".", "~", "$", "git+", "http")
        ):
            continue
        name = _VERSION_SPLIT.split(token, maxsplit=1)[0]
        if name and re.fullmatch(r"@?[A-Za-z0-9][\w.-]*(?:/[\w.-]+)?", name):
            yield name, m.start()


_REQUIREMENTS = patterns.compile(r"requirements[\w.-]*\.(?:txt|in)")
_REQ_LINE = patterns.compile(
    r"^\s*(?P<name>[A-Za-z0-9][\w.-]*)\s*(?:\[[^\]]*\])?\s*(?:[<>=!~;]|$)", re.M
)
_PKG_DEP = patterns.compile(r"^\s*\"(?P<name>@?[\w.-]+(?:/[\w.-]+)?)\"\s*:\s*\"[\^~<>=*\d]", re.M)


#: A ``package`` of an install spec in ``SKILL.md``'s frontmatter (``metadata.openclaw.
#: install``: ``{"kind": "uv", "package": "…"}`` inline or ``package: …`` in block YAML):
#: skillbook and OpenClaw install it themselves, so a misspelling there is installed too.
_SPEC_PACKAGE = patterns.compile(
    r"[\"']?\bpackage[\"']?[ \t]*:[ \t]*[\"']?(?P<name>@?[A-Za-z0-9][\w.-]*(?:/[\w.-]+)?)"
)


def _spec_squats(doc: Document) -> Iterator[Hit]:
    end = doc.frontmatter_end
    if not end or "package" not in doc.lower:
        return
    head_end, _ = doc.lines_span(end, end)
    for m in _SPEC_PACKAGE.finditer(doc.text, 0, head_end):
        name = _VERSION_SPLIT.split(m.group("name"), maxsplit=1)[0]
        real = squatted(name)
        if real:
            yield Hit("typosquat-package", _H, m.start("name"), m.start("name") + len(name),
                      f"Its install spec installs {name!r}, a misspelling of the popular package {real!r}")  # fmt: skip


def typosquat_package(doc: Document) -> Iterator[Hit]:
    base = doc.name.rsplit("/", 1)[-1].lower()
    if base == "skill.md":
        yield from _spec_squats(doc)
    manifest: re.Pattern[str] | None = None
    if base.startswith("requirements") and _REQUIREMENTS.fullmatch(base):
        manifest = _REQ_LINE
    elif base == "package.json":
        manifest = _PKG_DEP
    if manifest is not None:
        for m in manifest.finditer(doc.text):
            real = squatted(m.group("name"))
            if real:
                yield Hit("typosquat-package", _H, m.start("name"), m.end("name"),
                          f"Depends on {m.group('name')!r}, a misspelling of the popular package {real!r}")  # fmt: skip
        return
    if not doc.holds_any(_INSTALL_SET):
        return  # the one-pass keyword index says no install command: nothing to split
    for m in doc.finditer(_INSTALL, _INSTALL_WORDS, after=0):
        group = next(g for g in ("py", "js", "npx", "pylist", "jslist") if m.group(g) is not None)
        for name, offset in _package_names(m.group(group)):
            real = squatted(name)
            if real:
                at = m.start(group) + offset
                yield Hit("typosquat-package", _H, at, at + len(name),
                          f"Installs {name!r}, a misspelling of the popular package {real!r}")  # fmt: skip
                break


#: Every keyword the rules of this module look for (for the keyword index).
KEYWORDS = (*_SECRET_WORDS, *_SINK_WORDS, *_DNS_WORDS, *_METADATA_WORDS, *_CLIP_WORDS, "pbcopy",
            "set-clipboard", *_DUMP_WORDS, *_INSTALL_WORDS, *_SPY_WORDS, *_MINER_WORDS)  # fmt: skip
#: Per family, the keywords one of which a file must hold for it to find anything.
TRIGGERS = {
    "secret_exfil": (*_SECRET_WORDS, *_SINK_WORDS),
    "dns_exfil": _DNS_WORDS,
    "cloud_metadata": _METADATA_WORDS,
    "clipboard_capture": (*_CLIP_WORDS, "pbcopy", "set-clipboard"),
    "credential_dump": _DUMP_WORDS,
    "surveillance": _SPY_WORDS,
    "crypto_miner": _MINER_WORDS,
}
