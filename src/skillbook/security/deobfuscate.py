"""Undo the tricks that hide a command's words from pattern rules.

Input: a file's text. Output: a :class:`View` — the same text with the tricks undone,
line for line (no newline is added or removed, so a line number means the same line
in both), and the :class:`Trick` values found on the way. The scanner runs every rule
family again on the view, so ``cu''rl … | ba''sh`` is judged as ``curl … | bash``
without one pattern per spelling.

Tricks undone, in this order (each works on the output of the previous one):

- look-alike letters: NFKC (full-width ``ｃｕｒｌ``) and Unicode confusables (Cyrillic
  ``с``, Greek ``ο``) folded to Latin, in words that then read as plain ASCII;
- escaped characters: ``$'\\x63\\x75…'`` and runs of ``\\xNN``/``\\uNNNN`` escapes
  inside string literals, when they spell printable ASCII;
- quote-split and backslash-split words: ``cu''rl``, ``c"u"rl``, ``\\c\\u\\r\\l``;
- ``${IFS}`` used as a space;
- shell variables: ``a=cu; b=rl; $a$b`` becomes ``curl`` (values without expansions
  of their own, set on their own line or after ``;``/``&&``);
- string literals joined with ``+``: ``"cu" + "rl"``.

A trick that reveals a command name (``curl``, ``bash``, ``eval`` …) is reported by
the scanner as ``obfuscated-command``: no legitimate script spells its commands so.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import functools
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from skillbook.security import patterns
from skillbook.security.lookalike_table import LATIN

#: Command and function names whose hiding is itself a finding.
SENSITIVE = frozenset(
    {
        "curl", "wget", "bash", "sh", "zsh", "dash", "ksh", "nc", "ncat", "netcat", "socat",
        "telnet", "python", "python3", "perl", "ruby", "node", "php", "eval", "exec", "source",
        "base64", "xxd", "openssl", "chmod", "sudo", "osascript", "powershell", "pwsh", "iex",
        "invoke-expression", "invoke-webrequest", "crontab", "launchctl", "xattr", "spctl",
        "printenv", "env", "mkfifo", "scp", "rsync", "nohup", "gunzip", "zcat", "certutil",
        "mshta", "bitsadmin", "system", "popen", "subprocess", "child_process", "execsync",
        "spawn", "fetch", "urlopen", "requests", "atob", "b64decode", "function", "dev/tcp",
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Trick:
    """One undone trick: the 1-based line, what kind, and the words it revealed."""

    line: int
    kind: str
    revealed: str

    @property
    def hides_command(self) -> bool:
        if self.kind == IFS_TRICK:
            return True  # no script writes a space that way but to slip past filters
        return any(w in SENSITIVE for w in _WORDS.findall(self.revealed.lower()))


@dataclass(frozen=True, slots=True)
class View:
    text: str
    tricks: tuple[Trick, ...]


_WORDS = patterns.compile(r"[a-z0-9_/-]+")
IFS_TRICK = "${IFS} as a space"
#: Rewrites one line (its text and 1-based number), recording tricks.
LineRewrite = Callable[[str, int, list[Trick]], str]


def _by_line(
    text: str,
    cue: re.Pattern[str],
    rewrite: LineRewrite,
    tricks: list[Trick],
    accept: Callable[[str, re.Match[str]], bool] | None = None,
) -> str:
    """``text`` with every line that holds ``cue`` (and passes ``accept``) rewritten; the
    other lines are copied untouched, so a file that needs nothing costs one search."""
    out: list[str] = []
    done = 0
    line = 1

    def next_cue(pos: int) -> re.Match[str] | None:
        m = cue.search(text, pos)
        while m is not None and accept is not None and not accept(text, m):
            m = cue.search(text, m.end())
        return m

    m = next_cue(0)
    while m is not None:
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.end())
        end = len(text) if end == -1 else end
        line += text.count("\n", done, start)
        out.append(text[done:start])
        out.append(rewrite(text[start:end], line, tricks))
        done = end
        m = next_cue(end)
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


# --------------------------------------------------------------------------- look-alikes

#: Every word, once (a regex that looked for the non-ASCII letter inside the word
#: would backtrack quadratically on long words).
_WORD = patterns.compile(r"[^\W_]+")


def _latin(ch: str) -> str | None:
    """The ASCII letter or digit ``ch`` is confusable with, if any (one character: a
    look-alike of ``rn`` is not one of ``m``)."""
    glyph = LATIN.get(ch)
    return glyph if glyph is not None and len(glyph) == 1 else None


#: Blocks whose NFKC forms include ASCII letters and digits: Latin-1 (ª, ¹), super- and
#: subscripts, letterlike symbols, enclosed and full-width forms, mathematical letters.
_COMPATIBILITY_RANGES = ((0x80, 0x24F), (0x2070, 0x209F), (0x2100, 0x218F), (0x2460, 0x24FF),
                         (0xFF01, 0xFF5E), (0x1D400, 0x1D7FF), (0x1F100, 0x1F1FF))  # fmt: skip


@functools.lru_cache(maxsize=8192)
def _is_lookalike(ch: str) -> bool:
    """Whether ``ch`` reads as an ASCII letter or digit: a Unicode confusable (Cyrillic
    ``с``, Greek ``ο``) or an NFKC compatibility form (full-width ``ｃ``, mathematical
    ``𝐜``). Decided per character met: building the set of all of them costs a pass
    over the whole confusables table."""
    code = ord(ch)
    if any(first <= code <= last for first, last in _COMPATIBILITY_RANGES):
        folded = unicodedata.normalize("NFKC", ch)
        if folded != ch and folded.isascii() and folded.isalnum():
            return True
    return not ch.isascii() and _latin(ch) is not None


_NON_ASCII = patterns.compile(r"[^\x00-\x7f]")
_LOOKALIKE_SCRIPTS = frozenset({"LATIN", "CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE", "COPTIC",
                                "MATHEMATICAL", "FULLWIDTH", "MODIFIER", "SUBSCRIPT",
                                "SUPERSCRIPT", "CIRCLED", "PARENTHESIZED", "DOUBLE-STRUCK",
                                "SCRIPT", "BLACK-LETTER", "LISU", "OLD", "TIFINAGH", "NKO",
                                "VAI", "DESERET", "GOTHIC", "OSAGE", "SQUARED", "NEGATIVE",
                                "ROMAN", "SMALL", "TURNED", "DIGIT"})  # fmt: skip


@functools.lru_cache(maxsize=8192)
def _may_look_latin(ch: str) -> bool:
    if unicodedata.category(ch)[0] not in "LN":
        return False
    return unicodedata.name(ch, "").split(" ", 1)[0] in _LOOKALIKE_SCRIPTS


def _fold_word(word: str) -> str | None:
    folded = unicodedata.normalize("NFKC", word)
    out = []
    for ch in folded:
        if ch.isascii():
            out.append(ch)
            continue
        latin = _latin(ch)
        if latin is None:
            return None  # a real word of another script, not a disguise
        out.append(latin)
    return "".join(out)


def _fold_line(line: str, number: int, tricks: list[Trick]) -> str:
    def repl(m: re.Match[str]) -> str:
        word = m.group(0)
        if word.isascii():
            return word
        folded = _fold_word(word)
        if folded is None or folded == word or "\n" in folded:
            return word
        tricks.append(Trick(number, "look-alike letters", folded))
        return folded

    return _WORD.sub(repl, line)


def fold_lookalikes(text: str, tricks: list[Trick], non_ascii: frozenset[str] | None = None) -> str:
    """``non_ascii``: the text's distinct non-ASCII characters, if the caller has them."""
    if text.isascii():
        return text
    if non_ascii is None:
        non_ascii = frozenset(_NON_ASCII.findall(text))
    # Most non-ASCII text (emoji, CJK, typography) has no Latin look-alike: find the
    # characters that do, once per distinct character, and touch only their lines.
    candidates = {ch for ch in non_ascii if _may_look_latin(ch)}
    if not candidates:
        return text  # CJK, emoji, typography: no look-alike to look up
    suspects = sorted(ch for ch in candidates if _is_lookalike(ch))
    if not suspects:
        return text
    return _by_line(text, re.compile("[" + re.escape("".join(suspects)) + "]"), _fold_line, tricks)


