"""Parse the text of one SKILL.md into a :class:`~skillbook.model.ParsedSkillFile`.

Input: the file's text or bytes (and optionally its path, for diagnostics).
Output: the frontmatter in OpenClaw's string view and a structured view, the body,
the ``metadata.openclaw`` manifest, the invocation policy, the tool dispatch and
every diagnostic found on the way. Nothing here touches the disk or raises on bad
input; discovery decides what to load.

The frontmatter rules are OpenClaw's ``parseFrontmatterBlock`` (spec §2.2-2.4): the
block is parsed by YAML (core schema) *and* by a line parser, and the two results are
merged. Where JavaScript semantics differ from Python's (``\\s``, ``\\w``, ``trim``,
object key order) we reproduce JavaScript's.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from skillbook import diagnostics as dg
from skillbook._frontmatter_rules import recovered, split_frontmatter_exact
from skillbook._js import (
    JS_WHITESPACE,
    OBJECT_PROTOTYPE_KEYS,
    js_key_order,
    js_string,
    js_trim,
    json_stringify,
    json_stringify_plain,
)
from skillbook._json_readback import reads_as_flow, reloads_as_itself
from skillbook._yaml_simple import simple_block
from skillbook.diagnostics import Diagnostic
from skillbook.manifest import DEFAULT_METADATA_KEY, resolve_metadata
from skillbook.model import (
    CommandDispatch,
    Frontmatter,
    InvocationPolicy,
    ParsedSkillFile,
)
from skillbook.profile import FrontmatterRules

_TRUTHY = frozenset({"true", "1", "yes", "on"})
_FALSY = frozenset({"false", "0", "no", "off"})

# `^([\w-]+):\s*(.*)$` with JavaScript's classes: `\w` is ASCII, `\s` is JS
# whitespace and `.` stops at any JS line terminator.
_log = logging.getLogger("skillbook.parse")
_LINE_ENTRY = re.compile(rf"([A-Za-z0-9_-]+):[{JS_WHITESPACE}]*([^\n\r\u2028\u2029]*)\Z")
_BLOCK_SCALAR = re.compile(r"[|>][+-]?(?:[0-9]+)?[+-]?\Z")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# OpenClaw's `key in merged` test is true for these before any assignment.
_PROTO_KEYS = OBJECT_PROTOTYPE_KEYS


def parse_bool(value: str | None, default: bool) -> bool:
    """OpenClaw's ``parseFrontmatterBool``: yes/no words, anything else is the default."""
    if value is None:
        return default
    word = js_trim(value).lower()
    if word in _TRUTHY:
        return True
    if word in _FALSY:
        return False
    return default


def decode_text(data: str | bytes) -> tuple[str, list[Diagnostic], bool]:
    """Bytes → text, with a BOM stripped; returns (text, diagnostics, had_bom)."""
    diags: list[Diagnostic] = []
    if isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            text = raw.decode("utf-8", errors="replace")
            line = raw.count(b"\n", 0, exc.start) + 1
            diags.append(
                dg.warning(
                    "parse.invalid-utf8",
                    f"invalid UTF-8 at byte {exc.start}; undecodable bytes were replaced "
                    "by U+FFFD (save the file as UTF-8)",
                    line=line,
                )
            )
    else:
        text = data
    had_bom = text.startswith("\ufeff")
    if had_bom:
        text = text[1:]
        diags.append(
            dg.warning(
                "parse.bom",
                "the file starts with a UTF-8 byte-order mark; skillbook strips it, "
                "OpenClaw then sees no frontmatter (save without BOM)",
                line=1,
            )
        )
    if "\x00" in text:
        diags.append(
            dg.warning(
                "parse.binary",
                "the file holds NUL bytes; is it really a Markdown text file?",
                line=text.count("\n", 0, text.index("\x00")) + 1,
            )
        )
    return text, diags, had_bom


