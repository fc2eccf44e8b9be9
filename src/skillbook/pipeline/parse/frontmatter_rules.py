"""OpenClaw 2026.9's frontmatter rules (``markdown-core/src/frontmatter.ts``).

Input: a SKILL.md's text (already decoded, BOM stripped) or a frontmatter block.
Output: the block as 2026.9 finds it (:func:`split_frontmatter_exact`: the closing
``---`` must be a line of its own) and whether its YAML is a mapping once a free-text
field on the failing line is quoted (:func:`recovered`, 2026.9's
``normalizeFreeformFieldAtError``). :mod:`skillbook.pipeline.parse.skill_file` applies them when a compat
profile's :class:`~skillbook.config.profile.FrontmatterRules` say so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from skillbook.base.js import JS_WHITESPACE, js_trim, json_quote
from skillbook.config.profile import FrontmatterRules

__all__ = ["Recovery", "recover_freeform", "recovered", "split_frontmatter_exact"]

# 2026.9's delimiters: `---` plus optional blanks, alone on its line (JS `[^\S\n]`).
_H_SPACE = JS_WHITESPACE.replace("\n", "")
_OPENING = re.compile(f"---[{_H_SPACE}]*\n")
_CLOSING = re.compile(f"\n---[{_H_SPACE}]*(?:\n|\\Z)")
_CLOSING_AT = re.compile(f"---[{_H_SPACE}]*(?:\n|\\Z)")
_FREEFORM_LINE = re.compile(
    f"(?:([A-Za-z0-9_-]+)|\"([A-Za-z0-9_-]+)\"|'([A-Za-z0-9_-]+)'):[{JS_WHITESPACE}]*(.*)\\Z"
)
_BLOCK_INDICATOR = re.compile(r"[|>](?:[1-9][+-]?|[+-][1-9]?)?\Z")


def split_frontmatter_exact(text: str) -> tuple[str | None, str, int, int, bool]:
    """The block as OpenClaw 2026.9 finds it (``extractFrontmatterBlockFromNormalized``).

    Returns ``(block, body, block_line, body_line, opened)``; ``opened`` says whether the
    first line is a ``---`` delimiter (so a missing closing line is an error).
    """
    normalized = text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
    opening = _OPENING.match(normalized)
    if opening is None:
        return None, normalized, 0, 1, False
    start = opening.end()
    closing = _first_closing(normalized, start)
    if closing is None:
        return None, normalized, 0, 1, True
    block = normalized[start : closing.start()]
    body_line = normalized.count("\n", 0, closing.end()) + 1
    return block, normalized[closing.end() :], 2, body_line, True


def _first_closing(text: str, start: int) -> re.Match[str] | None:
    # `(?:^|\n)---…`: the tail itself may start with the delimiter (an empty block).
    at_start = _CLOSING_AT.match(text, start)
    return at_start if at_start is not None else _CLOSING.search(text, start)


def recover_freeform(
    block: str, line: int | None, fields: tuple[str, ...], *, implicit_key: bool = True
) -> str | None:
    """2026.9's ``normalizeFreeformFieldAtError``: the block with the value on the failing
    line JSON-quoted, when that line is a top-level free-text field; else None.

    ``implicit_key``: the error is a ``: `` inside a plain value (the JS package's
    ``BLOCK_AS_IMPLICIT_KEY``). Only ``description`` is re-quoted for any other error;
    ``read_when`` and ``summary`` only for that one (an unclosed ``[`` or a stray ``}``
    in them keeps the skill out, as in 2026.9.6)."""
    lines = block.split("\n")
    if line is None or not 1 <= line <= len(lines):
        return None
    match = _FREEFORM_LINE.match(lines[line - 1])
    if match is None:
        return None
    key = match.group(1) or match.group(2) or match.group(3)
    raw = js_trim(match.group(4))
    if not raw or key not in fields or _BLOCK_INDICATOR.match(raw):
        return None
    if key != "description" and (not implicit_key or ": " not in raw):
        return None
    if len(raw) >= 2 and raw[0] in "\"'" and raw[-1] == raw[0]:
        raw = raw[1:-1]
    lines[line - 1] = f"{key}: {json_quote(raw)}"
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Recovery:
    """What 2026.9's rules made of a block: the block to read (re-quoted where they
    quoted it), why it is still refused (None: it loads), and the fields re-quoted, each
    with its 1-based line in the block."""

    block: str
    invalid: str | None = None
    requoted: tuple[tuple[str, int], ...] = ()


def recovered(block: str, rules: FrontmatterRules) -> Recovery:
    """The block after at most one re-quoting per free-text field, and why it is still
    invalid (None: it is a YAML mapping now)."""
    current = block
    requoted: list[tuple[str, int]] = []
    line: int | None = None
    for _ in range(len(rules.recovered_fields) + 1):
        error = _yaml_error(current)
        if error is None:
            return Recovery(current, None, tuple(requoted))
        line, implicit_key = error
        fixed = recover_freeform(current, line, rules.recovered_fields, implicit_key=implicit_key)
        if fixed is None or fixed == current:
            break
        assert line is not None  # recover_freeform needs it
        requoted.append((_key_at(current, line), line))
        current = fixed
    where = f" (line {line + 1})" if line is not None else ""
    return Recovery(block, f"the frontmatter is not a valid YAML mapping{where}")


def _key_at(block: str, line: int) -> str:
    match = _FREEFORM_LINE.match(block.split("\n")[line - 1])
    assert match is not None  # recover_freeform matched this line
    return match.group(1) or match.group(2) or match.group(3)


def _yaml_error(block: str) -> tuple[int | None, bool] | None:
    """None when ``block`` is a YAML mapping as 2026.9.6 reads it; else the 1-based line
    its YAML package reports the error on, and whether the error is a ``: `` inside a
    plain value.

    Nesting past skillbook's safety bound is no error to 2026.9.6 (its YAML package reads
    a thousand levels and more), so it does not keep the skill out here; the frontmatter
    is then read by the line parser, with a ``parse.yaml-too-deep`` warning."""
    from skillbook.pipeline.parse.yaml_core import YamlError, load_core_with_lines

    try:
        parsed, _ = load_core_with_lines(block)
    except YamlError as exc:
        if exc.kind == "too-deep":
            return None
        line = exc.line
        # The loader reads the block with a final line break; an error at the end of
        # the input (an unclosed `[`, `{` or quote) is then on the line after the last.
        # The JS package reports it at the end of the text itself, which is the last
        # line of the block (2026.9's block has no final line break of its own).
        if line is not None:
            line = min(line, block.count("\n") + 1)
        return line, "mapping values are not allowed" in str(exc)
    return None if isinstance(parsed, dict) else (None, False)