# --------------------------------------------------------------------------- escapes

_ANSI_C = patterns.compile(r"\$'((?:\\(?:x[0-9a-fA-F]{1,2}|[0-7]{1,3})|[^'\\\n])*)'")
_ESCAPE_RUN = patterns.compile(r"(?:\\x[0-9a-fA-F]{2}|\\u00[0-9a-fA-F]{2}|\\[0-7]{3}){3,}")
_ONE_ESCAPE = patterns.compile(r"\\x([0-9a-fA-F]{1,2})|\\u00([0-9a-fA-F]{2})|\\([0-7]{1,3})")
_ONE = r"(?:x[0-9a-fA-F]{2}|u00[0-9a-fA-F]{2}|[0-7]{3})"
# Starts with a literal character class so that the engine skips ahead (see _SPLIT_CUE).
_ESCAPE_CUE = patterns.compile(rf"[$\\](?:(?<=\$)'\\|(?<=\\){_ONE}\\{_ONE}\\{_ONE})")


def _unescape(run: str) -> str | None:
    def one(m: re.Match[str]) -> str:
        if m.group(1) is not None:
            return chr(int(m.group(1), 16))
        if m.group(2) is not None:
            return chr(int(m.group(2), 16))
        return chr(int(m.group(3), 8) & 0xFF)

    out = _ONE_ESCAPE.sub(one, run)
    # Only printable ASCII: escapes of binary data are data, not a disguise.
    return out if all(" " <= c <= "~" for c in out) else None


