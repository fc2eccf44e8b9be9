"""Caching has one home: the file-system helpers and the configuration report to no cache.

``skillbook.base`` and ``skillbook.config`` sit below the pipeline; the result cache's
footprint is recorded by the discovery stage and the book from what these return, so
neither imports anything of ``skillbook.pipeline`` (cache, discovery or any other
stage), at any level: module top, function bodies and ``TYPE_CHECKING`` blocks alike.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "skillbook"


def _imported(path: Path) -> list[tuple[int, str]]:
    """Every module ``path`` imports, anywhere in it, as (line, absolute name)."""
    package = ".".join(path.relative_to(SRC.parent).with_suffix("").parts[:-1])
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{anchor}.{base}" if base else anchor
            found.append((node.lineno, base))
            # `from skillbook import pipeline` names the package as an attribute.
            found.extend((node.lineno, f"{base}.{alias.name}") for alias in node.names)
    return found


@pytest.mark.parametrize("part", ["base", "config"])
def test_base_and_config_import_nothing_of_the_pipeline(part: str) -> None:
    modules = sorted((SRC / part).rglob("*.py"))
    assert modules, f"no modules under {SRC / part}"
    upward = [
        f"{path.relative_to(SRC.parent)}:{line} imports {name}"
        for path in modules
        for line, name in _imported(path)
        if name == "skillbook.pipeline" or name.startswith("skillbook.pipeline.")
    ]
    assert upward == []
