"""JavaScript semantics that OpenClaw's output depends on.

OpenClaw is TypeScript; its strings are UTF-16, its sort is by code unit, its
numbers print like ``String(n)`` and its truthiness is not Python's. Matching its
bytes means reproducing each of those exactly; they live here, in one place.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any

try:
    from _json import encode_basestring as _encode_basestring
except ImportError:  # pragma: no cover - CPython always has the C module
    from json.encoder import py_encode_basestring as _encode_basestring

#: JavaScript's ``\\s`` and ``trim()`` whitespace, as a regex character-class body.
JS_WHITESPACE = "\t\n\x0b\x0c\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_JS_TRIM = "\t\n\x0b\x0c\r \u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
_JS_TRIM += "\u2028\u2029\u202f\u205f\u3000\ufeff"


#: Keys a plain JS object already "has" (``Object.prototype``): ``key in obj`` is true
#: for them before any assignment, and assigning ``__proto__`` is swallowed.
OBJECT_PROTOTYPE_KEYS = frozenset(
    [
        "__proto__",
        "constructor",
        "hasOwnProperty",
        "isPrototypeOf",
        "propertyIsEnumerable",
        "toString",
        "valueOf",
        "toLocaleString",
        "__defineGetter__",
        "__defineSetter__",
        "__lookupGetter__",
        "__lookupSetter__",
    ]
)


def js_trim(s: str) -> str:
    """``String.prototype.trim``: unlike ``str.strip()`` it keeps U+001C-U+001F and U+0085."""
    return s.strip(_JS_TRIM)


def utf16_len(s: str) -> int:
    """``s.length`` in JavaScript: the number of UTF-16 code units."""
    if s.isascii():
        return len(s)
    # Astral characters take two units, a lone surrogate one (as in JavaScript); encoded
    # in C, which a catalog of megabytes with one "é" in it needs (a loop per character
    # took ~40 ns each).
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def utf16_slice(s: str, end: int) -> str:
    """``s.slice(0, end)``: cut at a UTF-16 code-unit boundary.

    JavaScript does not protect surrogate pairs; a pair split in half leaves a lone
    high surrogate, which we keep as such (Python can hold it; encoders will escape it).
    """
    if end <= 0:
        return ""
    if s.isascii():
        return s[:end]
    units = 0
    for i, ch in enumerate(s):
        width = 2 if ord(ch) > 0xFFFF else 1
        if units + width > end:
            if width == 2 and units + 1 == end:
                high = 0xD800 + ((ord(ch) - 0x10000) >> 10)
                return s[:i] + chr(high)
            return s[:i]
        units += width
    return s


def js_sort_key(s: str) -> bytes:
    """Key for JavaScript's default ``Array.prototype.sort()`` (UTF-16 code-unit order)."""
    return s.encode("utf-16-be", "surrogatepass")


def js_sorted(items: Iterable[str]) -> list[str]:
    return sorted(items, key=js_sort_key)


#: ICU root-collation order of printable ASCII punctuation and symbols (observed with
#: Node's ``localeCompare``); they all sort before digits, which sort before letters.
_ASCII_PUNCT_ORDER = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"
_PUNCT_RANK = {ch: i for i, ch in enumerate(_ASCII_PUNCT_ORDER)}


def _primary(ch: str) -> tuple[int, int, str]:
    rank = _PUNCT_RANK.get(ch)
    if rank is not None:
        return (1, rank, "")
    cat = unicodedata.category(ch)
    if cat.startswith("Z") or ch in "\t\n\r":
        return (0, 0, "")
    if cat.startswith(("P", "S")):
        return (2, ord(ch), "")
    if cat.startswith("N"):
        return (3, 0, ch)
    return (4, 0, ch.casefold())


_ASCII_PRIMARY = tuple(_primary(chr(i)) for i in range(128))


