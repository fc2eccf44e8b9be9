"""OpenClaw 2026.9's frontmatter rules (``markdown-core/src/frontmatter.ts``).

Input: a SKILL.md's text (already decoded, BOM stripped) or a frontmatter block.
Output: the block as 2026.9 finds it (:func:`split_frontmatter_exact`: the closing
``---`` must be a line of its own) and whether its YAML is a mapping once a free-text
field on the failing line is quoted (:func:`recovered`, 2026.9's
``normalizeFreeformFieldAtError``). :mod:`skillbook.parse` applies them when a compat
profile's :class:`~skillbook.profile.FrontmatterRules` say so.
"""

from __future__ import annotations

import re

from skillbook._js import JS_WHITESPACE, js_trim, json_quote
from skillbook.profile import FrontmatterRules

__all__ = ["recover_freeform", "recovered", "split_frontmatter_exact"]

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


def recover_freeform(block: str, line: int | None, fields: tuple[str, ...]) -> str | None:
    """2026.9's ``normalizeFreeformFieldAtError``: the block with the value on the failing
    line JSON-quoted, when that line is a top-level free-text field; else None."""
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
    if key != "description" and ": " not in raw:
        return None
    if len(raw) >= 2 and raw[0] in "\"'" and raw[-1] == raw[0]:
        raw = raw[1:-1]
    lines[line - 1] = f"{key}: {json_quote(raw)}"
    return "\n".join(lines)


def recovered(block: str, rules: FrontmatterRules) -> tuple[str, str | None]:
    """The block after at most one re-quoting per free-text field, and why it is still
    invalid (None: it is a YAML mapping now)."""
    current = block
    for _ in range(len(rules.recovered_fields) + 1):
        ok, line = _yaml_error_line(current)
        if ok:
            return current, None
        fixed = recover_freeform(current, line, rules.recovered_fields)
        if fixed is None or fixed == current:
            break
        current = fixed
    where = f" (line {line + 1})" if line is not None else ""
    return block, f"the frontmatter is not a valid YAML mapping{where}"


def _yaml_error_line(block: str) -> tuple[bool, int | None]:
    """Whether ``block`` is a YAML mapping, and the 1-based line of the error if not."""
    from skillbook._yaml import YamlError, load_core_with_lines

    try:
        parsed, _ = load_core_with_lines(block)
    except YamlError as exc:
        return False, exc.line
    return isinstance(parsed, dict), None
