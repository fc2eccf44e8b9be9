"""Follow the whole environment from where it is read to where it leaves the machine.

Input: a :class:`Document`. Output: ``(start, end, message, severity)`` for each
place where an expression that stands for *every* environment variable
(``process.env`` as an object, ``os.environ.copy()``, ``dict(os.environ)``,
``$(env)``, ``Get-ChildItem env:``, ``os.Environ()``, ``ENV.to_h`` …) reaches the
arguments of a network call, directly or through variables assigned from it
(``snapshot = {...process.env}``; ``for k, v in os.environ.items()``). That is
critical. Whole-environment values that are encoded but never sent are high.

This is a small, local data flow: assignments and ``for`` loops in the same script
(or the same fenced block of a Markdown file), followed for a few rounds. It does not
resolve functions, imports or other files. Reading one variable
(``process.env.API_KEY``, ``os.environ["X"]``, ``"X" in os.environ``) is not the
environment, and passing it to a child process (``spawn(…, {env: {...process.env}})``)
is not a network call.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

from skillbook.security import patterns
from skillbook.security.document import MARKDOWN, Document
from skillbook.security.findings import Severity

#: Expressions that stand for the whole environment.
WHOLE_ENV = patterns.compile(
    r"\bprocess\.env\b(?!\s*(?:\.\s*[A-Za-z_$]|\[|\?\.|\s*=[^=>]))"
    r"|\bos\.environ\b(?!\s*(?:\[|\.(?:get|setdefault|pop|update|__\w+)\b|\s*=[^=]))"
    r"|\bDeno\.env\.toObject\s*\(|\bBun\.env\b(?!\s*(?:\.\s*[A-Za-z_$]|\[))"
    r"|\bos\.Environ\s*\(\s*\)|\bENV\.(?:to_h|to_hash|to_a|inspect|each\w*|map|select|keys)\b"
    r"|%ENV\b|\bgetenv\s*\(\s*\)|\$_ENV\b(?!\s*\[)|\bSystem\.getenv\s*\(\s*\)|\benv::vars\s*\("
    r"|\[Environment\]::GetEnvironmentVariables\s*\(\s*\)"
    r"|(?:Get-ChildItem|gci|ls|dir)\s+env:(?![\w$])"
    r"|\$\(\s*(?:env|printenv|export\s+-p|set)\s*[|)]|`\s*(?:env|printenv)\s*[|`]"
    r"|\b(?:execSync|execFileSync)\s*\(\s*[\"'](?:env|printenv|set)[\"']",
    re.I,
)
_MEMBERSHIP = patterns.compile(r"\bin\s+$")
_LOOP = patterns.compile(r"^\s*(?:for|async\s+for)\b|\bfor\s*\(|\bfor\b[^\n]*$")


#: Words one of which is in every WHOLE_ENV match (lower case), for the keyword index.
WORDS = ("process.env", "os.environ", "deno.env", "bun.env", "env.to_", "env.inspect",
         "env.each", "env.map", "env.select", "env.keys", "%env", "getenv()", "getenv( )",
         "$_env", "env::vars", "getenvironmentvariables", "gci env:", "get-childitem env:",
         "ls env:", "dir env:", "$(env", "$( env", "$(printenv", "$(export", "$(set", "`env",
         "`printenv", "execsync(", "execfilesync(")  # fmt: skip

#: Calls whose arguments go out over the network.
_CALL_SINK = patterns.compile(
    r"(?<!\w)(?:fetch|axios|got|request|superagent|needle|ky|urlopen|Request|sendBeacon"
    r"|gethostbyname|getaddrinfo|resolve4|lookup)\s*\("
    r"|\b(?:axios|got|ky|needle|requests|httpx|session|client|http|https|urllib3|aiohttp|\$)"
    r"\s*\.\s*(?:post|put|patch|get|request|ajax|delete|urlopen|fetch)\s*\("
    r"|->\s*(?:post|put|patch|get|request)\s*\("
    r"|\.\s*(?:post|put|patch|send|sendall|sendto|sendmail|write_message|emit|upload\w*|"
    r"UploadString|UploadData|UploadValues)\s*\("
    r"|\bhttp\.(?:Post|PostForm|Get|NewRequest)\s*\(|\bNet::HTTP\.\w+\s*\(|\bcurl_setopt\w*\s*\("
    r"|\bdns\.resolver\.(?:resolve|query)\s*\(|\bresolver\.(?:resolve|query)\s*\(",
)
#: Shell and PowerShell lines whose words go out over the network.
_LINE_SINK = patterns.compile(
    r"(?<![\w.-])(?:curl|wget|nc|ncat|netcat|socat|telnet|dig|nslookup|host|drill|ssh|scp"
    r"|Invoke-RestMethod|Invoke-WebRequest|irm|iwr|Send-MailMessage|mail|sendmail)(?![\w.=-])"
    r"|\bopenssl\s+s_client\b|/dev/(?:tcp|udp)/",
    re.I,
)
#: The same in other languages, where ``host``/``mail``/``ssh`` are ordinary words: the
#: network commands a script would run through ``system``/``subprocess``/``exec``.
_COMMAND_SINK = patterns.compile(
    r"(?<![\w.-])(?:curl|wget|ncat|netcat|socat|nslookup|Invoke-RestMethod|Invoke-WebRequest)"
    r"(?![\w.=-])",
    re.I,
)
_SHELL_EXT = (".sh", ".bash", ".zsh", ".ksh", ".fish", ".command", ".ps1", ".psm1", ".bat", ".cmd")
#: ``name = rhs`` (JS/TS/Python/PHP/Perl/shell), ``for names in rhs``/``for (… of rhs)``,
#: ``name.update(rhs)``, ``Object.assign(name, rhs)``.
# Possessive quantifiers and a word-start look-behind: without them the engine retried
# every suffix of every identifier (0.3 s on one 11 KB script).
_ASSIGN = patterns.compile(
    r"(?<![\w$@%])[$@%]?(?P<name>[A-Za-z_]\w*+)(?:[ \t]*+,[ \t]*+[A-Za-z_]\w*+)*+\s*+"
    r"(?::[ \t]*+[\w<>\[\], |.]{1,60}?)?(?:\+|\|\||:)?=(?![=>])"
)
_FOR = patterns.compile(
    r"\bfor\s*\(?\s*(?:const|let|var|my)?\s*(?P<names>[\[\]\w\s,()$]{1,80}?)\s+(?:in|of)\s+"
    r"|\bforeach\s*\(\s*(?P<php>[^)\n]*?)\s+as\s+(?P<phpnames>[$\w\s,=>]+)\)"
)
_UPDATE = patterns.compile(r"\b(?P<name>[A-Za-z_]\w*)\s*\.\s*(?:update|extend|push|append)\s*\("
                     r"|\bObject\.assign\s*\(\s*(?P<target>[A-Za-z_]\w*)")  # fmt: skip
_IDENT = patterns.compile(r"[A-Za-z_]\w*")
#: After a tainted name, a member that still means the whole value.
_WHOLE_MEMBERS = frozenset({"items", "copy", "keys", "values", "entries", "to_h", "to_a",
                            "inspect", "join", "encode", "tostring", "to_s", "json", "dumps",
                            "stringify", "decode", "map", "filter", "reduce"})  # fmt: skip
_ENCODE = patterns.compile(
    r"\b(?:base64|b64encode|btoa|encodebytes|hexlify|gzip|zlib\.compress|xxd|"
    r"toString\s*\(\s*[\"'](?:base64|hex)[\"'])\b",
    re.I,
)
_KEYWORDS_IGNORED = frozenset({"if", "while", "for", "return", "not", "and", "or", "in", "of",
                               "const", "let", "var", "true", "false", "none", "null"})  # fmt: skip
_MAX_ROUNDS = 4
_MAX_SPAN = 4000


def _statement_end(text: str, start: int, stop: int) -> int:
    """End of the statement starting at ``start``: its line, or further while brackets
    opened on it stay open (bounded)."""
    depth = 0
    pos = start
    limit = min(stop, start + _MAX_SPAN)
    while pos < limit:
        ch = text[pos]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth < 0:
                return pos
        elif ch == "\n" and depth <= 0:
            if pos > 0 and text[pos - 1] == "\\":
                pos += 1
                continue
            return pos
        pos += 1
    return limit


def _call_end(text: str, open_paren: int, stop: int) -> int:
    """Offset of the parenthesis that closes the one at ``open_paren`` (bounded)."""
    depth = 0
    limit = min(stop, open_paren + _MAX_SPAN)
    for pos in range(open_paren, limit):
        ch = text[pos]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return pos + 1
    return limit


def _uses(text: str, names: set[str], start: int, end: int) -> re.Match[str] | None:
    """The first use of a tainted name (as the whole value) between ``start`` and ``end``."""
    if not names:
        return None
    pattern = _use_pattern(frozenset(names))
    for m in pattern.finditer(text, start, end):
        member = m.group("member")
        if member is None or member.lower() in _WHOLE_MEMBERS:
            return m
    return None


_USE_CACHE: dict[frozenset[str], re.Pattern[str]] = {}


def _use_pattern(names: frozenset[str]) -> re.Pattern[str]:
    found = _USE_CACHE.get(names)
    if found is None:
        alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
        found = re.compile(
            rf"(?<![\w.])(?:{alternatives})\b(?!\s*(?:\[|=[^=]|:))(?:\s*\??\.\s*(?P<member>\w+))?"
        )
        if len(_USE_CACHE) > 256:
            _USE_CACHE.clear()
        _USE_CACHE[names] = found
    return found


class _Env:
    """Where the whole environment is read in one text (found once, on the lines the
    keyword index points at), asked by range."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        self.spans = spans
        self.starts = [a for a, _ in spans]

    def within(self, start: int, end: int) -> tuple[int, int] | None:
        index = bisect.bisect_left(self.starts, start)
        if index < len(self.spans) and self.spans[index][0] < end:
            return self.spans[index]
        return None