def locale_compare_key(
    s: str,
) -> tuple[tuple[tuple[int, int, str], ...], tuple[str, ...], tuple[int, ...]]:
    """An approximation of ICU root collation (``a.localeCompare(b, "en")``).

    Primary: whitespace < punctuation (in ICU's order) < symbols < digits < letters,
    letters compared without case or accents; secondary: accents; tertiary: lowercase
    before uppercase. This matches ICU for the names skills use (ASCII letters, digits
    and punctuation); other scripts may order differently, which is documented.
    """
    if s.isascii():
        # Names are nearly always ASCII: table lookups, no Unicode normalisation.
        return (
            tuple(_ASCII_PRIMARY[ord(ch)] for ch in s),
            (),
            tuple(1 if "A" <= ch <= "Z" else 0 for ch in s),
        )
    decomposed = unicodedata.normalize("NFD", s)
    primary: list[tuple[int, int, str]] = []
    secondary: list[str] = []
    tertiary: list[int] = []
    for ch in decomposed:
        if unicodedata.combining(ch):
            secondary.append(ch)
            continue
        primary.append(_primary(ch))
        tertiary.append(1 if ch.isupper() else 0)
    return tuple(primary), tuple(secondary), tuple(tertiary)


def js_number(value: float | int) -> str:
    """``String(n)`` for a JavaScript number (ints beyond 2**53 lose precision as in JS)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if -(2**53) <= value <= 2**53:
            return str(value)
        try:
            value = float(value)
        except OverflowError:  # beyond a double: JavaScript's Number is ±Infinity
            value = math.inf if value > 0 else -math.inf
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    if value.is_integer() and abs(value) <= 2**53:
        return str(int(value))
    # repr() gives the shortest round-trip digits, as JS does; only the layout differs.
    digits, exponent = _shortest_digits(abs(value))
    sign = "-" if value < 0 else ""
    k = len(digits)
    n = exponent + k  # position of the decimal point relative to the digit string
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


def _shortest_digits(x: float) -> tuple[str, int]:
    """Shortest round-trip digits of ``x`` > 0 and exponent so that x = digits * 10**exp."""
    text = repr(x)
    mantissa, _, exp_text = text.partition("e")
    exp = int(exp_text) if exp_text else 0
    whole, _, frac = mantissa.partition(".")
    if frac == "0":
        frac = ""
    digits = (whole + frac).lstrip("0")
    exp -= len(frac)
    stripped = digits.rstrip("0")
    exp += len(digits) - len(stripped)
    return stripped or "0", exp


def js_string(value: Any) -> str:
    """``String(value)`` for the scalar values YAML and JSON5 produce."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return js_number(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        # Array.prototype.toString: elements joined by ",", null/undefined as "".
        return ",".join("" if v is None else js_string(v) for v in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)


_ARRAY_INDEX = re.compile(r"(?:0|[1-9][0-9]{0,9})\Z")
_DIGITS = frozenset("0123456789")


def js_key_order(d: dict[str, Any]) -> dict[str, Any]:
    """Key order of a JS object: array-index keys first, ascending; then insertion order."""
    for k in d:
        if k[:1] in _DIGITS:
            break
    else:
        return d  # no key starts with a digit: none is an array index
    index_keys = [k for k in d if _ARRAY_INDEX.match(k) and int(k) < 2**32 - 1]
    if not index_keys:
        return d
    ordered = {k: d[k] for k in sorted(index_keys, key=int)}
    ordered.update((k, v) for k, v in d.items() if k not in ordered)
    return ordered


def json_stringify(value: Any) -> str:
    """``JSON.stringify(value)``: compact, insertion order, non-ASCII kept, JS numbers."""
    parts: list[str] = []
    _stringify_into(value, parts)
    return "".join(parts)


_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}
_SURROGATE = re.compile("[\ud800-\udfff]")


def json_quote(s: str) -> str:
    """``JSON.stringify`` of a string.

    Without surrogates the C encoder of ``json`` gives the same text (checked over
    every other code point): the same short escapes, ``\\u00XX`` in lower case for the
    other C0 controls, everything else as is. A surrogate needs the slow path.
    """
    if s.isascii() or _SURROGATE.search(s) is None:
        return _encode_basestring(s)
    return _json_quote_slow(s)


def _json_quote_slow(s: str) -> str:
    out = ['"']
    for ch in s:
        esc = _ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ord(ch) < 0x20 or 0xD800 <= ord(ch) <= 0xDFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _compact_encoder() -> Callable[[Any], str]:
    """The C encoder, compact, non-ASCII kept, NaN refused (JavaScript writes it as null).

    Made once and called directly (issue 22): ``JSONEncoder.encode`` builds a new C
    encoder per call behind two Python frames, and its circular-reference markers cost
    a dictionary entry per container. Without them a circular value raises
    ``RecursionError`` instead of ``ValueError``; callers catch both (and the values
    encoded here are parsed text, which holds no cycle)."""
    encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - CPython has the C encoder
        return encoder.encode
    chunks = make(
        None, encoder.default, json.encoder.encode_basestring, None, ":", ",", False, False, False
    )
    join = "".join

    def encode(value: Any) -> str:
        return join(chunks(value, 0))

    return encode


