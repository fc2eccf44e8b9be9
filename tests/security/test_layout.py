"""The security package's modules import each other in one direction only (issue 19).

Every import counts, at any level (function bodies and ``TYPE_CHECKING`` blocks too);
the package's ``__init__`` only re-exports and is left out. ``cache`` and ``scanner``
used to import each other for ``rules_version``; it now has a home below both.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "skillbook" / "security"


def _imports(path: Path) -> set[str]:
    """The sibling modules of the security package that ``path`` imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "skillbook.security":
                found.update(alias.name for alias in node.names)
            elif node.module.startswith("skillbook.security."):
                found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("skillbook.security."):
                    found.add(alias.name.split(".")[2])
    return found


def _circles() -> list[list[str]]:
    modules = {p.stem: p for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    graph = {
        name: sorted(_imports(path) & modules.keys() - {name}) for name, path in modules.items()
    }
    circles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in graph[node]:
            if state.get(dep) == 1:
                circles.append([*stack[stack.index(dep) :], dep])
            elif dep not in state:
                visit(dep)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return circles


def test_security_modules_import_no_circle() -> None:
    circles = _circles()
    assert circles == [], " ; ".join(" -> ".join(c) for c in circles)


def test_rules_version_lives_below_the_cache_and_the_scanner() -> None:
    assert "scanner" not in _imports(PACKAGE / "cache.py")
    assert "rules_version" in _imports(PACKAGE / "cache.py")
    assert not {"cache", "scanner"} & _imports(PACKAGE / "rules_version.py")
