"""Turning msgspec validation errors into messages that name the config key.

Private to :mod:`skillbook.config.file`: ``$.skills.limits.maxSkillsInPrompt`` becomes
``skills.limits.maxSkillsInPrompt: expected int >= 0, got "many"``.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import msgspec

from skillbook.base.js import json_stringify
from skillbook.base.surrogates import without_surrogates
from skillbook.diagnostics import describe_value
from skillbook.errors import ConfigError

_GOT_MAX_CHARS: Final = 60
#: Keys whose values may be secrets: an error under them names the type, not the value.
#: (``tokenEnv`` holds a variable's name, but a token pasted there by mistake must not
#: be echoed either.)
_SECRET_KEYS: Final = frozenset({"apiKey", "env", "tokenEnv"})


class _Missing:
    """JavaScript's ``undefined`` for config lookups (distinct from JSON ``null``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Final = _Missing()


_AT_RE: Final = re.compile(r"^(?P<msg>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)
_SEG_RE: Final = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")
_FIELD_RE: Final = re.compile(r"field `([^`]*)`")
_PLAIN_KEY_RE: Final = re.compile(r"^[A-Za-z0-9_$-]+$")


def convert(value: Any, schema: Any, prefix: tuple[str, ...], where: str, file: Path | None) -> Any:
    try:
        return msgspec.convert(_integral_floats(value), schema)
    except msgspec.ValidationError as exc:
        raise _translate(str(exc), value, schema, prefix, where, file) from None
    except UnicodeEncodeError:
        # JSON allows "\ud800" alone; msgspec cannot put a lone surrogate into its
        # error message and raised this instead, a traceback rather than the key. The
        # same value with U+FFFD in its place fails the same way, with the message.
        shown = _without_surrogates(value)
        try:
            msgspec.convert(_integral_floats(shown), schema)
        except msgspec.ValidationError as exc:
            raise _translate(str(exc), shown, schema, prefix, where, file) from None
        raise


def _without_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return without_surrogates(value)
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_surrogates(v) for v in value]
    return value


def _integral_floats(value: Any) -> Any:
    # JSON5 ``5.0`` is the JavaScript number 5, which zod's int() accepts.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _integral_floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral_floats(v) for v in value]
    return value


def _translate(
    message: str, value: Any, schema: Any, prefix: tuple[str, ...], where: str, file: Path | None
) -> ConfigError:
    m = _AT_RE.match(message)
    assert m is not None  # the pattern matches any string
    text, at = m.group("msg"), m.group("path") or ""
    segments, info, current = _walk(at, value, schema, prefix)
    detail = _detail(text, info, current, segments)
    path = key_path(segments)
    return ConfigError(f"{where}: {path}: {detail}", key_path=path, file=file)


def _walk(
    at: str, value: Any, schema: Any, prefix: tuple[str, ...]
) -> tuple[list[str | int], Any, Any]:
    """Follow msgspec's path (``.key``, ``[0]``, ``[...]``) through the type and the
    value: ``(key path segments, type info there, value there or MISSING)``."""
    segments: list[str | int] = list(prefix)
    info: Any = msgspec.inspect.type_info(schema)
    current: Any = value
    for sm in _SEG_RE.finditer(at):
        name, index = sm.group(1), sm.group(2)
        info = _unwrap(info)
        if name is not None:
            info = _field_info(info, name)
            current = current.get(name, MISSING) if isinstance(current, Mapping) else MISSING
            segments.append(name)
        elif index == "...":
            key = _first_bad_key(current, info)
            info = info.value_type if isinstance(info, msgspec.inspect.DictType) else None
            current = current.get(key, MISSING) if isinstance(current, Mapping) else MISSING
            segments.append(key)
        else:
            info = info.item_type if isinstance(info, msgspec.inspect.ListType) else None
            i = int(index)
            current = current[i] if isinstance(current, list) and i < len(current) else MISSING
            segments.append(i)
    return segments, info, current


def _detail(text: str, info: Any, current: Any, segments: list[str | int]) -> str:
    """What is wrong at the key (an unknown or missing key is appended to ``segments``)."""
    field_m = _FIELD_RE.search(text)
    if text.startswith("Object contains unknown field") and field_m:
        segments.append(field_m.group(1))
        known = _known_keys(_unwrap(info))
        return (
            "unknown key"
            + _meant(field_m.group(1), known)
            + (f" (expected one of: {', '.join(known)})" if known else "")
        )
    if text.startswith("Object missing required field") and field_m:
        segments.append(field_m.group(1))
        return "required key is missing"
    if any(seg in _SECRET_KEYS for seg in segments if isinstance(seg, str)):
        kind = "nothing" if current is MISSING else describe_value(current)
        return f"expected {_describe(info)}, got {kind} (the value is not shown)"
    return f"expected {_describe(info)}, got {render(current)}"