def _unescape_line(line: str, number: int, tricks: list[Trick]) -> str:
    def ansi(m: re.Match[str]) -> str:
        out = _unescape(m.group(1)) if "\\" in m.group(1) else None
        if out is None or "'" in out:
            return m.group(0)
        tricks.append(Trick(number, "escaped characters", out))
        return "'" + out + "'"

    def run(m: re.Match[str]) -> str:
        out = _unescape(m.group(0))
        if out is None or any(q in out for q in "\"'`\\"):
            return m.group(0)
        tricks.append(Trick(number, "escaped characters", out))
        return out

    return _ESCAPE_RUN.sub(run, _ANSI_C.sub(ansi, line))


#: The second branch of :data:`_ESCAPE_CUE` alone, starting with a literal backslash: the
#: engine jumps from one backslash to the next, where the cue's leading class stopped at
#: every ``$`` as well. With ``$'\\`` looked up as a substring, it tells in a quarter of
#: the time whether the cue occurs at all (most files with a backslash hold no escape run).
_ESCAPE_RUN_CUE = patterns.compile(rf"\\{_ONE}\\{_ONE}\\{_ONE}")


def unescape(text: str, tricks: list[Trick]) -> str:
    if "\\" not in text or ("$'\\" not in text and not _ESCAPE_RUN_CUE.search(text)):
        return text
    return _by_line(text, _ESCAPE_CUE, _unescape_line, tricks)


# --------------------------------------------------------------------------- split words

# Possessive and atomic: a long word that fails the test must not be retried piecewise.
_PART = r"(?>[A-Za-z0-9_.-]++|''|\"\"|'[A-Za-z0-9_.-]++'|\"[A-Za-z0-9_.-]++\"|\\[A-Za-z])"
#: A word of two or more parts, at least one of them quotes or a backslash-escaped letter.
_SPLIT_WORD = patterns.compile(rf"(?<![\w'\"\\$])(?>{_PART}{{2,}})(?![\w'\"])")


#: Quotes inside a word (``cu''rl``, ``c"u"rl``, ``"cu"rl``) or escaped letters (``\c\u``).
# Every branch starts at a quote or a backslash, so the engine skips ahead to those; a
# leading ``\w`` or look-behind would make it try every offset (3 s over the corpus).
# A quoted piece counts when glued to a letter (``c"u"rl``, ``cu"rl"``) but not after a
# string prefix (``f"x"``, ``rb'x'``).
def _quoted_branch(q: str) -> str:
    return (
        rf"(?<={q})(?:{q}(?<=\w{q}{q})(?=\w)|\w+{q}(?=\w)"
        rf"|(?<=\w{q})(?<!\b[fbruFBRU]{q})(?<!\b[fbrFBR]{{2}}{q})\w+{q})"
    )


_SQ, _DQ = _quoted_branch("'"), _quoted_branch('"')
_SPLIT_CUE = patterns.compile(
    rf"[\\'\"](?:(?<=\\)[a-z]\\[a-z]|(?<=[a-z]\\)[a-z]|{_SQ}|{_DQ})", re.I
)


def _join_line(line: str, number: int, tricks: list[Trick]) -> str:
    def repl(m: re.Match[str]) -> str:
        word = m.group(0)
        if not any(c in word for c in "'\"\\"):
            return word
        joined = word.replace("'", "").replace('"', "")
        joined = re.sub(r"\\([A-Za-z])", r"\1", joined)
        if not joined:
            return word
        inner_only = not any(c in word for c in "'\"") and not word.startswith("\\")
        if inner_only and joined.lower() not in SENSITIVE:
            # An escaped letter inside a word (``c\\url``) is also how strings spell
            # ``\\n``/``\\t``: only a word that then reads as a command counts.
            return word
        tricks.append(Trick(number, "quote-split word", joined))
        return joined

    return _SPLIT_WORD.sub(repl, line)


def join_split_words(text: str, tricks: list[Trick]) -> str:
    return _by_line(text, _SPLIT_CUE, _join_line, tricks)


# --------------------------------------------------------------------------- ${IFS}

_IFS = patterns.compile(r"(?<=\S)\$(?:\{IFS\}|IFS\b)(?=\S)")


def _ifs_line(line: str, number: int, tricks: list[Trick]) -> str:
    tricks.append(Trick(number, IFS_TRICK, "a space"))
    return _IFS.sub(" ", line)


def replace_ifs(text: str, tricks: list[Trick]) -> str:
    # Every match holds ``$IFS`` or ``${IFS}``; the pattern, led by a look-behind, would
    # try every offset of a text that merely says "IFS".
    if "$IFS" not in text and "${IFS}" not in text:
        return text
    return _by_line(text, _IFS, _ifs_line, tricks)


