"""Lone surrogates replaced, for text that must reach a codec or a tokenizer.

A folder name that is not UTF-8 reaches Python as surrogate escapes, and a YAML or
JSON5 escape (``"\\ud800"``) can write one into any value; no UTF-8 stream encodes
them and tokenizers refuse them. Where such text is printed, embedded or tokenized,
each lone surrogate becomes U+FFFD (as a UTF-8 decoder would show the bad byte).
"""

from __future__ import annotations

import re

__all__ = ["without_surrogates"]

_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def without_surrogates(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (the same ``str`` if none)."""
    return _SURROGATE_RE.sub("\ufffd", text) if _SURROGATE_RE.search(text) else text
