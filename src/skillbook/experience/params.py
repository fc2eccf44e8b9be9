"""The values of a run that vary between runs of the same task, as named parameters.

Input: the user's request and the commands the run executed. Output:
:class:`Parameter` values, and commands with each value replaced by ``${name}`` in a way
the shell reads correctly (:func:`substitute`).

A value of the request is a parameter when it also appears in a command, as a whole
word. The values looked for, in this order:

* quoted text (``"…"``, ``'…'``, ```…```, ``“…”``);
* URLs and e-mail addresses;
* paths (starting with ``/``, ``~/``, ``./`` or ``../``, or holding a ``/``) and file
  names with an extension (``report.txt``);
* numbers;
* capitalised words that do not start a sentence (``Lisbon``, ``New York``).

A parameter is named after the word before it in the request when that word says what
it is: for a number any word (``top 3`` → ``top``), for other values a noun of
:data:`NAMING_NOUNS` (``city Lisbon`` → ``city``, ``branch main`` → ``branch``); else
after its kind (``path``, ``file``, ``url``, ``number``, ``text``, ``name``). Repeats
get ``_2``, ``_3``.
Nothing here does I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from skillbook.experience._words import STOPWORDS

__all__ = ["Parameter", "candidate_values", "extract_parameters", "find_value", "substitute"]

#: Words that name the value after them (``the file notes.txt``, ``city Lisbon``).
_NOUNS: Final = """file files folder dir directory path city country town place url site page
repo repository branch user username name project package host server port id tag version
query term word phrase title email address topic channel language key label account table
database db container image service region zone bucket"""
NAMING_NOUNS: Final = frozenset(_NOUNS.split())
_QUOTED: Final = re.compile(r'"([^"\n]+)"|\'([^\'\n]+)\'|`([^`\n]+)`|“([^”\n]+)”')
_URL: Final = re.compile(r"\bhttps?://[^\s\"'<>]+")
_EMAIL: Final = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_PATH: Final = re.compile(r"(?<![\w/])(?:~|\.{1,2})?/[^\s\"'`,;]+|(?<![\w/.-])[\w.-]+/[\w./-]+")
_FILE: Final = re.compile(r"(?<![\w/.-])[\w-]+(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,7}\b")
_NUMBER: Final = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.]*\w)")
_PROPER: Final = re.compile(r"\b[A-Z][a-z]+(?:[ -][A-Z][a-z]+)*\b")
_WORD: Final = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
#: Characters that would break the quoting of a substituted value: kept literal.
_UNSAFE: Final = frozenset("'\"\\$`\n")
_NAME_RE: Final = re.compile(r"[^a-z0-9_]+")


@dataclass(frozen=True, slots=True)
class Parameter:
    """A named input of a procedure and the value it had in a run."""

    name: str
    value: str
    kind: str

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "value": self.value, "kind": self.kind}


def candidate_values(request: str) -> list[tuple[str, str, int]]:
    """``(value, kind, position)`` for every value of the request that may vary."""
    found: list[tuple[str, str, int]] = []
    taken: list[tuple[int, int]] = []

    def add(value: str, kind: str, start: int, end: int) -> None:
        value = value.strip().rstrip(".,;:!?)")
        if not value or any(s < end and start < e for s, e in taken):
            return
        taken.append((start, end))
        found.append((value, kind, start))

    for m in _QUOTED.finditer(request):
        value = next(g for g in m.groups() if g is not None)
        add(value, _kind_of_text(value), m.start(), m.end())
    for m in _URL.finditer(request):
        add(m.group(), "url", m.start(), m.end())
    for m in _EMAIL.finditer(request):
        add(m.group(), "text", m.start(), m.end())
    for m in _PATH.finditer(request):
        add(m.group(), _kind_of_text(m.group()), m.start(), m.end())
    for m in _FILE.finditer(request):
        add(m.group(), "file", m.start(), m.end())
    for m in _NUMBER.finditer(request):
        add(m.group(), "number", m.start(), m.end())
    for m in _PROPER.finditer(request):
        if not _starts_sentence(request, m.start()) and m.group().lower() not in STOPWORDS:
            add(m.group(), "name", m.start(), m.end())
    return sorted(found, key=lambda item: item[2])


def extract_parameters(request: str, commands: Iterable[str]) -> tuple[Parameter, ...]:
    """The request's values that the commands use, named, in order of first use."""
    texts = list(commands)
    used: list[tuple[int, int, str, str, int]] = []  # (command index, offset, value, kind, pos)
    for value, kind, position in candidate_values(request):
        if any(ch in _UNSAFE for ch in value):
            continue
        for index, text in enumerate(texts):
            offset = find_value(text, value)
            if offset >= 0:
                used.append((index, offset, value, kind, position))
                break
    used.sort()
    names: dict[str, int] = {}
    params: list[Parameter] = []
    seen: set[str] = set()
    for _index, _offset, value, kind, position in used:
        if value in seen:
            continue
        seen.add(value)
        before = _name_before(request, position)
        base = before if before and (kind == "number" or before in NAMING_NOUNS) else kind
        names[base] = names.get(base, 0) + 1
        name = base if names[base] == 1 else f"{base}_{names[base]}"
        params.append(Parameter(name, value, kind))
    return tuple(params)