# --------------------------------------------------------------------------- shell variables

#: The value of ``NAME=`` (quoted, or a bare word without expansions of its own).
_VALUE = patterns.compile(
    r"'(?P<sq>[^'\n]*)'|\"(?P<dq>[^\"\n$`\\]*)\"|(?P<bare>[^\s;&|'\"$`\\()<>]*)(?=\s|;|&|$)"
)
_REFERENCE = patterns.compile(r"\$\{?([A-Za-z_]\w*)")
_ASSIGN_LEAD = patterns.compile(r"(?:^|[;&]|\bexport|\blocal|\breadonly)\s*$")


def _assignments(text: str, names: set[str] | None = None) -> dict[str, str]:
    """``NAME=value`` for every NAME the text expands (or of ``names``; found by name: a
    regex that tried every offset for an assignment costs more than the rest of the scan)."""
    values: dict[str, str] = {}
    for name in set(_REFERENCE.findall(text)) if names is None else names:
        needle = name + "="
        pos = text.find(needle)
        while pos != -1:
            line_start = text.rfind("\n", 0, pos) + 1
            lead = text[max(line_start, pos - 40) : pos]
            before_ok = pos == 0 or not (text[pos - 1].isalnum() or text[pos - 1] in "_$")
            if before_ok and _ASSIGN_LEAD.search(lead):
                m = _VALUE.match(text, pos + len(needle))
                if m:
                    value = m.group("sq") if m.group("sq") is not None else m.group("dq")
                    value = m.group("bare") or "" if value is None else value
                    if len(value) <= 400:
                        values[name] = value
            pos = text.find(needle, pos + 1)
    return values


_EXPANSION = patterns.compile(r"\$(?:\{(?P<braced>[A-Za-z_]\w*)\}|(?P<plain>[A-Za-z_]\w*))")
#: A run of pieces glued together that holds at least one expansion.
_GLUED = patterns.compile(
    r"[A-Za-z0-9_./-]*+(?:(?:\$\{[A-Za-z_]\w*\}|\$[A-Za-z_]\w*+)[A-Za-z0-9_./-]*+)++"
)
_GLUED_PARTS = patterns.compile(r"\$\{[A-Za-z_]\w*\}|\$[A-Za-z_]\w*|[A-Za-z0-9_./-]+")


#: Bash's indirection: ``${!c}`` expands the variable whose name ``c`` holds.
_INDIRECT = patterns.compile(r"\$\{!([A-Za-z_]\w*)\}")
_NAME = patterns.compile(r"[A-Za-z_]\w*")


def _resolve_indirection(text: str, tricks: list[Trick]) -> str:
    """``c=f; f=curl; ${!c}`` -> ``${f}``: only a name set in the same text to a name."""
    pointers = _assignments(text, set(_INDIRECT.findall(text)))
    targets = {k: v for k, v in pointers.items() if _NAME.fullmatch(v)}
    if not targets:
        return text
    # What the trick reveals is the value reached, not the name in between.
    reached = _assignments(text, set(targets.values()))

    def rewrite(line: str, number: int, found: list[Trick]) -> str:
        def repl(m: re.Match[str]) -> str:
            target = targets.get(m.group(1))
            if target is None:
                return m.group(0)
            found.append(Trick(number, "variable indirection", reached.get(target, target)))
            return "${" + target + "}"

        return _INDIRECT.sub(repl, line)

    return _by_line(text, _INDIRECT, rewrite, tricks)


def expand_variables(text: str, tricks: list[Trick]) -> str:
    if "$" not in text or "=" not in text:
        return text
    if "${!" in text:
        text = _resolve_indirection(text, tricks)
    values = _assignments(text)
    if not values:
        return text
    names = "|".join(re.escape(n) for n in sorted(values, key=len, reverse=True))
    cue = re.compile(rf"\$(?:\{{(?:{names})\}}|(?:{names})(?!\w))")

    def expand(m: re.Match[str]) -> str:
        return values.get(m.group("braced") or m.group("plain"), m.group(0))

    def rewrite(line: str, number: int, found: list[Trick]) -> str:
        def glued(m: re.Match[str]) -> str:
            parts = [_EXPANSION.sub(expand, part) for part in _GLUED_PARTS.findall(m.group(0))]
            out = "".join(parts)
            if len(parts) >= 2:
                # ``$a$b`` spelling ``curl`` where no single piece does: built to hide.
                single = {w for part in parts for w in _WORDS.findall(part.lower())}
                hidden = {w for w in _WORDS.findall(out.lower()) if w in SENSITIVE} - single
                if hidden:
                    found.append(Trick(number, "word assembled from variables",
                                       " ".join(sorted(hidden))))  # fmt: skip
            return out

        return _GLUED.sub(glued, line)

    return _by_line(text, cue, rewrite, tricks)


# --------------------------------------------------------------------------- string concatenation