def split_frontmatter(text: str) -> tuple[str | None, str, int, int]:
    """Find the frontmatter block as OpenClaw does (§2.2).

    Returns ``(block, body, block_line, body_line)``: ``block`` is None when there is
    no terminated block; ``block_line`` is the 1-based line where the block starts.
    Line endings are normalised to ``\\n`` in both block and body.
    """
    normalized = text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
    if not normalized.startswith("---"):
        return None, normalized, 0, 1
    end = normalized.find("\n---", 3)
    if end == -1:
        return None, normalized, 0, 1
    block = normalized[4:end]
    block_line = normalized.count("\n", 0, 4) + 1
    newline = normalized.find("\n", end + 1)
    body_start = len(normalized) if newline == -1 else newline + 1
    body_line = normalized.count("\n", 0, body_start) + 1
    return block, normalized[body_start:], block_line, body_line


def _line_entries(block: str) -> dict[str, tuple[str, str, str, int]]:
    """OpenClaw's line parser: key → (value, kind, raw inline text, 0-based line)."""
    result: dict[str, tuple[str, str, str, int]] = {}
    lines = block.split("\n")
    count = len(lines)
    i = 0
    while i < count:
        match = _LINE_ENTRY.match(lines[i])
        if match is None:
            i += 1
            continue
        key = match.group(1)
        inline = js_trim(match.group(2))
        if not inline and i + 1 < count and lines[i + 1].startswith((" ", "\t")):
            j = i + 1
            while j < count and (not lines[j] or lines[j].startswith((" ", "\t"))):
                j += 1
            value = js_trim("\n".join(lines[i + 1 : j]))
            if value:
                _js_assign(result, key, (value, "multiline", inline, i))
            i = j
            continue
        value = inline
        if len(value) >= 1 and (
            (value[0] == '"' and value[-1] == '"') or (value[0] == "'" and value[-1] == "'")
        ):
            value = value[1:-1]
        if value:
            _js_assign(result, key, (value, "inline", inline, i))
        i += 1
    return result


def _js_assign(target: dict[str, Any], key: str, value: Any) -> None:
    # `obj["__proto__"] = x` does not create a property in JavaScript.
    if key != "__proto__":
        target[key] = value


def parse_frontmatter_block(
    block: str, *, path: Path | None = None, block_line: int = 2
) -> tuple[Frontmatter, tuple[Diagnostic, ...]]:
    """Parse a frontmatter block (text between the ``---`` lines) as OpenClaw does (§2.3)."""
    frontmatter, diags, _ = _frontmatter_block(block, path, block_line)
    return frontmatter, diags


#: Values whose string view reads back as themselves (skillbook._json_readback), by key.
_Reloaded = Mapping[str, Any]
_NONE_RELOADED: _Reloaded = MappingProxyType({})


def _frontmatter_block(
    block: str, path: Path | None, block_line: int
) -> tuple[Frontmatter, tuple[Diagnostic, ...], _Reloaded]:
    if not block:
        return Frontmatter(), (), _NONE_RELOADED
    simple = simple_block(block)
    # The fast path reads every row as printable text but a comment: with no comment
    # row, it has seen every character, and no control character is there.
    if simple is not None and (
        (block[0] != "#" and "\n#" not in block) or _CONTROL.search(block) is None
    ):
        frontmatter, reloaded = _simple_frontmatter(*simple, block_line=block_line)
        return frontmatter, (), reloaded
    control = _CONTROL.search(block)
    diags: list[Diagnostic] = []
    where: dict[str, Any] = {"path": path}
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
    line_parsed = _line_entries(block)
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
            _NONE_RELOADED,
        )

    # One pass over the YAML mapping builds both views. The string view is OpenClaw's
    # coercion (strings trimmed, scalars via String(), objects as JSON), where the
    # line parser's inline text wins for a structured value that holds a `:`.
    merged: dict[str, str] = {}
    data: dict[str, Any] = {}
    for raw_key, value in parsed.items():
        key = js_trim(raw_key)
        if not key:
            continue
        data[key] = value
        if value is None or key == "__proto__":  # JS drops `__proto__` assignments
            continue
        if type(value) is str:
            merged[key] = js_trim(value)
        elif isinstance(value, (bool, int, float)):
            merged[key] = js_string(value)
        elif isinstance(value, (dict, list)):
            # Stringified even when the inline text wins: a value too deep to
            # stringify fails the parse either way.
            merged[key] = json_stringify(value)
            entry = line_parsed.get(key)
            if (
                entry is not None
                and entry[1] == "inline"
                and not _BLOCK_SCALAR.match(entry[2])
                and ":" in entry[0]
            ):
                merged[key] = entry[0]
        elif isinstance(value, str):  # pragma: no cover - the loader builds exact types
            merged[key] = js_trim(value)
    for key, entry in line_parsed.items():
        if key not in merged and key not in _PROTO_KEYS:
            merged[key] = entry[0]
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
        _NONE_RELOADED,
    )