def _unwrap(info: Any) -> Any:
    if isinstance(info, msgspec.inspect.Metadata):
        info = info.type
    if isinstance(info, msgspec.inspect.UnionType):
        for t in info.types:
            if isinstance(t, msgspec.inspect.StructType | msgspec.inspect.DictType):
                return t
    return info


def _field_info(info: Any, name: str) -> Any:
    if isinstance(info, msgspec.inspect.StructType):
        for f in info.fields:
            if f.encode_name == name:
                return f.type
    return None


def _meant(typed: str, known: Sequence[str]) -> str:
    """``; did you mean extraDirs?`` for a key one slip away from a known one (a
    letter too few or many, another case): fourteen names to read through find it
    less fast."""
    lower = {k.lower(): k for k in known}
    found = lower.get(typed.lower()) or next(
        iter(difflib.get_close_matches(typed, known, n=1, cutoff=0.75)), None
    )
    return f"; did you mean {found}?" if found else ""


def _known_keys(info: Any) -> list[str]:
    if isinstance(info, msgspec.inspect.StructType):
        return [f.encode_name for f in info.fields]
    return []


def _first_bad_key(current: Any, info: Any) -> str:
    if not isinstance(current, Mapping) or not current:
        return "..."
    wants_str = isinstance(info, msgspec.inspect.DictType) and isinstance(
        info.value_type, msgspec.inspect.StrType
    )
    for key, v in current.items():
        if not wants_str or not isinstance(v, str):
            return str(key)
    return str(next(iter(current)))


def _describe(info: Any) -> str:
    """What a msgspec type accepts, in the words of the messages (``int >= 0``, ...)."""
    for kind, describe in _DESCRIBERS:
        if isinstance(info, kind):
            return describe(info)
    return "any value"


def _describe_metadata(info: Any) -> str:
    label = (info.extra or {}).get("label")
    return label if isinstance(label, str) else _describe(info.type)


def _describe_number(info: Any) -> str:
    kind = "int" if isinstance(info, msgspec.inspect.IntType) else "number"
    bounds = [f"> {info.gt:g}"] if getattr(info, "gt", None) is not None else []
    bounds += [f">= {info.ge:g}"] if info.ge is not None else []
    bounds += [f"<= {info.le:g}"] if info.le is not None else []
    return " ".join([kind, " and ".join(bounds)]) if bounds else kind


def _describe_list(info: Any) -> str:
    what = f"array of {_describe(info.item_type)}s"
    return f"non-empty {what}" if info.min_length else what


def _describe_dict(info: Any) -> str:
    inner = _describe(info.value_type)
    return "object" if inner == "any value" else f"object of {inner}s"


def _describe_struct(info: Any) -> str:
    label = getattr(info.cls, "__config_label__", None)
    return label if isinstance(label, str) else "object"


_ins = msgspec.inspect
#: The describer of each msgspec type, tried in order (the first that matches wins).
_DESCRIBERS: Final[tuple[tuple[type | tuple[type, ...], Callable[[Any], str]], ...]] = (
    (_ins.Metadata, _describe_metadata),
    ((_ins.IntType, _ins.FloatType), _describe_number),
    (_ins.BoolType, lambda info: "boolean"),
    (_ins.StrType, lambda info: "non-empty string" if info.min_length else "string"),
    (_ins.ListType, _describe_list),
    (_ins.LiteralType, lambda info: "one of " + ", ".join(json.dumps(v) for v in info.values)),
    (_ins.EnumType, lambda info: "one of " + ", ".join(json.dumps(m.value) for m in info.cls)),
    (_ins.DictType, _describe_dict),
    (_ins.StructType, _describe_struct),
    (_ins.UnionType, lambda info: " or ".join(_describe(t) for t in info.types)),
)


def render(value: Any) -> str:
    if value is MISSING:
        return "nothing"
    try:
        text = json_stringify(value)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= _GOT_MAX_CHARS else text[: _GOT_MAX_CHARS - 1] + "…"


def key_path(segments: Sequence[str | int]) -> str:
    """``skills.entries["my key"].env[0]``: a key path as error messages print it."""
    out: list[str] = []
    for seg in segments:
        if isinstance(seg, int):
            out.append(f"[{seg}]")
        elif _PLAIN_KEY_RE.match(seg):
            out.append(("." if out else "") + seg)
        else:
            out.append(f"[{json.dumps(seg, ensure_ascii=False)}]")
    return "".join(out)