_CONCAT = patterns.compile(
    r"(['\"])([^'\"\n\\]{0,200})\1[ \t]*\+[ \t]*(['\"])([^'\"\n\\]{0,200})\3"
)


#: Where two literals meet: ``'…' + '…'``. Found from the ``+`` (a literal the engine
#: jumps to) with the quote before it checked by :func:`_quote_before`: led by the quote,
#: the pattern stopped at every quote of the text (7× the time over the corpus).
_CONCAT_CUE = patterns.compile(r"\+[ \t]*['\"]")


def _quote_before(text: str, m: re.Match[str]) -> bool:
    """Whether a quote stands before the ``+`` of ``m``, past spaces and tabs only."""
    at = m.start() - 1
    while at >= 0 and text[at] in " \t":
        at -= 1
    return at >= 0 and text[at] in "'\""


def _concat_line(line: str, number: int, tricks: list[Trick]) -> str:
    out = line
    for _ in range(16):  # "c" + "u" + "r" + "l": each pass joins neighbours
        joined = _CONCAT.sub(lambda m: m.group(1) + m.group(2) + m.group(4) + m.group(1), out)
        if joined == out:
            break
        out = joined
    # Words that only exist once the pieces are joined.
    fresh = set(_WORDS.findall(out.lower())) - set(_WORDS.findall(line.lower()))
    if fresh & SENSITIVE:
        tricks.append(
            Trick(number, "string split into pieces", " ".join(sorted(fresh & SENSITIVE)))
        )
    return out


def join_literals(text: str, tricks: list[Trick]) -> str:
    if "+" not in text:
        return text
    return _by_line(text, _CONCAT_CUE, _concat_line, tricks, _quote_before)


# --------------------------------------------------------------------------- run-time decoding

_INTS = r"(?:\d{1,3}(?:\s*,\s*\d{1,3}){1,200})"
#: Text built from character codes, in every language's idiom: ``String.fromCharCode(…)``,
#: ``"".join(chr(c) for c in […])``, ``''.join(map(chr, […]))``, ``bytes([…]).decode()``,
#: PowerShell ``-join [char[]](…)``; and ``chr(99) + chr(117)`` / ``[char]99 + [char]117``.
_CHAR_CODES = patterns.compile(
    rf"\bString\.fromCharCode\s*\(\s*{_INTS}\s*\)"
    rf"|(?P<q>['\"])(?P=q)\.join\s*\(\s*(?:\(?\s*chr\s*\(\s*\w+\s*\)\s+for\s+\w+\s+in\s+|map\s*\(\s*chr\s*,\s*)"
    rf"[\[(]\s*{_INTS}\s*[\])]\s*\)?\s*\)"
    rf"|\b(?:bytes|bytearray)\s*\(\s*\[\s*{_INTS}\s*\]\s*\)\s*\.decode\s*\(\s*\)"
    rf"|-join\s*\(?\s*\[char\[\]\]\s*\(\s*{_INTS}\s*\)\s*\)?"
    r"|(?P<chain>(?:\bchr\s*\(\s*\d{1,3}\s*\)|\[char\]\s*\d{1,3})"
    r"(?:\s*[+.]\s*(?:\bchr\s*\(\s*\d{1,3}\s*\)|\[char\]\s*\d{1,3})){1,200})",
    re.I,
)


def _literal(n: int) -> str:
    return rf"(?P<q{n}>['\"])(?P<data{n}>[A-Za-z0-9+/=]{{4,8000}})(?P=q{n})"


#: Stored text decoded in place: Perl ``pack("H*", "…")``, Ruby ``"…".unpack1("m")`` /
#: ``unpack("m")``, Node ``Buffer.from("…", "hex"|"base64").toString()``.
_LITERAL_DECODE = patterns.compile(
    rf"\bpack\s*\(?\s*['\"]H\*['\"]\s*,\s*{_literal(1)}\s*\)?"
    rf"|{_literal(2)}\.unpack1?\s*\(?\s*['\"]m0?['\"]\s*\)?(?:\s*\[0\]|\.first)?"
    rf"|\bBuffer\.from\s*\(\s*{_literal(3)}\s*,\s*['\"](?P<enc>hex|base64)['\"]\s*\)\s*\.toString\s*\(\s*\)",
)
#: A shell substitution that decodes a literal: ``$(echo Y3VybA== | base64 -d)``,
#: ``\`echo lruc | rev\```, ``$(echo 6375726c | xxd -r -p)``.
_SUBST_DECODE = patterns.compile(
    r"(?:\$\(|`)\s*(?:echo|printf)\s+(?:-[ne]+\s+)?(?:(?P<q>['\"]?)(?P<data>[A-Za-z0-9+/=._-]{1,4000})(?P=q)"
    # Reversed or rot13 text is a whole command line, spaces and all: quoted.
    r"|'(?P<sq>[^'\n]{1,4000})'|\"(?P<dq>[^\"\n$`\\]{1,4000})\")"
    r"\s*\|\s*(?P<dec>base64\s+(?:-d|-D|--decode)|base32\s+(?:-d|--decode)"
    r"|xxd\s+(?:-r\s+-p|-p\s+-r|-rp|-pr)|rev"
    r"|tr\s+(?P<tq>['\"]?)A-Za-z(?P=tq)\s+(?P<tq2>['\"]?)N-ZA-Mn-za-m(?P=tq2))\s*(?:\)|`)"
)
#: ``$(printf …)`` with literal arguments: ``$(printf 'cu')$(printf 'rl')``,
#: ``$(printf '\143\165\162\154')``, ``$(printf '%s' c u r l)``.
_PRINTF_SUBST = patterns.compile(
    r"\$\(\s*printf\s+(?P<args>(?:'[^'\n]*'|\"[^\"\n$`]*\"|[^\s'\"$`()|;&]+)"
    r"(?:\s+(?:'[^'\n]*'|\"[^\"\n$`]*\"|[^\s'\"$`()|;&]+)){0,60})\s*\)"
)
_PRINTF_ARG = patterns.compile(r"'([^'\n]*)'|\"([^\"\n]*)\"|(\S+)")


