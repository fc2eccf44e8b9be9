"""When the parser's own value of a ``metadata`` text is what ``JSON.parse`` gives.

Input: the string view the parser made of a frontmatter value (the text OpenClaw's
manifest reader parses again). Output: whether parsing that text would give back the
value the parser already holds, with the same types and key order, so that
:func:`skillbook.pipeline.parse.manifest.resolve_metadata` can be handed the value instead of
parsing the text a second time. Each test is conservative: a text it lets through is
one the two readings provably agree on; anything else is parsed as before. Nothing
here parses or allocates a value.
"""

from __future__ import annotations

import re

__all__ = ["MAX_RELOAD_DEPTH", "reads_as_flow", "reloads_as_itself"]

# A number or null in compact JSON follows `:`, `[` or `,` (a match inside a string only
# sends the value down the slow path). `null` may stand for NaN or an infinity.
_JSON_NUMBER = re.compile(r"[:,\[](?:-?[0-9]|null)")
#: Deeper values are left to the parse (its own nesting limit decides).
MAX_RELOAD_DEPTH = 100
# A string that starts with a digit may be a key JavaScript moves to the front.
_DIGIT_STRING = re.compile(r'"[0-9]')


def reloads_as_itself(text: str) -> bool:
    """Whether ``JSON.parse(text)`` gives back the value :func:`~skillbook.base.js.json_stringify`
    made ``text`` of, for the YAML fast path's values (string keys, no duplicates).
    Numbers are left to the parse (JavaScript prints ``1.0`` as ``1``, rounds big
    integers and writes NaN as ``null``), and so are surrogates (an escaped pair reads
    back as one character) and deep nesting."""
    return (
        text[:1] in ("{", "[")
        and "\\ud" not in text
        and _JSON_NUMBER.search(text) is None
        and text.count("[") + text.count("{") <= MAX_RELOAD_DEPTH
    )


def reads_as_flow(raw: str) -> bool:
    """Whether ``JSON.parse(raw)`` gives the value the YAML fast path read from the
    one-line flow ``raw``. That path reads only strict JSON without escapes, duplicate
    keys or NaN, with the same decoder, and then puts array-index keys first as a
    JavaScript object does: so the two agree unless a string starts with a digit."""
    return _DIGIT_STRING.search(raw) is None
