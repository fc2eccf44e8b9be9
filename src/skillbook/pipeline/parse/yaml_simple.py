"""The commonest frontmatter, read without running a YAML parser.

Input: the text of a frontmatter block. Output: the mapping and key lines that
:func:`skillbook.pipeline.parse.yaml_core.load_core_with_lines` would return, or None when the block is
anything but the plainest YAML, and then the caller runs the real parser.

"Plainest" is deliberately narrow: every line is empty, a ``#`` comment at column 0,
or ``key: value`` at column 0, where the key is a plain word that stays a string
and the value is one of

- a plain scalar on one line that cannot be mistaken for anything else: no
  indicator first (``- ? : , [ ] { } # & * ! | > ' " % @ `` and backquote), no ``: ``,
  no ``:`` at the end, no `` #``, no tab, nothing unprintable, no trailing blank;
- a single-quoted scalar alone on the rest of the line (``''`` is a quote);
- a double-quoted scalar alone on the rest of the line, whose only escapes are
  ``\\"`` and ``\\\\`` (descriptions quote words that way);
- a folded or literal block scalar (``>``, ``>-``, ``|``, ``|-``) whose lines all
  sit at one indentation, with no blank line inside and no trailing blanks;
- a plain scalar over the rows right below its key (how many descriptions are
  wrapped), each row indented and held to the one-line rules above;
- a flow mapping or sequence on one line, or over rows below its key, that is strict
  JSON without escapes, duplicate keys or ``NaN`` (JSON's and YAML's readings agree
  there; object keys take JavaScript's order, as the loader gives them; see
  :mod:`skillbook.pipeline.parse.yaml_flow`).

For these the core schema's answer is fixed (the same resolver decides plain
scalars), and OpenClaw's line parser finds exactly the same keys in the same order,
which is why :mod:`skillbook.pipeline.parse.skill_file` may skip it for such a block (an empty quoted
value is the one case where it would not, and is left to the full path). A
differential property test holds this module to the real parser.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any

from skillbook.base.js import OBJECT_PROTOTYPE_KEYS, js_key_order
from skillbook.pipeline.parse.yaml_flow import flow_lines, json_flow

__all__ = ["resolve_plain", "simple_block", "simple_mapping"]

# The regexes of the JS package's core schema (yaml/dist/schema/core).
_NULL = re.compile(r"(?:~|[Nn]ull|NULL)?\Z")
_BOOL = re.compile(r"(?:[Tt]rue|TRUE|[Ff]alse|FALSE)\Z")
_INT_OCT = re.compile(r"0o[0-7]+\Z")
_INT = re.compile(r"[-+]?[0-9]+\Z")
_INT_HEX = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT_SPECIAL = re.compile(r"(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)\Z")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")


# A key that the core schema keeps a string (no true/null/number words: see below),
# then its value on the line (empty: the value is the indented lines below).
_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]{0,99}):(?: +(.*))?")
_FIRST_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")


def simple_mapping(text: str) -> tuple[dict[str, Any], dict[str, int]] | None:
    """``(mapping, 1-based line of each key)`` for the plainest blocks, else None."""
    got = simple_block(text)
    return None if got is None else (got[0], got[1])


def simple_block(
    text: str,
) -> tuple[dict[str, Any], dict[str, int], dict[str, str]] | None:
    """:func:`simple_mapping` plus the text of each one-line flow value, by key."""
    if "\r" in text or "\t" in text:
        return None
    values: dict[str, Any] = {}
    lines: dict[str, int] = {}
    flows: dict[str, str] = {}
    rows = text.split("\n")
    # Row indentation is needed only below a key without an inline value (most blocks
    # have none), so it is measured on the first such key.
    ind: list[int] | None = None
    count = len(rows)
    i = 0
    while i < count:
        line = rows[i]
        i += 1
        if not line or line[0] == "#":
            continue
        match = _LINE.fullmatch(line)
        if match is None:
            return None
        key, raw = match.group(1), match.group(2) or ""
        if key in values or not _plain_key(key):
            return None
        number = i
        if not raw:
            value, i, ind = _below_key(rows, i, ind)
        elif raw in _BLOCK_HEADS:
            value, i = _block_scalar(rows, i, raw)
        elif raw[:1] in ("{", "["):
            value = json_flow(raw)
            flows[key] = raw
        else:
            value = _scalar(raw)
        if value is None:
            return None
        values[key] = value
        lines[key] = number
    return (values, lines, flows) if values else None


def _below_key(rows: list[str], i: int, ind: list[int] | None) -> tuple[Any, int, list[int] | None]:
    """The value on the rows below a top-level key with nothing after its ``:``, the
    next row, and the indentation of every row (``ind``), measured here on first need."""
    count = len(rows)
    j = _skip_blank(rows, i)
    if j < count and rows[j][:1] == " " and rows[j].lstrip(" ")[:1] in ("{", "["):
        # A flow collection below a top-level key (how most manifests are
        # written), as _nested reads it, with no row indentation measured.
        value, i = flow_lines(rows, None, j, 0)
    elif j == i < count and _plain_row(rows[i]):
        # Not a key, an item or a flow: a plain scalar over several rows.
        value, i = _plain_rows(rows, i)
    else:
        if ind is None:
            ind = [len(row) - len(row.lstrip(" ")) for row in rows]
        value, i = _nested(rows, ind, i, 0)
    return value, i, ind


@functools.lru_cache(maxsize=1024)
def _plain_key(key: str) -> bool:
    return key not in OBJECT_PROTOTYPE_KEYS and resolve_plain(key) == key


def _plain_row(row: str) -> bool:
    """An indented row that only a plain scalar can begin: a row to read as such."""
    text = row.lstrip(" ")
    return (
        len(text) < len(row)
        and text != ""
        and text[0] not in _FIRST_INDICATORS
        and ": " not in text
        and text[-1] not in ": "
        and " #" not in text
        and text.isprintable()
    )


def _plain_rows(rows: list[str], start: int) -> tuple[Any, int]:
    """A plain scalar over the indented rows from ``start``, each one a
    :func:`_plain_row`, folded into one line; no blank or comment row may follow
    before more indented rows (a blank row inside folds otherwise)."""
    i, count = start, len(rows)
    while i < count and rows[i][:1] == " ":
        if not _plain_row(rows[i]):
            return None, i
        i += 1
    j = _skip_blank(rows, i)
    if j < count and rows[j][:1] == " ":
        return None, i
    return resolve_plain(" ".join(row.lstrip(" ") for row in rows[start:i])), i


def _skip_blank(rows: list[str], i: int) -> int:
    """The next row holding content (blank rows and column-0 comments skipped)."""
    while i < len(rows) and (not rows[i] or rows[i][0] == "#"):
        i += 1
    return i


def _nested(
    rows: list[str], ind: list[int], i: int, parent: int, depth: int = 0
) -> tuple[Any, int]:
    """The block collection, or multi-line flow collection, indented below a key
    (``ind``: the indentation of every row; ``depth``: collections around it)."""
    if depth >= _MAX_NESTING:
        return None, i  # the parser refuses it with its own bound (parse.yaml-too-deep)
    j = _skip_blank(rows, i)
    if j >= len(rows):
        return None, i
    indent = ind[j]
    if indent <= parent:
        return None, i  # no value (null), or a sequence at the key's own column
    content = rows[j][indent:]
    if not content:
        return None, i  # a row of blanks: left to the parser
    if content[0] in "{[":
        return flow_lines(rows, ind, j, parent)
    if content[0] == "-":
        return _sequence(rows, ind, j, indent, depth)
    return _mapping(rows, ind, j, indent, {}, depth)


def _mapping(
    rows: list[str], ind: list[int], i: int, indent: int, out: dict[str, Any], depth: int
) -> tuple[Any, int]:
    """``key: value`` rows at exactly ``indent`` (added to ``out``)."""
    while True:
        i = _skip_blank(rows, i)
        if i >= len(rows) or ind[i] < indent:
            return js_key_order(out), i
        match = _LINE.fullmatch(rows[i], indent) if ind[i] == indent else None
        if match is None:
            return None, i
        key, raw = match.group(1), match.group(2) or ""
        if key in out or not _plain_key(key):
            return None, i
        value, i = _value(rows, ind, i + 1, raw, indent, depth)
        if value is None:
            return None, i
        out[key] = value


def _sequence(rows: list[str], ind: list[int], i: int, indent: int, depth: int) -> tuple[Any, int]:
    """``- item`` rows at exactly ``indent``; an item may be a compact mapping."""
    items: list[Any] = []
    while True:
        i = _skip_blank(rows, i)
        if i >= len(rows) or ind[i] < indent:
            return items, i
        line = rows[i]
        rest = line[indent + 2 :]
        if ind[i] != indent or line[indent : indent + 2] != "- " or rest[:1] in ("", " "):
            return None, i
        match = _LINE.fullmatch(rest)
        if match is not None and match.group(2):
            key, raw = match.group(1), match.group(2)
            if not _plain_key(key) or raw in _BLOCK_HEADS:
                return None, i
            first = _scalar(raw) if raw[0] not in "{[" else json_flow(raw)
            if first is None:
                return None, i
            item, i = _mapping(rows, ind, i + 1, indent + 2, {key: first}, depth + 1)
        elif match is not None or rest[0] in "{[" or rest in _BLOCK_HEADS:
            return None, i
        else:
            item, i = _scalar(rest), i + 1
        if item is None:
            return None, i
        items.append(item)


def _value(
    rows: list[str], ind: list[int], i: int, raw: str, indent: int, depth: int
) -> tuple[Any, int]:
    """The value after ``key:`` in a nested mapping, and the next row."""
    if not raw:
        return _nested(rows, ind, i, indent, depth + 1)
    if raw in _BLOCK_HEADS:
        return None, i
    return (json_flow(raw) if raw[0] in "{[" else _scalar(raw)), i


#: Block collections nested deeper are left to the parser, whose bound
#: (``_yaml.DEFAULT_MAX_DEPTH``) names the problem; this path's recursion stays shallow.
_MAX_NESTING = 64

#: Block scalar headers taken: folded or literal, clipped or stripped.
_BLOCK_HEADS = frozenset({">", ">-", "|", "|-"})


def _block_scalar(rows: list[str], start: int, head: str) -> tuple[str | None, int]:
    """A block scalar whose lines all sit at one indentation, with no blank line inside
    and no trailing blank on any line; (value or None, index of the next row)."""
    i, count = start, len(rows)
    indent = 0
    parts: list[str] = []
    while i < count:
        line = rows[i]
        if not line:
            break
        if line[0] != " ":
            break
        body = line.lstrip(" ")
        if not indent:
            indent = len(line) - len(body)
        if not body or len(line) - len(body) != indent or line[-1] == " ":
            return None, i
        if not body.isprintable():
            return None, i
        parts.append(body)
        i += 1
    if not parts:
        return None, i
    # Blank lines may end the block (clipping ignores them) but not sit inside it.
    j = i
    while j < count and not rows[j]:
        j += 1
    if j < count and rows[j][:1] == " ":
        return None, i
    value = (" " if head[0] == ">" else "\n").join(parts)
    return (value if head.endswith("-") else value + "\n"), i


def _scalar(raw: str) -> Any:
    """The value of one simple scalar, or None when it is not simple (or empty)."""
    if not raw or not raw.isprintable() or raw[-1] == " ":
        return None
    first = raw[0]
    if first == "'":
        inner = raw[1:-1]
        if len(raw) < 3 or raw[-1] != "'" or inner.replace("''", "").count("'"):
            return None
        return inner.replace("''", "'")
    if first == '"':
        inner = raw[1:-1]
        if len(raw) < 3 or raw[-1] != '"':
            return None
        if "\\" in inner:
            # Only the two escapes that stand for themselves; any other is the parser's.
            if _DQ_ESCAPED.fullmatch(inner) is None:
                return None
            return _DQ_ESCAPE.sub(r"\1", inner)
        return None if '"' in inner else inner
    if first in _FIRST_INDICATORS or ": " in raw or raw[-1] == ":" or " #" in raw:
        return None
    return resolve_plain(raw)


#: A double-quoted body whose backslashes all escape ``"`` or ``\\``; and one such escape.
_DQ_ESCAPED = re.compile(r'(?:[^"\\]|\\["\\])*')
_DQ_ESCAPE = re.compile(r'\\(["\\])')


def resolve_plain(value: str) -> Any:
    """A plain scalar as the core schema reads it (null, bool, int, float or string)."""
    if not value:
        return None
    if value[0] not in "0123456789+-.~nNtTfF":
        return value
    if _NULL.match(value):
        return None
    if _BOOL.match(value):
        return value[0] in "tT"
    if _INT.match(value):
        try:
            return int(value)
        except ValueError:
            # Past Python's digit limit for int(): far beyond a double, so JavaScript
            # reads it as ±Infinity, and so does float() (no digit limit there).
            return float(value)
    if _INT_HEX.match(value):
        return int(value[2:], 16)
    if _INT_OCT.match(value):
        return int(value[2:], 8)
    if _FLOAT_SPECIAL.match(value):
        if value[-3:].lower() == "nan":
            return math.nan
        return -math.inf if value[0] == "-" else math.inf
    if _FLOAT.match(value):
        return float(value)
    return value
