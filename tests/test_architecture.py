"""The layout is the architecture: the core never imports an edge, and has no import circles.

The core is every module directly in ``src/skillbook/`` (``__main__`` is the program's
entry point, not a stage). Edges are the packages beside it: today's and the ones
the next releases add. Every import counts, at any level: module top, functions,
``TYPE_CHECKING`` blocks, and module paths given as strings (lazy exports).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "skillbook"
EDGES = (
    "runtime",
    "mcp",
    "integrations",
    "cli",
    "install",
    "security",
    "sync",
    "registry",
    "hub",
    "selection",
    "experience",
    "agents",
)
_MODULE_STRING = re.compile(r"skillbook(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?::[A-Za-z_]\w*)?")
CORE = sorted(p for p in SRC.glob("*.py") if p.name != "__main__.py")


def imported(path: Path) -> set[str]:
    """Every ``skillbook…`` module ``path`` names in an import or a module-path string."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = "skillbook" + (f".{node.module}" if node.module else "")
            else:
                base = node.module or ""
            found.add(base)
            # `from skillbook import mcp` imports the edge package itself.
            found.update(f"{base}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and _MODULE_STRING.fullmatch(node.value)
        ):
            found.add(node.value.split(":")[0])
    return {name for name in found if name == "skillbook" or name.startswith("skillbook.")}


def edge_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in EDGES else None


@pytest.mark.parametrize("path", CORE, ids=lambda p: p.name)
def test_core_module_imports_no_edge_package(path: Path) -> None:
    edges = sorted(m for m in imported(path) if edge_of(m) is not None)
    assert edges == [], f"{path.name} (core) imports edge packages: {edges}"


def test_the_check_sees_every_kind_of_import(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from skillbook.mcp.client import X\n"
        "def f():\n    import skillbook.cli.app\n    from . import runtime\n"
        "_LAZY = {'Y': 'skillbook.distribution.install.recipes'}\n"
        "def g():\n    from skillbook import sync\n"
    )
    assert {m for m in imported(sample) if edge_of(m)} >= {
        "skillbook.mcp.client",
        "skillbook.cli.app",
        "skillbook.runtime",
        "skillbook.distribution.install.recipes",
        "skillbook.distribution.sync",
    }


def test_core_modules_import_no_circle() -> None:
    names = {p.stem for p in CORE}
    graph: dict[str, set[str]] = {}
    for path in CORE:
        deps = set()
        for module in imported(path):
            parts = module.split(".")
            if len(parts) > 1 and parts[1] in names and parts[1] != path.stem:
                deps.add(parts[1])
        graph[path.stem] = deps
    circles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                circles.append([*stack[stack.index(dep) :], dep])
            elif dep not in state:
                visit(dep)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    # The package's own __init__ lists every public name lazily; it is not a stage.
    circles = [c for c in circles if "__init__" not in c]
    assert circles == [], " ; ".join(" -> ".join(c) for c in circles)


RUNTIME = sorted((SRC / "runtime").rglob("*.py"))


@pytest.mark.parametrize("path", RUNTIME, ids=lambda p: p.name)
def test_the_runtime_knows_only_the_recorder_protocol_not_the_experience_engine(path: Path) -> None:
    found = sorted(m for m in imported(path) if edge_of(m) == "experience")
    assert found == [], f"runtime/{path.name} imports the experience engine: {found}"
