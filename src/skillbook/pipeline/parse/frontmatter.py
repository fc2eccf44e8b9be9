"""A frontmatter block into a :class:`~skillbook.model.Frontmatter` (§2.3).

Input: the block's text and the line it starts on. Output: the frontmatter in
OpenClaw's string view and a structured view, with the line of every key, and the
diagnostics of the YAML pass. The block is parsed by YAML (core schema) *and* by
OpenClaw's line parser (:mod:`skillbook.pipeline.parse.line_parser`), and the two results are
merged; a block of plain ``key: value`` lines takes a fast path that needs no line
parser (:mod:`skillbook.pipeline.parse.yaml_simple`). No I/O; never raises on bad input.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from skillbook import diagnostics as dg
from skillbook.base.js import (
    OBJECT_PROTOTYPE_KEYS,
    js_key_order,
    js_string,
    js_trim,
    json_stringify,
    json_stringify_plain,
)
from skillbook.diagnostics import Diagnostic
from skillbook.model import Frontmatter
from skillbook.pipeline.parse.json_readback import reads_as_flow, reloads_as_itself
from skillbook.pipeline.parse.line_parser import line_entries
from skillbook.pipeline.parse.yaml_simple import simple_block

_BLOCK_SCALAR = re.compile(r"[|>][+-]?(?:[0-9]+)?[+-]?\Z")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# OpenClaw's `key in merged` test is true for these before any assignment.
_PROTO_KEYS = OBJECT_PROTOTYPE_KEYS


def parse_frontmatter_block(
    block: str, *, path: Path | None = None, block_line: int = 2
) -> tuple[Frontmatter, tuple[Diagnostic, ...]]:
    """Parse a frontmatter block (text between the ``---`` lines) as OpenClaw does (§2.3)."""
    frontmatter, diags, _ = frontmatter_block(block, path, block_line)
    return frontmatter, diags


#: What the line parser says of a key: (value, kind, raw inline text, 0-based line).
_LineEntry = tuple[str, str, str, int]
#: Values whose string view reads back as themselves (skillbook.pipeline.parse.json_readback), by key.
_Reloaded = Mapping[str, Any]
NONE_RELOADED: _Reloaded = MappingProxyType({})


def frontmatter_block(
    block: str, path: Path | None, block_line: int
) -> tuple[Frontmatter, tuple[Diagnostic, ...], _Reloaded]:
    if not block:
        return Frontmatter(), (), NONE_RELOADED
    simple = simple_block(block)
    # The fast path reads every row as printable text but a comment: with no comment
    # row, it has seen every character, and no control character is there.
    if simple is not None and (
        (block[0] != "#" and "\n#" not in block) or _CONTROL.search(block) is None
    ):
        frontmatter, reloaded = _simple_frontmatter(*simple, block_line=block_line)
        return frontmatter, (), reloaded
    return _full_frontmatter(block, path, block_line)


def _full_frontmatter(
    block: str, path: Path | None, block_line: int
) -> tuple[Frontmatter, tuple[Diagnostic, ...], _Reloaded]:
    """Any other block: YAML and OpenClaw's line parser, merged (the line parser's
    reading alone when YAML refuses the block)."""
    diags: list[Diagnostic] = []
    where: dict[str, Any] = {"path": path}
    _report_control(block, block_line, diags, where)
    line_parsed = line_entries(block)
    parsed, key_lines = _load_yaml(block, block_line, diags, where)

    lines: dict[str, int] = {k: block_line + e[3] for k, e in line_parsed.items()}
    if parsed is None:
        values = js_key_order({k: e[0] for k, e in line_parsed.items()})
        return (
            Frontmatter(
                values=MappingProxyType(values),
                data=MappingProxyType(dict(values)),
                yaml_ok=False,
                lines=MappingProxyType(lines),
            ),
            tuple(diags),
            NONE_RELOADED,
        )
    merged, data = _merged_views(parsed, line_parsed)
    for raw_key, line in key_lines.items():
        key = js_trim(raw_key)
        if key:
            lines[key] = block_line + line - 1
    return (
        Frontmatter(
            values=MappingProxyType(js_key_order(merged)),
            data=MappingProxyType(data),
            yaml_ok=True,
            lines=MappingProxyType(lines),
        ),
        tuple(diags),
        NONE_RELOADED,
    )


def _report_control(
    block: str, block_line: int, diags: list[Diagnostic], where: dict[str, Any]
) -> None:
    control = _CONTROL.search(block)
    if control is not None:
        diags.append(
            dg.warning(
                "parse.control-chars",
                f"the frontmatter holds the control character U+{ord(control.group()):04X}; "
                "remove it",
                line=block_line + block.count("\n", 0, control.start()),
                **where,
            )
        )


def _merged_views(
    parsed: dict[str, Any], line_parsed: Mapping[str, _LineEntry]
) -> tuple[dict[str, str], dict[str, Any]]:
    """One pass over the YAML mapping builds both views: ``(string view, data)``.

    The string view is OpenClaw's coercion (strings trimmed, scalars via String(),
    objects as JSON), where the line parser's inline text wins for a structured value
    that holds a `:`; keys only the line parser found keep its text."""
    merged: dict[str, str] = {}
    data: dict[str, Any] = {}
    for raw_key, value in parsed.items():
        key = js_trim(raw_key)
        if not key:
            continue
        data[key] = value
        if value is None or key == "__proto__":  # JS drops `__proto__` assignments
            continue
        text = _string_view(value, line_parsed.get(key))
        if text is not None:
            merged[key] = text
    for key, entry in line_parsed.items():
        if key not in merged and key not in _PROTO_KEYS:
            merged[key] = entry[0]
    return merged, data


def _string_view(value: Any, entry: _LineEntry | None) -> str | None:
    """One YAML value in OpenClaw's string view (``entry``: the line parser's, or None)."""
    if type(value) is str:
        return js_trim(value)
    if isinstance(value, (bool, int, float)):
        return js_string(value)
    if isinstance(value, (dict, list)):
        # Stringified even when the inline text wins: a value too deep to
        # stringify fails the parse either way.
        text = json_stringify(value)
        if (
            entry is not None
            and entry[1] == "inline"
            and not _BLOCK_SCALAR.match(entry[2])
            and ":" in entry[0]
        ):
            return entry[0]
        return text
    if isinstance(value, str):  # pragma: no cover - the loader builds exact types
        return js_trim(value)
    return None


def _simple_frontmatter(
    data: dict[str, Any], key_lines: dict[str, int], flows: dict[str, str], *, block_line: int
) -> tuple[Frontmatter, _Reloaded]:
    """A block of plain ``key: value`` lines (:mod:`skillbook.pipeline.parse.yaml_simple`): YAML gives
    every key a value, and OpenClaw's line parser finds the same keys in the same order
    (its only say is the inline text of a one-line flow value that holds a ``:``), so
    the line parser is not run."""
    merged: dict[str, str] = {}
    reloaded: dict[str, Any] = {}
    for key, value in data.items():
        if type(value) is str:
            merged[key] = js_trim(value)
        elif isinstance(value, (dict, list)):
            # A one-line flow value's own text wins when it holds a `:` (see above);
            # the line parser reads a nested block as multi-line text, which never wins.
            raw = flows.get(key)
            if raw is not None and ":" in raw:
                merged[key] = raw
                if reads_as_flow(raw):
                    reloaded[key] = value
                continue
            # Keys here are strings (the fast path's), as json_stringify_plain needs.
            plain = json_stringify_plain(value)
            text = merged[key] = json_stringify(value) if plain is None else plain
            if reloads_as_itself(text):
                reloaded[key] = value
        else:
            merged[key] = js_string(value)
    if block_line != 1:
        shift = block_line - 1
        key_lines = {key: line + shift for key, line in key_lines.items()}
    frontmatter = Frontmatter(
        # No key of this path starts with a digit (see _yaml_simple._LINE): JavaScript's
        # key order is the insertion order.
        MappingProxyType(merged),
        MappingProxyType(data),
        True,
        MappingProxyType(key_lines),
    )
    return frontmatter, reloaded or NONE_RELOADED


#: What to do about libyaml's commonest complaints, by a phrase of its message; the
#: usual cause (an unquoted ``: ``) otherwise. A tab or an open quote told to "quote
#: values" sent authors looking for a colon that was not the problem.
_YAML_ADVICE = (
    ("tab character", "indent with spaces, not tabs"),
    ("end of stream", "close the quote or bracket left open"),
    ("expected ','", "close the bracket, and separate its items with commas"),
    ("expected key", "line the keys up at the same indentation"),
)


def _yaml_advice(problem: str) -> str:
    for phrase, advice in _YAML_ADVICE:
        if phrase in problem:
            return advice
    return "quote values that contain ': '"


def _load_yaml(
    block: str, block_line: int, diags: list[Diagnostic], where: dict[str, Any]
) -> tuple[dict[str, Any] | None, dict[str, int]]:
    from skillbook.pipeline.parse.yaml_core import YamlError, load_core_with_lines

    try:
        parsed, key_lines = load_core_with_lines(block, fast=False)
    except YamlError as exc:
        line = block_line + exc.line - 1 if exc.line is not None else None
        code, severity, advice = {
            "duplicate-key": ("parse.yaml-duplicate-key", dg.warning, "remove one of them"),
            "alias-bomb": ("parse.yaml-alias-bomb", dg.warning, "remove the YAML aliases"),
            "too-deep": ("parse.yaml-too-deep", dg.warning, "flatten the frontmatter"),
        }.get(exc.kind, ("parse.yaml-invalid", dg.info, _yaml_advice(str(exc))))
        diags.append(
            severity(
                code,
                f"frontmatter is not valid YAML ({exc}); OpenClaw's line parser was used "
                f"instead ({advice})",
                line=line,
                **where,
            )
        )
        return None, {}
    if parsed is None:
        diags.append(
            dg.warning(
                "parse.empty-frontmatter",
                "the frontmatter holds no YAML values (only blanks or comments)",
                line=block_line,
                **where,
            )
        )
        return None, {}
    if not isinstance(parsed, dict):
        diags.append(
            dg.warning(
                "parse.yaml-not-mapping",
                f"the frontmatter is a YAML {type(parsed).__name__}, not a mapping of "
                "`key: value` lines; OpenClaw's line parser was used instead",
                line=block_line,
                **where,
            )
        )
        return None, {}
    return parsed, key_lines
