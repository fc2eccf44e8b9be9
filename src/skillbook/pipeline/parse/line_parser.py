"""OpenClaw's line parser for a frontmatter block (§2.3).

Input: the block's text (between the ``---`` lines). Output: key → (value, kind,
raw inline text, 0-based line) for every ``key: value`` line and indented
multi-line value, with JavaScript's semantics: ``\\s`` and ``\\w`` as JavaScript
reads them, ``trim``, surrounding quotes dropped, and no ``__proto__`` key. No I/O.
"""

from __future__ import annotations

import re
from typing import Any

from skillbook.base.js import JS_WHITESPACE, js_trim

# `^([\w-]+):\s*(.*)$` with JavaScript's classes: `\w` is ASCII, `\s` is JS
# whitespace and `.` stops at any JS line terminator.
_LINE_ENTRY = re.compile(rf"([A-Za-z0-9_-]+):[{JS_WHITESPACE}]*([^\n\r\u2028\u2029]*)\Z")


def line_entries(block: str) -> dict[str, tuple[str, str, str, int]]:
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
