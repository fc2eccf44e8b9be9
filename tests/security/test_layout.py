"""The security package's modules import each other in one direction only (issue 19).

Every import counts, at any level (function bodies and ``TYPE_CHECKING`` blocks too);
the package's ``__init__`` only re-exports and is left out. ``cache`` and ``scanner``
used to import each other for ``rules_version``; it now has a home below both.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

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


def test_every_rule_family_keys_the_cached_results() -> None:
    # rules_agent, rules_leak and rules_system were left out of the digest: a change to
    # their patterns kept serving scan results cached under the old rules.
    from skillbook.security import rules_version, scanner

    assert set(scanner._MODULES) <= set(rules_version.MODULES)


def test_a_pattern_inside_a_rule_table_changes_the_rules_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Most rules keep their patterns in tables of tuples; the digest reads inside them.
    import re

    from skillbook.security import rules_agent, rules_exfil, rules_version

    rules_version.rules_version.cache_clear()
    before = rules_version.rules_version()
    changed = re.compile("changed")
    words, _, raw = rules_exfil._NET[0]  # (keywords, pattern, raw) rows
    _, severity, message = rules_agent._COVERT[0]  # (pattern, severity, message) rows
    for module, name, row in (
        (rules_exfil, "_NET", (words, changed, raw)),
        (rules_agent, "_COVERT", (changed, severity, message)),
    ):
        with monkeypatch.context() as patch:
            patch.setattr(module, name, (row, *getattr(module, name)[1:]))
            rules_version.rules_version.cache_clear()
            assert rules_version.rules_version() != before, name
    rules_version.rules_version.cache_clear()
    assert rules_version.rules_version() == before