def _line_statement_end(text: str, start: int, stop: int) -> int:
    """:func:`_statement_end`, without the character loop when the line balances."""
    line_end = text.find("\n", start, stop)
    line_end = stop if line_end == -1 else line_end
    piece = text[start:line_end]
    opened = piece.count("(") + piece.count("[") + piece.count("{")
    closed = piece.count(")") + piece.count("]") + piece.count("}")
    if opened <= closed and not piece.endswith("\\"):
        return line_end
    return _statement_end(text, start, stop)


def _tainted(text: str, start: int, end: int, env: _Env) -> set[str]:
    """Names assigned (or looped over) from the whole environment, transitively."""
    # (targets, source start, source end), gathered once; the rounds only re-check them.
    sources: list[tuple[tuple[str, ...], int, int]] = []
    for m in _ASSIGN.finditer(text, start, end):
        name = m.group("name")
        if name.lower() not in _KEYWORDS_IGNORED:
            sources.append(((name,), m.end(), _line_statement_end(text, m.end(), end)))
    for m in _FOR.finditer(text, start, end):
        if m.group("php") is not None:
            sources.append(
                (tuple(_IDENT.findall(m.group("phpnames"))), m.start("php"), m.end("php"))
            )
        else:
            targets = tuple(n for n in _IDENT.findall(m.group("names"))
                            if n.lower() not in _KEYWORDS_IGNORED)  # fmt: skip
            sources.append((targets, m.end(), _line_statement_end(text, m.end(), end)))
    for m in _UPDATE.finditer(text, start, end):
        paren = text.find("(", m.start())
        sources.append(
            ((m.group("name") or m.group("target"),), paren, _call_end(text, paren, end))
        )
    names: set[str] = set()
    pending = sources
    for _ in range(_MAX_ROUNDS):
        left = []
        for targets, a, b in pending:
            if env.within(a, b) or _uses(text, names, a, b):
                names.update(targets)
            else:
                left.append((targets, a, b))
        if len(left) == len(pending):
            break
        pending = left
    return names