_ENCODE_COMPACT = _compact_encoder()
# In compact JSON a number follows `:`, `[` or `,` (a match inside a string only sends
# the value to the exact path).
_NUMBER_TOKEN = re.compile(r"[:,\[]-?[0-9]")


def json_stringify_plain(value: dict[str, Any] | list[Any]) -> str | None:
    """:func:`json_stringify` of a dict or list with string keys, by the C encoder; None
    where the two could differ: any number (JavaScript prints ``1.0`` as ``1`` and
    rounds big integers), NaN, a surrogate, a type JSON lacks, deep nesting."""
    try:
        text = _ENCODE_COMPACT(value)
    except (ValueError, TypeError, RecursionError):
        return None
    if (
        text[:1] not in ("{", "[")
        or _NUMBER_TOKEN.search(text) is not None
        or (not text.isascii() and _SURROGATE.search(text) is not None)
    ):
        return None
    return text


def _stringify_into(value: Any, parts: list[str]) -> None:
    # Exact types first (what YAML and JSON produce), then the general cases. Every
    # writer dispatches its items itself: one frame per level of nesting, as before.
    _WRITERS.get(type(value), _stringify_other)(value, parts)


def _stringify_str(value: str, parts: list[str]) -> None:
    parts.append(json_quote(value))


def _stringify_dict(value: dict[Any, Any], parts: list[str]) -> None:
    if not value:
        parts.append("{}")
        return
    sep = "{"
    for k, v in value.items():
        parts.append(sep)
        sep = ","
        parts.append(json_quote(k if type(k) is str else js_string(k)))
        parts.append(":")
        kind = type(v)
        if kind is str:
            parts.append(json_quote(v))
        elif kind is dict:
            _stringify_dict(v, parts)
        elif kind is list:
            _stringify_list(v, parts)
        else:
            _stringify_other(v, parts)
    parts.append("}")


def _stringify_list(value: list[Any], parts: list[str]) -> None:
    if not value:
        parts.append("[]")
        return
    sep = "["
    for item in value:
        parts.append(sep)
        sep = ","
        kind = type(item)
        if kind is str:
            parts.append(json_quote(item))
        elif kind is dict:
            _stringify_dict(item, parts)
        elif kind is list:
            _stringify_list(item, parts)
        else:
            _stringify_other(item, parts)
    parts.append("]")


def _stringify_other(value: Any, parts: list[str]) -> None:
    """Scalars, and the subclasses and tuples that no parser here builds."""
    if value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, int | float):
        if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
            parts.append("null")
        else:
            parts.append(js_number(value))
    elif isinstance(value, str):
        parts.append(json_quote(value))
    elif isinstance(value, list | tuple):
        parts.append("[")
        for i, item in enumerate(value):
            if i:
                parts.append(",")
            _WRITERS.get(type(item), _stringify_other)(item, parts)
        parts.append("]")
    elif isinstance(value, dict):
        parts.append("{")
        first = True
        for k, v in value.items():
            if not first:
                parts.append(",")
            first = False
            parts.append(json_quote(js_string(k)))
            parts.append(":")
            _WRITERS.get(type(v), _stringify_other)(v, parts)
        parts.append("}")
    else:
        parts.append(json_quote(str(value)))


#: The writer of each exact type JSON and YAML build; every other value is
#: :func:`_stringify_other`'s.
_WRITERS: dict[type, Callable[[Any, list[str]], None]] = {
    str: _stringify_str,
    dict: _stringify_dict,
    list: _stringify_list,
}


def is_truthy(value: Any) -> bool:
    """OpenClaw's ``isTruthy`` for config values: blank strings false, any object true."""
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value != 0 and not (isinstance(value, float) and math.isnan(value))
    if isinstance(value, str):
        return value.strip() != ""
    return True


def load_json5(text: str) -> Any:
    """``JSON5.parse(text)``: plain JSON on the fast path, the ``json5`` package otherwise.

    Raises ``ValueError`` for any text that is not JSON5, nesting too deep included,
    so callers catch one exception type.
    """
    try:
        return json.loads(text)  # most metadata, manifests and configs are plain JSON
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except ValueError:
        pass
    import json5  # lazy: slow to import, needed only for comments, trailing commas, …

    try:
        return json5.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None