def _simple_frontmatter(
    data: dict[str, Any], key_lines: dict[str, int], flows: dict[str, str], *, block_line: int
) -> tuple[Frontmatter, _Reloaded]:
    """A block of plain ``key: value`` lines (:mod:`skillbook._yaml_simple`): YAML gives
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
    return frontmatter, reloaded or _NONE_RELOADED


def _load_yaml(
    block: str, block_line: int, diags: list[Diagnostic], where: dict[str, Any]
) -> tuple[dict[str, Any] | None, dict[str, int]]:
    from skillbook._yaml import YamlError, load_core_with_lines

    try:
        parsed, key_lines = load_core_with_lines(block, fast=False)
    except YamlError as exc:
        line = block_line + exc.line - 1 if exc.line is not None else None
        code, severity, advice = {
            "duplicate-key": ("parse.yaml-duplicate-key", dg.warning, "remove one of them"),
            "alias-bomb": ("parse.yaml-alias-bomb", dg.warning, "remove the YAML aliases"),
            "too-deep": ("parse.yaml-too-deep", dg.warning, "flatten the frontmatter"),
        }.get(exc.kind, ("parse.yaml-invalid", dg.info, "quote values that contain ': '"))
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


# The four possible policies, shared: a build makes one per skill otherwise.
_POLICIES = {
    (user, model): InvocationPolicy(user_invocable=user, disable_model_invocation=model)
    for user in (True, False)
    for model in (True, False)
}
_DEFAULT_POLICY = _POLICIES[True, False]


def resolve_invocation(values: Mapping[str, str]) -> InvocationPolicy:
    """§2.4: ``user-invocable`` (default true), ``disable-model-invocation`` (default false)."""
    if "user-invocable" not in values and "disable-model-invocation" not in values:
        return _DEFAULT_POLICY  # what the defaults give (the common case)
    return _POLICIES[
        parse_bool(values.get("user-invocable"), True),
        parse_bool(values.get("disable-model-invocation"), False),
    ]


def _first(values: Mapping[str, str], *keys: str) -> str:
    # JavaScript `a ?? b ?? ""`: the first key that is present, even if blank.
    for key in keys:
        value = values.get(key)
        if value is not None:
            return value
    return ""


def resolve_dispatch(
    values: Mapping[str, str], *, path: Path | None = None, lines: Mapping[str, int] | None = None
) -> tuple[CommandDispatch | None, tuple[Diagnostic, ...]]:
    """§2.4/§6.1: ``command-dispatch: tool`` with ``command-tool`` → a tool dispatch."""
    if "command-dispatch" not in values and "command_dispatch" not in values:
        return None, ()  # the common case: no dispatch asked for
    lines = lines or {}
    kind = js_trim(_first(values, "command-dispatch", "command_dispatch")).lower()
    if kind != "tool":
        return None, ()
    line = lines.get("command-dispatch", lines.get("command_dispatch"))
    tool = js_trim(_first(values, "command-tool", "command_tool"))
    if not tool:
        return None, (
            dg.warning(
                "parse.dispatch-no-tool",
                "`command-dispatch: tool` needs `command-tool: <tool name>`; dispatch ignored",
                path=path,
                line=line,
            ),
        )
    mode = js_trim(_first(values, "command-arg-mode", "command_arg_mode")).lower()
    diags: tuple[Diagnostic, ...] = ()
    if mode and mode != "raw":
        diags = (
            dg.warning(
                "parse.arg-mode",
                f"`command-arg-mode: {mode}` is not supported; `raw` is used",
                path=path,
                line=lines.get("command-arg-mode", lines.get("command_arg_mode", line)),
            ),
        )
    return CommandDispatch(tool_name=tool), diags


def parse_skill_text(
    text: str | bytes, *, path: Path | None = None, rules: FrontmatterRules | None = None
) -> ParsedSkillFile:
    """Parse one SKILL.md (text or bytes). Never raises; problems become diagnostics.

    ``rules`` are a compatibility profile's frontmatter rules (default: 2026.4's)."""
    try:
        return _parse(text, path, rules)
    except Exception as exc:
        # Bad input has its own diagnostics: reaching here is a bug in skillbook. It must
        # not take discovery down, and the traceback must not be lost.
        _log.error("internal error while parsing %s", path or "<text>", exc_info=exc)
        return ParsedSkillFile(
            frontmatter=Frontmatter(),
            body="",
            body_line=1,
            metadata=None,
            invocation=InvocationPolicy(),
            dispatch=None,
            diagnostics=(
                dg.error(
                    "parse.internal-error",
                    f"skillbook could not parse this file because of a bug in skillbook "
                    f"({type(exc).__name__}: {exc}); please report it with the file",
                    path=path,
                ),
            ),
        )


def _parse(text: str | bytes, path: Path | None, rules: FrontmatterRules | None) -> ParsedSkillFile:
    decoded, early, had_bom = decode_text(text)
    diags = [_with_path(d, path) for d in early] if early else []
    invalid: str | None = None
    if rules is not None and rules.exact_delimiters:
        block, body, block_line, body_line, opened = split_frontmatter_exact(decoded)
        if block is None and opened and rules.yaml_errors_invalid:
            invalid = "the `---` frontmatter block is never closed"
    else:
        block, body, block_line, body_line = split_frontmatter(decoded)
    if block and rules is not None and rules.yaml_errors_invalid:
        block, invalid = recovered(block, rules)
    if block is None:
        unterminated = decoded.startswith("---")
        diags.append(
            dg.warning(
                "parse.unterminated-frontmatter" if unterminated else "parse.no-frontmatter",
                "the `---` frontmatter block is never closed (add a line `---` after it)"
                if unterminated
                else "the file does not start with a `---` frontmatter block",
                path=path,
                line=1,
            )
        )
        frontmatter, reloaded = Frontmatter(), _NONE_RELOADED
    else:
        if not block:
            diags.append(
                dg.warning(
                    "parse.empty-frontmatter", "the frontmatter block is empty", path=path, line=1
                )
            )
        frontmatter, fm_diags, reloaded = _frontmatter_block(block, path, block_line)
        diags.extend(fm_diags)
    if invalid is not None:
        diags.append(
            dg.error(
                "parse.frontmatter-invalid",
                f"{invalid}; OpenClaw 2026.9 does not load this skill (fix the YAML, or "
                "quote values that contain ': ')",
                path=path,
                line=1,
            )
        )
    values = frontmatter.values
    # Without a `metadata` text resolve_metadata has nothing to read (half of all skills).
    if values.get(DEFAULT_METADATA_KEY):
        metadata, meta_diags = resolve_metadata(
            values,
            frontmatter.data,
            path=path,
            lines=frontmatter.lines,
            rules=rules,
            loaded=reloaded.get(DEFAULT_METADATA_KEY),
        )
        diags.extend(meta_diags)
    else:
        metadata = None
    dispatch = None
    if "command-dispatch" in values or "command_dispatch" in values:  # else: none asked for
        dispatch, dispatch_diags = resolve_dispatch(values, path=path, lines=frontmatter.lines)
        diags.extend(dispatch_diags)
    if block is not None and not js_trim(values.get("name") or ""):
        diags.append(
            dg.info(
                "parse.missing-name",
                "no `name` in the frontmatter; the folder name is used",
                path=path,
                line=block_line,
            )
        )
    if not js_trim(values.get("description") or ""):
        diags.append(
            dg.error(
                "parse.missing-description",
                "no `description` in the frontmatter: the skill is not loaded "
                "(add `description: <when to use this skill>`)",
                path=path,
                line=frontmatter.line_of("description") or (block_line or 1),
            )
        )
    return ParsedSkillFile(
        frontmatter=frontmatter,
        body=body,
        body_line=body_line,
        metadata=metadata,
        invocation=resolve_invocation(values),
        dispatch=dispatch,
        diagnostics=tuple(diags),
        had_bom=had_bom,
        has_frontmatter=block is not None,
        invalid=invalid is not None,
    )


def _with_path(diag: Diagnostic, path: Path | None) -> Diagnostic:
    if path is None or diag.path is not None:
        return diag
    return Diagnostic(diag.code, diag.severity, diag.message, path, diag.line, diag.skill)