def _printable_text(raw: bytes) -> str | None:
    try:
        out = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return out if out and all(" " <= c <= "~" for c in out) else None


def _quoted(text: str) -> str | None:
    for q in ('"', "'"):
        if q not in text and "\\" not in text:
            return q + text + q
    return None


def _codes(m: re.Match[str]) -> str | None:
    values = re.findall(r"(?<![\w.])\d+", m.group(0))
    codes = [int(v) for v in values]
    if not codes or any(c > 255 for c in codes):
        return None
    return _printable_text(bytes(codes))


def _decode_literal(m: re.Match[str]) -> str | None:
    data = m.group("data1") or m.group("data2") or m.group("data3")
    hexed = m.group("data1") is not None or m.group("enc") == "hex"
    try:
        raw = bytes.fromhex(data) if hexed else base64.b64decode(data, validate=True)
    except (ValueError, binascii.Error):
        return None
    return _printable_text(raw)


def _decode_subst(m: re.Match[str]) -> str | None:
    dec = m.group("dec")
    data = m.group("data")
    if data is None:
        # A whole command line decoded is followed only into a variable (``X=$(…)``, then
        # ``bash -c "$X"``): run in place (``eval "$(…)"``), ``encoded-exec`` judges it.
        if not m.string[: m.start()].rstrip("\"'").endswith("="):
            return None
        data = m.group("sq") if m.group("sq") is not None else m.group("dq")
    try:
        if dec.startswith("tr"):
            raw = codecs.encode(data, "rot13").encode()
        elif dec.startswith("base64"):
            raw = base64.b64decode(data, validate=True)
        elif dec.startswith("base32"):
            raw = base64.b32decode(data)
        elif dec.startswith("xxd"):
            raw = bytes.fromhex(data)
        else:
            raw = data[::-1].encode()
    except (ValueError, binascii.Error):
        return None
    return _printable_text(raw)


def _printf(m: re.Match[str]) -> str | None:
    args = [a or b or c or "" for a, b, c in _PRINTF_ARG.findall(m.group("args"))]
    fmt, rest = args[0], args[1:]
    if not rest:
        if "%" in fmt.replace("%%", ""):
            return None
        out = fmt.replace("%%", "%")
    elif re.fullmatch(r"(?:%[sb])+", fmt):
        out = "".join(rest)
    else:
        return None
    out = _ONE_ESCAPE.sub(
        lambda e: chr(
            int(e.group(1), 16)
            if e.group(1)
            else int(e.group(2), 16)
            if e.group(2)
            else int(e.group(3), 8) & 0xFF
        ),
        out,
    )
    return out if out and all(" " <= c <= "~" for c in out) else None


