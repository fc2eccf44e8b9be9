"""Frontmatters nested very deep, shared by the parser's depth tests and their oracle run
(``tests/conformance/test_frontmatter_malformed_oracle.py``); not a test module."""

from __future__ import annotations

STYLES = ("flow-seq", "flow-map", "block-map", "block-seq", "seq-of-maps")


def nested(depth: int, style: str) -> str:
    """``depth`` collections, one inside the other, as the value of a key (after ``: ``)."""
    if style == "flow-seq":
        return "[" * depth + "]" * depth
    if style == "flow-map":
        return "{a: " * depth + "1" + "}" * depth
    if style == "block-map":
        rows = "".join("  " * (i + 1) + f"k{i}:\n" for i in range(depth))
        return "\n" + rows + "  " * (depth + 1) + "v"
    if style == "block-seq":
        rows = "".join("  " * (i + 1) + "-\n" for i in range(depth))
        return "\n" + rows + "  " * (depth + 1) + "x"
    rows = "".join("  " * i + "- k:\n" for i in range(1, depth))
    return "\n" + rows + "  " * depth + "- x"


def collections(depth: int, style: str) -> int:
    """How many collections :func:`nested` opens (a ``- k:`` row opens two)."""
    return 2 * depth - 1 if style == "seq-of-maps" else depth


def deep_skill(depth: int, style: str, key: str = "metadata") -> str:
    return f"---\nname: deep\ndescription: Deep one\n{key}: {nested(depth, style)}\n---\nBody\n"
