"""Rules for code that runs what it fetches or decodes, and for reverse shells.

Input: a :class:`Document`. Output: :class:`Hit` values for ``remote-fetch-exec``,
``encoded-exec`` and ``reverse-shell``. Patterns are compiled once at import; a
cheap substring test skips a family when its keywords are absent.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

from skillbook.security import hosts, patterns
from skillbook.security.document import Document
from skillbook.security.findings import Severity
from skillbook.security.hit import Hit

_C, _H, _M = Severity.CRITICAL, Severity.HIGH, Severity.MEDIUM

# One pipeline segment: no newline, no pipe, no `;`, no `&&` (a URL's `&` is fine).
_SEG = r"(?:[^\n|;&]|&(?!&))*"
_PIPE = r"\|(?!\|)"
_PREFIX = r"(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+(?:\w+=\S*\s+)*)?(?:[\w/.-]*/)?"
_INTERP = r"(?:ba|z|da|k|fi)?sh|python[0-9.]*|pypy3?|node|perl|ruby|php|osascript|pwsh|powershell"
#: One stage of a pipeline that is an interpreter; its arguments are checked in Python.
_STAGE = patterns.compile(rf"^\s*{_PREFIX}(?P<interp>{_INTERP})(?![\w.-])(?P<args>[^)`]*)", re.I)
_STAGE_SPLIT = patterns.compile(r"(?<!\|)\|(?!\|)")
_COMMAND_END = patterns.compile(r"\n|;|&&|\|\|")
_FETCHER = patterns.compile(
    r"\b(?:curl|wget|fetch|aria2c)\b|\bdig\b(?=[^\n|]{0,120}\btxt\b)|\bnslookup\s+-(?:q|query|type)=txt\b",
    re.I,
)
#: Stages that turn stored text back into a command: base64/base32/hex, rot13 and other
#: letter maps (``tr 'A-Za-z' 'N-ZA-Mn-za-m'``), reversal, decompression, ``openssl enc -d``.
_DECODER = patterns.compile(
    r"\b(?:base64|b64|base32|basenc|openssl\s+(?:enc\s+)?-?base64)\s+(?:-[\w-]+\s+)*?"
    r"(?:-d|-D|--decode|-di|-id)\b"
    r"|\bxxd\s+(?:-\w+\s+)*-r\b"
    r"|\b(?:printf|echo\s+-e)\s+[\"']?(?:\\x[0-9a-fA-F]{2}){8,}"
    r"|\btr\s+(?:-\w+\s+)*[\"']?\[?[A-Za-z]-[A-Za-z]"
    r"|(?<![\w-])(?:rev|gunzip|zcat|gzcat|bzcat|bunzip2|xzcat|unxz|zstdcat|uudecode|unlzma|lzcat)\b"
    r"|\b(?:gzip|bzip2|xz|zstd|lzma|brotli)\s+(?:-\w+\s+)*-\w*d"
    r"|\bopenssl\s+(?:enc\s+)?-?[\w-]*\s+(?:-[\w-]+\s+(?:\S+\s+)?)*?-d\b",
    re.I,
)


def _pipeline_sink(text: str, start: int) -> tuple[str, int] | None:
    """The interpreter that a pipeline starting at ``start`` feeds, and where it stands.

    Only stages that execute their stdin count: ``| bash``, ``| sudo sh -s --``,
    ``| python3 -`` — not ``| python3 -c '…json…'`` or ``| sh -c 'cat > f'``.
    """
    end_match = _COMMAND_END.search(text, start)
    end = end_match.start() if end_match else len(text)
    command = text[start:end]
    offset = start
    pieces = _STAGE_SPLIT.split(command)
    for index, stage in enumerate(pieces):
        if index > 0:
            m = _STAGE.match(stage)
            if m and _runs_stdin(m.group("interp"), m.group("args")):
                return m.group("interp"), offset + m.start("interp")
        offset += len(stage) + 1
    return None


_PS_PIPE = patterns.compile(
    rf"\b(?:iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring)\b{_SEG}"
    rf"{_PIPE}\s*(?:iex|invoke-expression)\b",
    re.I,
)
_PS_IEX = patterns.compile(
    r"\b(?:iex|invoke-expression|\[scriptblock\]::create)\b[^\n]{0,40}?"
    r"\b(?:iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring)\b",
    re.I,
)
_SUBST = patterns.compile(
    r"(?:\b(?:(?:ba|z|da|k)?sh|source)\s+<\(\s*|(?<![\w-])\.\s+<\(\s*"
    # Any interpreter's inline code, not only a shell's: ``python3 -c "$(curl …)"``.
    r"|\b(?:(?:(?:ba|z|da|k)?sh|python[0-9.]*|pypy3?)\s+(?:-\w+\s+)*?-c|(?:node|perl|ruby)"
    r"\s+(?:-\w+\s+)*?-e|php\s+(?:-\w+\s+)*?-r|eval)\s+[\"']?(?:\$\(|`)\s*)"
    # A DNS TXT record is a download too: ``sh -c "$(dig +short TXT cfg.example)"``.
    r"(?:sudo\s+)?(?:curl|wget\b|dig\b(?=[^\n)`]{0,120}\btxt\b)|nslookup\s+-(?:q|query|type)=txt\b"
    r"|host\s+-t\s*txt\b)",
    re.I,
)
_PY_EXEC = patterns.compile(
    r"\b(?:exec|eval)\s*\([^\n]{0,80}?(?:\burlopen\b|\burlretrieve\b|\brequests\.get\b|"
    r"\bhttpx\.get\b|\burllib3\b)",
)
_JS_EVAL = patterns.compile(r"\b(?:eval|Function)\s*\([^\n]{0,60}?\bfetch\s*\(")
_LOLBIN = patterns.compile(
    r"\bmshta(?:\.exe)?\s+[\"']?(?:https?|javascript|vbscript):|\bregsvr32\b[^\n]*\s/i:https?:"
    r"|\bcertutil(?:\.exe)?\b[^\n]*-urlcache\b|\bbitsadmin\b[^\n]*\s/transfer\b",
    re.I,
)
_DOWNLOAD_TO_FILE = patterns.compile(
    r"\b(?:curl|wget)\b[^\n]*?(?:\s-[A-Za-z]*o\s*|\s-O\s+|\s--output(?:-document)?[= ]\s*"
    r"|(?<![0-9&])>\s*)"
    r"[\"']?(?P<out>[^\s\"';&|)]+)"
    # The same in code: Python ``urlretrieve(url, "f")``, PowerShell ``DownloadFile(url,
    # "f")``/``-OutFile f``, Node ``createWriteStream("f")`` fed by a download.
    r"|\b(?:urlretrieve|DownloadFile)\s*\([^,\n]+,\s*[\"'](?P<code_out>[^\"'\n]+)[\"']"
    r"|\b(?:iwr|Invoke-WebRequest)\b[^\n]*?-OutFile\s+[\"']?(?P<ps_out>[^\s\"';|)]+)"
    r"|\bStart-BitsTransfer\b[^\n]*?-Destination\s+[\"']?(?P<bits_out>[^\s\"';|)]+)"
    r"|\b(?:https?\.get|fetch)\b[^\n]*?createWriteStream\s*\(\s*[\"'](?P<js_out>[^\"'\n]+)[\"']",
    re.I,
)
_DOWNLOAD_WORDS = ("curl", "wget", "urlretrieve", "downloadfile", "-outfile", "createwritestream",
                   "start-bitstransfer")  # fmt: skip
#: Running a saved file from code: ``["sh", "f"]``, ``execSync("sh f")``,
#: ``Start-Process "f"``, ``os.system("chmod +x f; f")``.
_CODE_RUN = (
    r"(?:\b(?:(?:ba|z)?sh|python[0-9.]*|perl|ruby|node|Start-Process|Invoke-Item|startfile)"
    r"|\b(?:system|popen|Popen|call|run|check_call|check_output|execSync|exec|spawn\w*)\s*\()"
    r"[\s\"',\[(]{0,6}"
)
#: Running a file, at the start of a command: ``bash f``, ``. f``, ``chmod +x f``, ``./f``.
_RUN_LEAD = r"(?:^|[;&|(`]|\bthen\b|\bdo\b)\s*(?:sudo\s+)?"
_RUNNERS = r"(?:(?:ba|z|da|k)?sh|python[0-9.]*|perl|ruby|node|source|\.)"
_RUN_FILE = rf"{_RUN_LEAD}(?:{_RUNNERS}\s+|chmod\s+\S+\s+|\./|/|~/|\$HOME/|\$\{{HOME\}}/)"

#: Keywords: one of them is in every match of the fetch-and-run patterns (lower case).
_FETCH_WORDS = ("curl", "wget", "fetch", "aria2c", "urlopen", "urlretrieve", "requests.get", "httpx",
                "urllib3", "iex", "invoke-expression", "scriptblock", "mshta", "regsvr32", "certutil",
                "bitsadmin", "downloadstring", "iwr", "irm ", "(irm", "invoke-webrequest", "invoke-restmethod",
                "dig ", "nslookup", "host -t")  # fmt: skip


def _runs_stdin(interp: str, args: str) -> bool:
    """Whether ``interp ARGS`` executes what arrives on stdin (not ``python -c``/a script)."""
    # A quote ends the command inside a string literal: os.system("curl … | sh").
    tokens = re.split(r"[\"'`]", args, maxsplit=1)[0].split()
    shell = interp.lower().endswith("sh") and not interp.lower().startswith("pw")
    for i, token in enumerate(tokens):
        if token in ("-", "--"):
            return True
        if token.startswith("-"):
            flags = token.lstrip("-")
            if shell and "s" in flags and not token.startswith("--"):
                return True
            if (shell and "c" in flags and not token.startswith("--")) or (
                not shell and flags[:1] in ("c", "m", "e", "p", "n", "r", "E", "command")
            ):
                return False
            continue
        # A positional argument before any -s: a script file, not stdin.
        return i > 0 and tokens[i - 1] == "--"
    return True


def _host_severity(line: str) -> tuple[Severity, Severity | None, str]:
    """Severity, floor and reason for running code fetched by ``line``."""
    verdict = hosts.worst_host(line)
    if verdict is None:
        return _H, None, "from a URL the text does not show"
    if verdict.untrusted:
        return _C, _H, f"from a {verdict.kind} ({verdict.host})"
    if verdict.kind == hosts.KNOWN_INSTALLER:
        return _M, None, f"from a known installer host ({verdict.host})"
    return _H, None, f"from {verdict.host}"


def remote_fetch_exec(doc: Document) -> Iterator[Hit]:
    if doc.regions(_PKG_WORDS, after=0):
        yield from _package_url_installs(doc)
    if not doc.regions(_FETCH_WORDS + _DOWNLOAD_WORDS, after=0):
        return
    text = doc.text
    seen: set[int] = set()

    def hit(start: int, end: int, what: str) -> Hit | None:
        line = doc.line_of(start)
        if line in seen:
            return None
        seen.add(line)
        severity, floor, why = _host_severity(doc.line_text(line))
        return Hit("remote-fetch-exec", severity, start, end, f"{what} {why}", floor=floor)

    for m in doc.finditer(_FETCHER, _FETCH_WORDS, after=0):
        sink = _pipeline_sink(text, m.start())
        if sink:
            h = hit(m.start(), sink[1] + len(sink[0]), f"Downloaded script piped into {sink[0]}")
            if h:
                yield h
    for regex, what in (
        (_PS_PIPE, "Downloaded script piped into Invoke-Expression"),
        (_PS_IEX, "Invoke-Expression runs a downloaded script"),
        (_SUBST, "Downloaded script run through command/process substitution"),
        (_PY_EXEC, "exec/eval of code fetched over the network"),
        (_JS_EVAL, "eval/Function of code fetched over the network"),
        (_LOLBIN, "Windows system binary used to fetch and run remote code"),
    ):
        for m in doc.finditer(regex, _FETCH_WORDS, after=0):
            h = hit(m.start(), m.end(), what)
            if h:
                yield h
    for m in doc.finditer(_ARCHIVE_PIPE, _FETCH_WORDS, after=0):
        folder = (m.group("dir") or ".").rstrip("/")
        window_end = _line_end(text, m.end(), lines=3)
        run = re.compile(
            rf"{_RUN_LEAD}(?:{_RUNNERS}\s+|chmod\s+\S+\s+)?[\"']?{re.escape(folder)}/[\w.-]", re.M
        )
        if run.search(text, m.end(), window_end):
            h = hit(m.start(), m.end(), "Downloaded archive unpacked and a file from it executed")
            if h:
                yield h
    for start, end in _runs_fetched_var(doc, _FETCH_WORDS, "fetch"):
        h = hit(start, end, "Code fetched into a variable is run by exec/eval/Invoke-Expression")
        if h:
            yield h
    for m in doc.finditer(_DOWNLOAD_TO_FILE, _DOWNLOAD_WORDS, after=0):
        shell = m.group("out") is not None
        out = (m.group("out") or m.group("code_out") or m.group("ps_out") or m.group("js_out")
               or m.group("bits_out"))  # fmt: skip
        out = out.rstrip("/")
        if out in ("-", "/dev/null", "&1", "&2") or not out or "/dev/" in out:
            continue
        base = re.split(r"[/\\]", out)[-1]
        if not base:
            continue
        window_end = _line_end(text, m.end(), lines=3)
        # The run pattern holds the file name literally (case-sensitive): where the
        # window does not, no pattern needs compiling.
        if base not in text[m.end() : window_end]:
            continue
        name = re.escape(base)
        run_start = _RUN_FILE if shell else _CODE_RUN
        run = re.compile(rf"{run_start}[\"']?\S*?{name}(?![\w.-])", re.M)
        found = run.search(text, m.end(), window_end)
        if found:
            h = hit(m.start(), m.end(), f"Downloaded file {out} is then executed")
            if h:
                yield h


#: A package manager told to install something: its arguments are read in Python.
_PKG_INSTALL = patterns.compile(
    r"\b(?:pip[0-9.]*|uv\s+pip|uv|pipx|poetry|pdm|npm|pnpm|yarn|bun)\s+(?:install|add|i)\b"
    r"(?P<args>[^\n|;&]{0,400})",
    re.I,
)
_PKG_WORDS = ("pip install", "pip3 install", "pipx install", "uv add", "poetry add", "pdm add",
              "npm install", "npm i ", "pnpm add", "pnpm install", "yarn add", "bun add", "bun install")  # fmt: skip
#: Options whose value is not the package (an index, a folder, a file of requirements).
_PKG_OPTION_VALUE = frozenset({"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-r",
                               "--requirement", "-c", "--constraint", "--registry", "--trusted-host",
                               "-t", "--target", "--prefix", "--root", "--python", "-p", "--cache"})  # fmt: skip
_URL_TOKEN = patterns.compile(r"(?:git\+)?https?://[^\s\"'`<>)]+", re.I)


def _package_urls(args: str) -> Iterator[tuple[str, int]]:
    """The URLs an install command installs (not an index or a find-links folder)."""
    skip = False
    for m in re.finditer(r"[^\s\"'`]+", args):
        token = m.group(0)
        if token.startswith("#"):
            return  # a comment: what follows is not an argument
        if skip:
            skip = False
            continue
        if token.startswith("-"):
            skip = token in _PKG_OPTION_VALUE
            continue
        url = _URL_TOKEN.match(
            token.split("@", 1)[1] if re.match(r"[\w.-]+@(?:git\+)?https?://", token) else token
        )
        if url:
            yield url.group(0), m.start()


def _package_url_installs(doc: Document) -> Iterator[Hit]:
    """A package installed from a URL off the registries: its setup script, its code on
    import or its npm ``postinstall`` runs, like a script piped into a shell."""
    for m in doc.finditer(_PKG_INSTALL, _PKG_WORDS, after=0):
        for url, offset in _package_urls(m.group("args")):
            verdict = hosts.classify(url.removeprefix("git+"))
            if verdict.kind == hosts.OTHER and any(
                verdict.host == h or verdict.host.endswith("." + h) for h in hosts.CODE_HOSTS
            ):
                continue
            start = m.start("args") + offset
            if verdict.untrusted:
                severity, floor, why = _C, _H, f"from a {verdict.kind} ({verdict.host})"
            else:
                severity, floor, why = _H, None, f"from {verdict.host}"
            yield Hit("remote-fetch-exec", severity, start, start + len(url),
                      f"Installs a package from a URL, not a registry (its install scripts run) {why}",
                      floor=floor)  # fmt: skip
            break


#: A downloaded archive unpacked straight from the pipe (``curl … | tar xz -C /tmp``):
#: a file run from where it was unpacked is a downloaded program run.
_ARCHIVE_PIPE = patterns.compile(
    r"\b(?:curl|wget)\b[^\n|]*\|\s*(?:sudo\s+)?(?:tar\s+-?[A-Za-z]*x|bsdtar\s+-?[A-Za-z]*x)"
    r"[^\n|;&]*?(?:\s-C\s*[\"']?(?P<dir>[^\s;&|\"']+)|(?=[\n|;&]|$))",
    re.I,
)


#: Code fetched or decoded into a variable that a later line runs: Python ``code =
#: requests.get(u).text`` … ``exec(code)``, JavaScript ``const d = await (await fetch(u))
#: .text()`` … ``eval(d)``, PowerShell ``$c = …FromBase64String(…)`` … ``iex $c``.
_FETCHED_VAR = patterns.compile(
    r"(?<![\w.])\$?(?P<var>[A-Za-z_]\w*)[ \t]*=[ \t]*[^\n=][^\n]{0,160}?(?:"
    r"(?P<fetch>\burlopen\s*\(|\brequests\.get\s*\(|\bhttpx\.get\s*\(|\bfetch\s*\(|DownloadString\s*\("
    r"|\b(?:iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\b)"
    r"|(?P<decode>\b(?:b64decode|b32decode|fromhex|FromBase64String|atob)\s*\())",
    re.I,
)
#: How far below the assignment the run is looked for.
_VAR_RUN_LINES = 20


def _var_runs(text: str, var: str, start: int, end: int) -> re.Match[str] | None:
    name = re.escape(var)
    run = re.compile(
        rf"\b(?:exec|eval)\s*\(\s*(?:await\s+)?{name}\b(?!\s*[.(\[])|\bFunction\s*\(\s*{name}\s*\)"
        rf"|\b(?:iex|Invoke-Expression)\s*\(?\s*\${name}\b|\[scriptblock\]::Create\s*\(\s*\${name}\b",
        re.I,
    )
    return run.search(text, start, end)


def _runs_fetched_var(
    doc: Document, words: tuple[str, ...], group: str
) -> Iterator[tuple[int, int]]:
    """Where a variable assigned from a fetch (``group`` "fetch") or a decode ("decode") is
    run by a later line of the same file."""
    text = doc.text
    for m in doc.finditer(_FETCHED_VAR, words, after=0):
        if m.group(group) is None:
            continue
        var = m.group("var")
        window_end = _line_end(text, m.end(), lines=_VAR_RUN_LINES)
        if var not in text[m.end() : window_end]:
            continue
        if _var_runs(text, var, m.end(), window_end):
            yield m.start(), m.end()


def _line_end(text: str, pos: int, *, lines: int) -> int:
    for _ in range(lines + 1):
        nxt = text.find("\n", pos)
        if nxt == -1:
            return len(text)
        pos = nxt + 1
    return pos


# --------------------------------------------------------------------------- encoded-exec

_B64_DECODE = (
    r"(?:base64|b64|openssl\s+(?:enc\s+)?-?base64)\s+(?:-\w+\s+)*?(?:-d|-D|--decode|-di|-id)\b"
)
_HEX_DECODE = r"xxd\s+(?:-\w+\s+)*-r\b"
_DECODE_ANY = rf"(?:{_B64_DECODE}|{_HEX_DECODE}|{_DECODER.pattern})"
#: An interpreter (or eval) whose code comes from a substitution or here-string that
#: decodes: ``bash -c "$(… | base64 -d)"``, ``python3 -c "$(…)"``, ``bash <<< "$(…)"``.
_ENCODED_SUBST = patterns.compile(
    rf"\b(?:(?:(?:ba|z|da|k)?sh|python[0-9.]*|perl|ruby|node|php)\s+(?:-\w+\s+)*?-c|eval|exec"
    rf"|(?:(?:ba|z|da|k)?sh|python[0-9.]*|perl|ruby|node|source))\s*(?:[\"']?(?:\$\(|`)|<\(|<<<)"
    rf"[^\n]*?{_DECODE_ANY}",
    re.I,
)
_PY_DECODE_EXEC = patterns.compile(
    r"\b(?:exec|eval)\s*\([^\n]{0,80}?(?:b64decode|b32decode|b16decode|a85decode|b85decode|"
    r"decodebytes|fromhex|zlib\.decompress|marshal\.loads|codecs\.decode)"
)
#: The same handed to a shell: ``os.system(bytes.fromhex("…").decode())``,
#: ``subprocess.run(base64.b64decode(…), shell=True)`` (both take the bytes as they are).
_PY_DECODE_SHELL = patterns.compile(
    r"\b(?:os\.(?:system|popen)|subprocess\.(?:run|call|check_call|check_output|Popen|getoutput"
    r"|getstatusoutput))\s*\(\s*(?:[\w.]+\.)?(?:b64decode|b32decode|b16decode|a85decode|b85decode|"
    r"decodebytes|fromhex|decompress)\s*\("
)
_JS_DECODE_EXEC = patterns.compile(
    r"\b(?:eval|Function)\s*\([^\n]{0,60}?(?:\batob\s*\(|Buffer\.from\s*\([^\n]*?[\"'](?:base64|hex)[\"'])"
)
_PS_ENCODED = patterns.compile(
    r"\b(?:powershell|pwsh)(?:\.exe)?\b[^\n]*\s-(?:e|ec|en|enc|enco|encodedcommand)\s+[A-Za-z0-9+/=]{16,}"
    r"|FromBase64String[^\n]*\|\s*(?:iex|invoke-expression)\b"
    r"|\b(?:iex|invoke-expression)\b[^\n]{0,60}FromBase64String",
    re.I,
)
_B64_LITERAL = patterns.compile(r"[A-Za-z0-9+/]{16,}={0,2}")
_HEX_LITERAL = patterns.compile(r"(?:\\x[0-9a-fA-F]{2}){8,}|\b(?:[0-9a-fA-F]{2}){12,}\b")

_DECODE_WORDS = ("base64", "b64", "xxd", "\\x", "fromhex", "b32decode", "b16decode", "a85decode",
                 "b85decode", "decodebytes", "atob", "decompress", "marshal",
                 "frombase64string", "powershell", "pwsh", "codecs.decode", "buffer.from",
                 # Decoders that only matter in a pipeline (``| tr``, ``| rev``) are keyed
                 # with the pipe: "tr " and "rev" alone are in every other line of prose.
                 "base32", "basenc", "| tr ", "|tr ", "| rev", "|rev", "gunzip", "zcat", "gzcat",
                 "bzcat", "bunzip2", "xzcat", "unxz", "zstdcat", "uudecode", "unlzma", "lzcat",
                 "gzip -", "bzip2 -", "xz -", "zstd -", "lzma -", "brotli -", "openssl")  # fmt: skip


def decoded_preview(line: str) -> str | None:
    """The printable text a base64 or hex literal in ``line`` decodes to, if any."""
    for m in _B64_LITERAL.finditer(line):
        literal = m.group(0)
        try:
            raw = base64.b64decode(literal + "=" * (-len(literal) % 4), validate=True)
        except (binascii.Error, ValueError):
            continue
        text = _printable(raw)
        if text:
            return text
    for m in _HEX_LITERAL.finditer(line):
        digits = m.group(0).replace("\\x", "")
        try:
            text = _printable(bytes.fromhex(digits))
        except ValueError:
            continue
        if text:
            return text
    return None


def _printable(raw: bytes) -> str | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(text) < 6 or sum(ch.isprintable() or ch in "\n\t" for ch in text) < 0.95 * len(text):
        return None
    return " ".join(text.split())


#: Stored text decoded into a file (``… | base64 -d > /tmp/.s``, ``xxd -r -p … -o f``) that
#: is run within 3 lines: the file form of ``… | base64 -d | sh``.
_DECODE_TO_FILE = patterns.compile(
    rf"(?:{_B64_DECODE}|{_HEX_DECODE}|\bbase32\s+(?:-d|--decode)\b)[^\n|;&]*?(?:>\s*|\s-o\s+)"
    r"[\"']?(?P<out>[^\s\"';&|)]+)",
    re.I,
)


def _decoded_files_run(doc: Document) -> Iterator[tuple[int, int]]:
    text = doc.text
    for m in doc.finditer(_DECODE_TO_FILE, _DECODE_WORDS, after=0):
        out = m.group("out")
        base = re.split(r"[/\\]", out)[-1]
        if not base or "/dev/" in out:
            continue
        window_end = _line_end(text, m.end(), lines=3)
        if base not in text[m.end() : window_end]:
            continue
        run = re.compile(rf"{_RUN_FILE}[\"']?\S*?{re.escape(base)}(?![\w.-])", re.M)
        if run.search(text, m.end(), window_end):
            yield m.start(), m.end()


def encoded_exec(doc: Document) -> Iterator[Hit]:
    if not doc.regions(_DECODE_WORDS, after=0):
        return
    seen: set[int] = set()
    spans: list[tuple[int, int, str]] = []
    spans.extend(
        (start, end, "Decoded payload written to a file that is then executed")
        for start, end in _decoded_files_run(doc)
    )
    for m in doc.finditer(_DECODER, _DECODE_WORDS, after=0):
        sink = _pipeline_sink(doc.text, m.start())
        if sink:
            spans.append(
                (m.start(), sink[1] + len(sink[0]), "Decoded payload piped into " + sink[0])
            )
    for regex, what in (
        (_ENCODED_SUBST, "Decoded payload run through command substitution"),
        (_PY_DECODE_EXEC, "exec/eval of decoded data"),
        (_PY_DECODE_SHELL, "Decoded data run as a shell command"),
        (_JS_DECODE_EXEC, "eval/Function of decoded data"),
        (_PS_ENCODED, "PowerShell runs an encoded command"),
    ):
        spans.extend(
            (m.start(), m.end(), what) for m in doc.finditer(regex, _DECODE_WORDS, after=0)
        )
    spans.extend(
        (start, end, "Decoded data in a variable is run by exec/eval/Invoke-Expression")
        for start, end in _runs_fetched_var(doc, _DECODE_WORDS, "decode")
    )
    for start, end, what in sorted(spans):
        line = doc.line_of(start)
        if line in seen:
            continue
        seen.add(line)
        preview = decoded_preview(doc.line_text(line))
        message = what + (f"; it decodes to: {preview[:160]}" if preview else "")
        yield Hit("encoded-exec", _C, start, end, message)


# --------------------------------------------------------------------------- reverse-shell

_REVERSE = patterns.compile(
    r"\b(?:ba|z|k)?sh\s+-i\b[^\n]*?/dev/(?:tcp|udp)/"
    r"|/dev/(?:tcp|udp)/[^\s/]+/\d+[^\n]*?(?:0>&1|<&\s*\d|>&\s*\d)"
    r"|\bexec\s+\d+<>\s*/dev/(?:tcp|udp)/[^\n]*"
    r"|\bn(?:c|cat|etcat)\b[^\n|;]*\s(?:-e|-c|--exec|--sh-exec)\s+[\"']?(?:/bin/|/usr/bin/)?(?:ba|z)?sh\b"
    r"|\b(?:ba|z)?sh\s+-i\b[^\n]*\|\s*n(?:c|cat|etcat)\b"
    r"|\bmkfifo\b[^\n]*\bn(?:c|cat|etcat)\s+\S+\s+\d+"
    r"|\bsocat\b[^\n]*\b(?:exec|system):[^\n]*(?:sh|bash|pty|cmd)"
    r"|\bsocat\b[^\n]*tcp[46]?(?:-connect)?:[^\n]*\b(?:exec|system):"
    # Perl and Ruby run what the socket sends with ``system``/``IO.popen`` as often as ``exec``.
    r"|\bperl\b[^\n]*\bsocket\b[^\n]*\b(?:exec|system)\b"
    r"|\bfsockopen\s*\([^\n]*(?:exec|shell_exec|system|proc_open|passthru)"
    r"|\bTCPSocket\.(?:open|new)\b[^\n]*\b(?:exec|spawn|system|popen)\b"
    # gawk's sockets: a line read from ``/inet/tcp/…`` into a variable that is then run as
    # a command (``s |& getline c; … c |& getline``, ``system(c)``).
    r"|/inet/(?:tcp|udp)/[^\n]{0,300}?\|&\s*getline\s+(?P<awk_cmd>\w+)[^\n]{0,300}?"
    r"(?:\b(?P=awk_cmd)\s*\|&?\s*getline\b|\bsystem\s*\(\s*(?P=awk_cmd)\b)",
    re.I,
)
_PY_PTY = patterns.compile(r"\bpty\.spawn\s*\(\s*[\"'](?:/bin/)?(?:ba|z)?sh")
_PY_DUP2 = patterns.compile(r"\bos\.dup2\s*\(\s*\w+\.fileno\(\)")
_PY_CONNECT = patterns.compile(r"\.connect\s*\(\s*\(")
#: A shell whose standard input is a socket: ``subprocess.call(["/bin/sh", "-i"],
#: stdin=s.fileno(), …)`` (the same shell as ``dup2``, without the ``dup2``).
_PY_SOCKET_STDIN = patterns.compile(
    r"\b(?:call|Popen|run|check_call|check_output)\s*\(\s*\[?\s*[\"'](?:/bin/|/usr/bin/)?"
    r"(?:ba|z|da)?sh[\"'][^\n]{0,200}?\bstdin\s*=\s*\w+\.fileno\s*\(\)"
)
#: Node: a shell spawned and piped to a socket (``c.pipe(sh.stdin); sh.stdout.pipe(c)``).
_JS_CONNECT = patterns.compile(r"\bnet\.(?:connect|createConnection)\s*\(|\.connect\s*\(\s*\d")
_JS_SPAWN_SHELL = patterns.compile(
    r"\bspawn\s*\(\s*[\"'`](?:/bin/|/usr/bin/)?(?:(?:ba|z|da)?sh|cmd(?:\.exe)?|powershell(?:\.exe)?)[\"'`]"
)
_JS_PIPE = patterns.compile(r"\.pipe\s*\(\s*\w+\.stdin\s*\)")
_PS_TCP = patterns.compile(r"Net\.Sockets\.TCPClient\s*\(", re.I)
_PS_TCP_RUN = patterns.compile(r"GetStream\s*\(\)", re.I)
_PS_TCP_EXEC = patterns.compile(r"\b(?:iex|invoke-expression)\b", re.I)

#: A Node file that opens a TCP connection names one of these.
_JS_NET_WORDS = ("socket", "net.connect", "net.createconnection", 'require("net")', "require('net')",
                 "node:net", "from 'net'", 'from "net"')  # fmt: skip
_SHELL_WORDS = ("/dev/tcp", "/dev/udp", " nc ", "|nc ", "\nnc ", "\tnc ", ";nc ", "ncat", "netcat", "socat", "mkfifo", "pty.spawn",
                "dup2", "tcpclient", "fsockopen", "tcpsocket", "/inet/tcp/", "/inet/udp/",
                *_JS_NET_WORDS)  # fmt: skip


def reverse_shell(doc: Document) -> Iterator[Hit]:
    if not doc.regions(_SHELL_WORDS, after=0):
        return
    text = doc.text
    seen: set[int] = set()
    for m in doc.finditer(_REVERSE, _SHELL_WORDS, after=0):
        line = doc.line_of(m.start())
        if line not in seen:
            seen.add(line)
            yield Hit(
                "reverse-shell",
                _C,
                m.start(),
                m.end(),
                "Reverse shell: a shell wired to a network socket",
            )
    if "socket" in doc.lower and _PY_CONNECT.search(text):
        spawned = _PY_PTY.search(text) or _PY_DUP2.search(text) or _PY_SOCKET_STDIN.search(text)
        if spawned and doc.line_of(spawned.start()) not in seen:
            yield Hit("reverse-shell", _C, spawned.start(), spawned.end(),
                      "Reverse shell: a socket connection handed to a shell (Python)")  # fmt: skip
    if any(word in doc.lower for word in _JS_NET_WORDS):
        piped = _JS_PIPE.search(text)
        shell = _JS_SPAWN_SHELL.search(text)
        if piped and shell and _JS_CONNECT.search(text) and doc.line_of(shell.start()) not in seen:
            yield Hit("reverse-shell", _C, shell.start(), shell.end(),
                      "Reverse shell: a spawned shell piped to a network socket (Node)")  # fmt: skip
    if "tcpclient" in doc.lower:
        client = _PS_TCP.search(text)
        if client and _PS_TCP_RUN.search(text) and _PS_TCP_EXEC.search(text):
            yield Hit("reverse-shell", _C, client.start(), client.end(),
                      "Reverse shell: a TCP stream whose input is executed (PowerShell)")  # fmt: skip


#: Every keyword the rules of this module look for (for the keyword index).
KEYWORDS = (*_FETCH_WORDS, *_DOWNLOAD_WORDS, *_PKG_WORDS, *_DECODE_WORDS, *_SHELL_WORDS)
#: Per family, the keywords one of which a file must hold for it to find anything (its
#: first step asks the same of :meth:`Document.regions`): the scanner's file-level gate.
TRIGGERS = {
    "remote_fetch_exec": (*_FETCH_WORDS, *_DOWNLOAD_WORDS, *_PKG_WORDS),
    "encoded_exec": _DECODE_WORDS,
    "reverse_shell": _SHELL_WORDS,
}