def _decode_line(line: str, number: int, tricks: list[Trick]) -> str:
    def sub(
        regex: re.Pattern[str],
        decode: Callable[[re.Match[str]], str | None],
        kind: str,
        *,
        bare: bool,
    ) -> Callable[[str], str]:
        def repl(m: re.Match[str]) -> str:
            out = decode(m)
            if out is None:
                return m.group(0)
            # A bare word stays bare (``$(printf cu)$(printf rl)`` glues into ``curl``).
            text = out if bare and re.fullmatch(r"[\w./-]+", out) else _quoted(out)
            if text is None:
                return m.group(0)
            tricks.append(Trick(number, kind, out))
            return text

        return lambda s: regex.sub(repl, s)

    out = line
    lower = line.lower()
    # Each rewrite only where its words are: a minified bundle is one long line.
    for needles, step in (
        (
            ("charcode", "chr", "char]", "char[", "bytes", "bytearray"),
            sub(_CHAR_CODES, _codes, "text built from character codes", bare=False),
        ),
        (
            ("pack", "buffer.from"),
            sub(_LITERAL_DECODE, _decode_literal, "text decoded at run time", bare=False),
        ),
        (
            ("base64", "base32", "xxd", "rev", "tr "),
            sub(_SUBST_DECODE, _decode_subst, "text decoded at run time", bare=True),
        ),
        (("printf",), sub(_PRINTF_SUBST, _printf, "text printed by printf", bare=True)),
    ):
        if any(n in lower for n in needles):
            out = step(out)
    # Pieces that spell a command only once glued (``$(printf cu)$(printf rl)``).
    fresh = set(_WORDS.findall(out.lower())) - set(_WORDS.findall(line.lower()))
    if fresh & SENSITIVE and not any(t.hides_command for t in tricks if t.line == number):
        tricks.append(Trick(number, "text built at run time", " ".join(sorted(fresh & SENSITIVE))))
    return out


#: Per kind of run-time text: the lower-case words the keyword pass looks for, and the
#: cue of the lines to rewrite. Only the cues whose words occur are searched (a combined
#: cue over every file cost 0.5 s over the corpus).
_RUNTIME_CUES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("fromcharcode", "chr(", "chr (", "[char]", "[char[", "bytes([", "bytearray("),
     r"fromCharCode|[Cc]hr\s*\(|CHR\s*\(|bytes\s*\(\s*\[|bytearray\s*\(|\[[Cc]har[\]\[]"),
    (("pack(", "pack (", "unpack", "buffer.from"),
     r"pack\s*\(|unpack1?\s*\(?\s*['\"]m|Buffer\.from"),
    (("$(printf", "$( printf"), r"\$\(\s*printf"),
    (("| base64", "|base64", "| base32", "|base32", "| xxd", "|xxd", "| rev", "|rev", "| tr ", "|tr "),
     r"[$`](?:(?<=\$)\(|(?<=`))\s*(?:echo|printf)[^\n]{0,4000}?\|\s*(?:base(?:64|32)|xxd|rev|tr\s)"),
)  # fmt: skip


@functools.lru_cache(maxsize=16)
def _runtime_cue(kinds: tuple[int, ...]) -> re.Pattern[str]:
    return re.compile("|".join(_RUNTIME_CUES[k][1] for k in kinds))


def decode_runtime(text: str, tricks: list[Trick], present: frozenset[str] | None = None) -> str:
    """Text a script builds at run time from literals: character codes, hex/base64
    literals decoded in place, and shell substitutions that decode or ``printf`` them.
    ``present``: the :data:`RUNTIME_WORDS` the caller found in the text (all if None)."""
    if present is None:
        present = frozenset(w for w in RUNTIME_WORDS if w in text.lower())
    kinds = tuple(k for k, (words, _) in enumerate(_RUNTIME_CUES) if present & set(words))
    if not kinds:
        return text
    return _by_line(text, _runtime_cue(kinds), _decode_line, tricks)


# --------------------------------------------------------------------------- glob paths

#: Where the commands worth hiding live; a glob path is tried against these.
_BIN_DIRS = ("/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/opt/homebrew/bin")
_BIN_NAMES = ("curl", "wget", "bash", "sh", "zsh", "dash", "ksh", "nc", "ncat", "netcat",
              "socat", "telnet", "python", "python3", "perl", "ruby", "node", "php", "base64",
              "xxd", "openssl", "osascript", "chmod", "sudo", "crontab", "launchctl", "xattr",
              "env", "printenv", "scp", "rsync", "nohup")  # fmt: skip
# A whole path token from its first ``/``, possessive and with a literal start (a
# leading look-behind made the engine try every offset of every line), and only one
# that holds a glob character: the others are left as they are anyway, and a line of
# a minified bundle holds thousands of them. (A token without one fails here at every
# ``/`` of it, as every suffix of it lacks one too.)
_GLOB_TOKEN = patterns.compile(r"/(?=[\w./\]-]*+[?*\[])[\w?*\[\]/.-]*+")
# One path segment then a glob character: a literal start and no backtracking across
# segments (a run over the whole path from every ``/`` cost 0.2 s over the corpus).
_GLOB_CUE = patterns.compile(r"/[\w.-]*+[?*\[]")


@functools.cache
def _bin_paths() -> tuple[str, ...]:
    return tuple(f"{d}/{n}" for d in _BIN_DIRS for n in _BIN_NAMES)


@functools.cache
def _bin_segments() -> dict[int, tuple[frozenset[str], ...]]:
    """Per number of ``/``-separated segments: the texts each segment of a binary path
    of that length can have."""
    by_count: dict[int, list[set[str]]] = {}
    for path in _bin_paths():
        pieces = path.split("/")
        slots = by_count.setdefault(len(pieces), [set() for _ in pieces])
        for slot, piece in zip(slots, pieces, strict=True):
            slot.add(piece)
    return {n: tuple(frozenset(slot) for slot in slots) for n, slots in by_count.items()}