def find_value(text: str, value: str, start: int = 0) -> int:
    """Where ``value`` occurs in ``text`` as a whole word (not inside a longer word), or -1."""
    if not value:
        return -1
    pattern = _word_pattern(value)
    m = pattern.search(text, start)
    return m.start() if m else -1


def substitute(command: str, params: Sequence[Parameter]) -> str:
    """``command`` with each parameter value replaced by ``${name}``, quoted for its place.

    Unquoted it becomes ``"${name}"``, inside double quotes ``${name}``, inside single
    quotes ``'"${name}"'`` (the single-quoted string is closed and reopened).
    """
    ordered = sorted(
        (p for p in params if p.value and not any(ch in _UNSAFE for ch in p.value)),
        key=lambda p: len(p.value),
        reverse=True,
    )
    if not ordered:
        return command
    patterns = [(_value_pattern(command, p), p.name) for p in ordered]
    out: list[str] = []
    state = ""  # "", "'" or '"'
    i = 0
    while i < len(command):
        ch = command[i]
        if ch == "\\" and state != "'":
            out.append(command[i : i + 2])
            i += 2
            continue
        hit = next(((m, n) for pat, n in patterns if (m := pat.match(command, i))), None)
        if hit is not None:
            match, name = hit
            ref = "${" + name + "}"
            out.append({"": f'"{ref}"', '"': ref, "'": f"'\"{ref}\"'"}[state])
            i = match.end()
            continue
        if ch in ("'", '"') and state == "":
            whole = _whole_quoted(command, i, ordered)
            if whole is not None:  # the quotes hold just the value: quote the reference
                out.append('"${' + whole[0] + '}"')
                i = whole[1]
                continue
        if ch in ("'", '"') and state in ("", ch):
            state = "" if state == ch else ch
        out.append(ch)
        i += 1
    return "".join(out)


def _whole_quoted(command: str, i: int, params: Sequence[Parameter]) -> tuple[str, int] | None:
    """``(name, end)`` when the quoted string at ``i`` is exactly one parameter's value."""
    quote = command[i]
    end = command.find(quote, i + 1)
    if end < 0:
        return None
    inner = command[i + 1 : end]
    if quote == '"' and ("\\" in inner or "$" in inner or "`" in inner):
        return None
    found = next((p.name for p in params if p.value == inner), None)
    return (found, end + 1) if found is not None else None


def _value_pattern(command: str, param: Parameter) -> re.Pattern[str]:
    """Where ``param`` is substituted in ``command``.

    A number glued to a sign (``tail -n +2``, ``head -2``) is usually another quantity
    that happens to share its digits (the header skipped, not the column asked for):
    when the number also stands alone in the command, only the plain occurrences are
    the parameter. Written only signed, the signed form is the parameter (``head -3``
    for "the first 3 lines").
    """
    pattern = _word_pattern(param.value)
    if param.kind != "number":
        return pattern
    plain = re.compile(r"(?<![+-])" + pattern.pattern)
    return plain if plain.search(command) else pattern


def _word_pattern(value: str) -> re.Pattern[str]:
    head = r"(?<![A-Za-z0-9_])" if value[0].isalnum() or value[0] == "_" else ""
    tail = r"(?![A-Za-z0-9_])" if value[-1].isalnum() or value[-1] == "_" else ""
    return re.compile(head + re.escape(value) + tail)


def _kind_of_text(value: str) -> str:
    if _URL.fullmatch(value):
        return "url"
    if "/" in value and " " not in value:
        last = value.rstrip("/").rsplit("/", 1)[-1]
        return "file" if "." in last.strip(".") and not value.endswith("/") else "path"
    if _NUMBER.fullmatch(value):
        return "number"
    return "text"


def _starts_sentence(text: str, start: int) -> bool:
    before = text[:start].rstrip()
    return not before or before[-1] in ".!?:\n\"'“("


def _name_before(request: str, position: int) -> str | None:
    words = _WORD.findall(request[:position])
    if not words:
        return None
    word = words[-1].lower()
    if word in STOPWORDS or len(word) < 3 or not word[0].isalpha():
        return None
    name = _NAME_RE.sub("_", word).strip("_")
    return name or None
