"""Flow collections of the YAML fast path: JSON as YAML's core schema reads it.

Input: a flow mapping or sequence on one row (``metadata: {"openclaw": ...}``), or
over several rows indented below its key, as most OpenClaw manifests are written.
Output: the value the full parser (:mod:`skillbook.pipeline.parse.yaml_core`) would give, or None when
the text is anything but strict JSON without escapes, duplicate keys or ``NaN``
(trailing commas allowed, as YAML allows them); :mod:`skillbook.pipeline.parse.yaml_simple` then
leaves the block to that parser. Its differential tests cover this module.
"""

from __future__ import annotations

import json
import re
from typing import Any

from skillbook.base.js import js_key_order

__all__ = ["flow_lines", "json_flow"]


def flow_lines(rows: list[str], ind: list[int] | None, i: int, parent: int) -> tuple[Any, int]:
    """A flow collection over several rows, each indented past its key, written as
    JSON without escapes (trailing commas allowed, as YAML allows them). Without
    ``ind`` the key is at column 0, and a row is indented past it when it starts with
    a blank."""
    j = i
    if ind is None:
        while j < len(rows) and (not rows[j] or rows[j][0] == " "):
            j += 1
    else:
        while j < len(rows) and (not rows[j] or ind[j] > parent):
            j += 1
    while j > i and not rows[j - 1]:
        j -= 1
    text = "\n".join(rows[i:j])
    # No row holds a newline, so the rows are all printable when their join less the
    # newlines is.
    if "\\" in text or "#" in text or not text.replace("\n", "").isprintable():
        return None, i
    pieces = text.split('"')
    if len(pieces) % 2 == 0 or "\n" in '"'.join(pieces[1::2]):
        return None, i  # an odd quote, or a string over two lines
    # None of these patterns can match across a `"`, so each may search the pieces
    # outside the strings joined by one.
    outside = '"'.join(pieces[0::2])
    if _KEY_APART_OR_EMPTY.search(outside):
        return None, i  # a key apart from its `:`, or an empty entry (`[,`, `,,`)
    if _TRAILING_COMMA.search(outside):
        pieces[0::2] = [_TRAILING_COMMA.sub(r"\1", p) for p in pieces[0::2]]
    # The strings hold no newline (checked above): they come back as they were. The
    # text is printable and has no backslash (checked above).
    value = json_printable('"'.join(pieces).replace("\n", " ").strip())
    return value, j


_KEY_APART_OR_EMPTY = re.compile(r"\n *:|[\[{,]\s*,")
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def json_flow(raw: str) -> Any:
    """A one-line flow collection written as strict JSON without escapes, as the YAML
    core schema reads it (key order as JavaScript's); None for anything else."""
    if "\\" in raw or not raw.isprintable():
        return None
    return json_printable(raw)


def json_printable(raw: str) -> Any:
    """:func:`json_flow` of a printable ``raw`` without backslashes."""
    if (
        raw[-1] != ("}" if raw[0] == "{" else "]")
        or raw.count("{") + raw.count("[") > _MAX_FLOW_DEPTH
    ):
        return None
    # No string starts with a digit, so no key is an array index that JavaScript would
    # put first: the objects keep the text's order.
    decode = _JS_OBJECTS if _DIGIT_STRING.search(raw) else _CHECKED_OBJECTS
    try:
        # `raw` starts with its bracket and ends with the closing one (checked above):
        # no blank at either end for `json.loads` to skip, so the end must be the text's.
        value, end = decode(raw)
    except (ValueError, RecursionError):
        return None
    return value if end == len(raw) else None


#: Below the YAML loader's nesting bound, counted generously (brackets in strings too).
_MAX_FLOW_DEPTH = 90


def _js_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise ValueError("duplicate key")  # YAML refuses what JSON lets pass
    return js_key_order(obj)


def _checked_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise ValueError("duplicate key")
    return obj


_DIGIT_STRING = re.compile(r'"[0-9]')


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # Python's json would read NaN, Infinity


# One decoder of each kind, made once: `json.loads` with a hook builds a new decoder
# and its scanner for every call (issue 22: ~2 % of a cold catalog build).
_JS_OBJECTS = json.JSONDecoder(object_pairs_hook=_js_object, parse_constant=_no_constant).raw_decode
_CHECKED_OBJECTS = json.JSONDecoder(
    object_pairs_hook=_checked_object, parse_constant=_no_constant
).raw_decode