def _segments_may_match(pattern: str) -> bool:
    """Whether binary paths have as many segments as ``pattern``, with each of its
    segments that holds no glob character among theirs. A filter that never rejects a
    match: without a negated class (``[!…]``) no part of a glob matches a ``/``, so the
    segments align, and a segment without a glob character matches only itself."""
    pieces = pattern.split("/")
    slots = _bin_segments().get(len(pieces))
    if slots is None:
        return False
    return all(
        p in slot or "?" in p or "*" in p or "[" in p for p, slot in zip(pieces, slots, strict=True)
    )


@functools.lru_cache(maxsize=1024)
def _glob_target(pattern: str) -> str | None:
    """The one known binary path ``pattern`` matches (``/???/???/c?rl`` → ``/usr/bin/curl``)."""
    if "**" in pattern or len(pattern) > 60:
        return None
    if "[!" not in pattern and not _segments_may_match(pattern):
        return None  # most globs are paths of a project (``/api/*``): no regex for them
    parts = []
    for piece in re.findall(r"\[!?[^\]/]+\]|.", pattern):
        if piece.startswith("[") and len(piece) > 1:
            body = piece[1:-1]
            parts.append(
                "[^" + re.escape(body[1:]).replace("\\-", "-") + "]"
                if body[0] == "!"
                else "[" + re.escape(body).replace("\\-", "-") + "]"
            )
        else:
            parts.append({"?": "[^/]", "*": "[^/]*"}.get(piece, re.escape(piece)))
    regex = "".join(parts)
    try:
        compiled = re.compile(regex + r"\Z")
    except re.error:
        return None
    names = {p.rsplit("/", 1)[1] for p in _bin_paths() if compiled.match(p)}
    if len(names) != 1:
        return None  # ``/bin/*`` is a listing, not a disguise
    return next(p for p in _bin_paths() if compiled.match(p))


def _glob_line(line: str, number: int, tricks: list[Trick]) -> str:
    def repl(m: re.Match[str]) -> str:
        token = m.group(0)
        before = line[m.start() - 1] if m.start() else " "
        if before.isalnum() or before in "_.$~-" or not any(c in token for c in "?*["):
            return token  # the tail of a longer path or a URL, not a command path
        if len(token) > 40 or token.count("/") > 4:
            return token  # longer than any binary's path: not worth a regex
        target = _glob_target(token)
        if target is None:
            return m.group(0)
        tricks.append(Trick(number, "glob path", target.rsplit("/", 1)[1]))
        return target

    return _GLOB_TOKEN.sub(repl, line)


def expand_globs(text: str, tricks: list[Trick]) -> str:
    if "?" not in text and "*" not in text and "[" not in text:
        return text
    return _by_line(text, _GLOB_CUE, _glob_line, tricks)


_STAGES = (fold_lookalikes, decode_runtime, unescape, join_split_words, replace_ifs,
           expand_globs, expand_variables, join_literals)  # fmt: skip


#: Lower-case words one of which is on every line :func:`decode_runtime` rewrites: the
#: scanner's keyword pass finds them, so a file without any skips that stage's regexes.
RUNTIME_WORDS = tuple(w for words, _ in _RUNTIME_CUES for w in words)


def may_change(text: str, runtime: frozenset[str]) -> bool:
    """Whether any stage of :func:`view` can change ``text`` or find a trick in it: the
    stages' own first tests, side by side (``runtime``: the :data:`RUNTIME_WORDS` that
    occur). When none holds, every stage hands the text on untouched, so the caller can
    skip the view. Quotes (split words) are in most files; the others are rarer."""
    return bool(
        runtime
        or not text.isascii()
        or "'" in text
        or '"' in text
        or "\\" in text
        or "+" in text
        or "?" in text
        or "*" in text
        or "[" in text
        or "IFS" in text
        or ("$" in text and "=" in text)
    )


def view(
    text: str, *, runtime: frozenset[str] | None = None, non_ascii: frozenset[str] | None = None
) -> View:
    """``text`` with every trick above undone, and the tricks found. ``runtime``: the
    :data:`RUNTIME_WORDS` that occur in ``text``, and ``non_ascii``: its distinct
    non-ASCII characters, if the caller knows them."""
    tricks: list[Trick] = []
    out = text
    for stage in _STAGES:
        if stage is decode_runtime:
            out = decode_runtime(out, tricks, runtime)
        elif stage is fold_lookalikes:
            out = fold_lookalikes(out, tricks, non_ascii if out is text else None)
        else:
            out = stage(out, tricks)
    if out.count("\n") != text.count("\n"):  # a stage must keep lines; never trust one that did not
        return View(text, ())
    return View(out, tuple(tricks))