def flows(doc: Document) -> Iterator[tuple[int, int, str, Severity]]:
    """Every place the whole environment reaches a network call, in ``doc``."""
    text = doc.text
    spans = []
    for m in doc.finditer(WHOLE_ENV, WORDS, after=0):
        line_start = text.rfind("\n", 0, m.start()) + 1
        before = text[line_start : m.start()]
        # A membership test (``"X" in os.environ``) reads no value; a loop does.
        if not (_MEMBERSHIP.search(before) and not _LOOP.search(before)):
            spans.append((m.start(), m.end()))
    if not spans:
        return
    env = _Env(spans)
    shell = doc.name.lower().endswith(_SHELL_EXT) or (
        text.startswith("#!") and "sh" in doc.line_text(1).rsplit("/", 1)[-1]
    )
    if doc.kind == MARKDOWN:
        scopes = [doc.lines_span(f.start, f.end) for f in doc.fences() if f.end >= f.start]
        shell = True
    else:
        scopes = [(0, len(text))]
    for start, end in scopes:
        if env.within(start, end):
            yield from _flows_in(text, start, end, env, _LINE_SINK if shell else _COMMAND_SINK)


def _flows_in(
    text: str, start: int, end: int, env: _Env, line_sink: re.Pattern[str]
) -> Iterator[tuple[int, int, str, Severity]]:
    names = _tainted(text, start, end, env)
    reported: set[int] = set()
    for m in _CALL_SINK.finditer(text, start, end):
        paren = text.find("(", m.start(), m.end() + 1)
        call_end = _call_end(text, paren, end)
        if call_end in reported:
            continue
        direct = env.within(paren, call_end)
        via = None if direct else _uses(text, names, paren, call_end)
        if direct or via:
            reported.add(call_end)
            what = f"through {via.group(0).split('.')[0].strip()!r}" if via else "directly"
            yield (m.start(), paren + 1,
                   f"Sends the whole environment ({what}) in a network call",
                   Severity.CRITICAL)  # fmt: skip
    for m in line_sink.finditer(text, start, end):
        line_start = text.rfind("\n", 0, m.start()) + 1
        line_end = _line_statement_end(text, line_start, end)
        if line_end in reported:
            continue
        direct = env.within(line_start, line_end)
        via = None if direct else _uses(text, names, line_start, line_end)
        if direct or via:
            reported.add(line_end)
            yield (m.start(), m.end(),
                   f"Sends the whole environment ({'via ' + via.group(0) if via else 'directly'}) "
                   f"with {m.group(0)}", Severity.CRITICAL)  # fmt: skip
    if reported:
        return
    for a, _ in env.spans:
        if not start <= a < end:
            continue
        line_start = text.rfind("\n", 0, a) + 1
        if _ENCODE.search(text, line_start, _line_statement_end(text, a, end)):
            yield (a, a + 1, "Encodes the whole environment (nothing but hiding it needs that)",
                   Severity.HIGH)  # fmt: skip
            return
