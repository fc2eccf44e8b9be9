"""The layout is the architecture: parts in one order, imports only downward, no circles.

``PARTS`` below is the order of the parts, bottom to top, written once (``docs/architecture.md``
draws the same picture). A module may import its own part and the parts below it; the package's
face (``skillbook/__init__.py``, which names every public name lazily) and its entry
(``__main__``) sit on top. Inside ``pipeline/`` the stages have their own order,
``PIPELINE_STAGES``. Every import counts, at any level: module top, function bodies,
``TYPE_CHECKING`` blocks, and module paths given as strings (lazy exports, entry points).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "skillbook"

# Bottom to top; the names of one inner tuple share a level (they may import each other, but
# not in a circle).
PARTS: tuple[tuple[str, ...], ...] = (
    ("base",),
    ("errors", "diagnostics", "model", "version"),
    ("config",),
    ("pipeline",),
    ("security",),
    ("selection",),
    ("runtime",),
    ("distribution",),
    ("experience",),
    ("mcp",),
    ("integrations",),
    ("cli",),
)
FACE = "skillbook"  # the package's __init__: every public name, lazily
ENTRY = "skillbook.__main__"
# `skillbook.pipeline` itself (its __init__) names the stages; it sits on top of them.
PIPELINE_STAGES: tuple[tuple[str, ...], ...] = (
    ("cache",),
    ("parse",),
    ("discovery",),
    ("gating",),
    ("prompt",),
    ("commands",),
    ("snapshot", "lookup", "validation"),
    ("book",),
)
MAX_PLAIN_MODULES = 10
_MODULE_STRING = re.compile(r"skillbook(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?::[A-Za-z_]\w*)?")


def _module_name(path: Path, root: Path = SRC) -> str:
    parts = ("skillbook", *path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: dict[str, Path] = {_module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def _resolve(name: str) -> str | None:
    """The module of the tree that ``name`` (a module, or a name inside one) lives in."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _logger_names(tree: ast.AST) -> set[int]:
    """Ids of the strings given to ``getLogger``: logger names, not modules."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name | ast.Attribute)
            and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) == "getLogger"
        ):
            found.update(id(arg) for arg in node.args)
    return found


def imported(path: Path, module: str | None = None) -> set[str]:
    """The modules of the tree that ``path`` imports, at any level, or names in a string."""
    module = module or _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    loggers = _logger_names(tree)
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{node.module}" if node.module else anchor
            else:
                base = node.module or ""
            # `from skillbook.runtime import agent` imports the module `agent`; a name
            # defined in the package imports the package.
            names.update(
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
                for alias in node.names
            )
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in loggers
            and _MODULE_STRING.fullmatch(node.value)
            and node.value.split(":")[0] in MODULES
        ):
            names.add(node.value.split(":")[0])
    found = {_resolve(name) for name in names if name.split(".")[0] == "skillbook"}
    return {m for m in found if m is not None and m != module}


@functools.cache
def import_graph() -> dict[str, set[str]]:
    """Every module's imports of the tree. Built on first use, not at import: parsing the
    whole tree costs about 3.5 s of CPU, which every pytest process (each xdist worker of
    both lanes) paid while collecting, whether it ran these tests or not."""
    return {name: imported(path, name) for name, path in MODULES.items()}


_RANK = {part: rank for rank, level in enumerate(PARTS) for part in level}
_STAGE_RANK = {stage: rank for rank, level in enumerate(PIPELINE_STAGES) for stage in level}


def part_of(module: str) -> str:
    if module in (FACE, ENTRY):
        return module
    return module.split(".")[1]


def rank_of(module: str) -> int:
    return _RANK.get(part_of(module), len(PARTS))


def stage_of(module: str) -> str | None:
    """The pipeline stage of a module, None outside the pipeline or for its package."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "pipeline" else None


def circles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for dep in sorted(graph.get(node, ())):
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in on_stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def _one_cycle(group: list[str], graph: Mapping[str, Iterable[str]]) -> str:
    """One path around a circle of ``group``, for the failure message."""
    members = set(group)
    path = [group[0]]
    while True:
        nxt = next(d for d in sorted(graph[path[-1]]) if d in members)
        if nxt in path:
            return " -> ".join([*path[path.index(nxt) :], nxt])
        path.append(nxt)


ALL_PARTS = [part for level in PARTS for part in level]


def _python_entries(folder: Path) -> set[str]:
    """The modules and the folders holding Python code (packages or not) in ``folder``."""
    return {
        p.stem if p.suffix == ".py" else p.name
        for p in folder.iterdir()
        if p.suffix == ".py" or (p.is_dir() and any(p.rglob("*.py")))
    }


def test_every_entry_of_the_package_is_a_declared_part() -> None:
    assert _python_entries(SRC) - {"__init__", "__main__"} == set(ALL_PARTS)
    assert _python_entries(SRC / "pipeline") - {"__init__"} == set(_STAGE_RANK)


def test_the_package_holds_few_plain_modules() -> None:
    plain = sorted(p.name for p in SRC.glob("*.py") if p.stem not in ("__init__", "__main__"))
    assert len(plain) <= MAX_PLAIN_MODULES, plain


@pytest.mark.parametrize("part", ALL_PARTS)
def test_a_part_imports_only_its_own_part_and_the_ones_below(part: str) -> None:
    upward = sorted(
        f"{module} -> {dep}"
        for module, deps in import_graph().items()
        if part_of(module) == part
        for dep in deps
        if rank_of(dep) > rank_of(module)
    )
    assert upward == [], f"{part} imports a part above it:\n" + "\n".join(upward)


def test_the_parts_import_no_circle() -> None:
    parts: dict[str, set[str]] = {}
    for module, deps in import_graph().items():
        parts.setdefault(part_of(module), set()).update(
            part_of(d) for d in deps if part_of(d) != part_of(module)
        )
    found = circles(parts)
    assert found == [], " ; ".join(_one_cycle(group, parts) for group in found)


def _module_circles() -> list[list[str]]:
    # The face lists every public name lazily, so each module that imports a name from it
    # would close a circle through it; it is no stage of anything.
    graph = {m: {d for d in deps if d != FACE} for m, deps in import_graph().items() if m != FACE}
    return circles(graph)


@pytest.mark.parametrize("part", ALL_PARTS)
def test_no_circle_between_modules(part: str) -> None:
    found = [group for group in _module_circles() if any(part_of(m) == part for m in group)]
    assert found == [], " ; ".join(_one_cycle(group, import_graph()) for group in found)


def test_the_pipeline_stages_import_only_their_own_stage_and_the_ones_below() -> None:
    top = len(PIPELINE_STAGES)
    upward = sorted(
        f"{module} -> {dep}"
        for module, deps in import_graph().items()
        if (stage := stage_of(module)) is not None
        for dep in deps
        if part_of(dep) == "pipeline"
        and _STAGE_RANK.get(stage_of(dep) or "", top) > _STAGE_RANK[stage]
    )
    assert upward == [], "a pipeline stage imports a later one:\n" + "\n".join(upward)


@pytest.mark.parametrize(
    "module",
    sorted(m for m in MODULES if part_of(m) == "runtime"),
)
def test_the_runtime_knows_only_the_recorder_protocol_not_the_experience_engine(
    module: str,
) -> None:
    found = sorted(d for d in import_graph()[module] if part_of(d) == "experience")
    assert found == [], f"{module} imports the experience engine: {found}"


def test_the_check_sees_every_kind_of_import(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import logging\n"
        "from typing import TYPE_CHECKING\n"
        "from skillbook.model import Skill\n"
        "if TYPE_CHECKING:\n    from skillbook.mcp.client import McpClient\n"
        "def f():\n    import skillbook.cli.app\n    from .. import experience\n"
        "    from .agent import run_turn\n"
        "_LAZY = {'Y': 'skillbook.distribution.install.setup:plan_setup'}\n"
        "_LOG = logging.getLogger('skillbook.selection')\n"
        "class C:\n    def g(self):\n        from skillbook.distribution import sync\n"
        "        from skillbook.runtime import find_skills, recording\n"
    )
    # Read as if it were `skillbook/runtime/sample.py`: the relative imports resolve there.
    assert imported(sample, "skillbook.runtime.sample") == {
        "skillbook.model",
        "skillbook.mcp.client",
        "skillbook.cli.app",
        "skillbook.experience",
        "skillbook.runtime.agent",
        "skillbook.distribution.install.setup",
        "skillbook.distribution.sync",
        "skillbook.runtime.find_skills",
        "skillbook.runtime.recording",
    }


def test_the_circle_finder_sees_a_circle_and_only_one() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]
    assert _one_cycle(["a", "b", "c"], graph) == "a -> b -> c -> a"


def test_parts_and_stages_are_read_as_declared() -> None:
    assert part_of("skillbook.pipeline.parse.text") == "pipeline"
    assert rank_of("skillbook.base.fs") < rank_of("skillbook.errors") == rank_of("skillbook.model")
    assert rank_of("skillbook.runtime.agent") < rank_of("skillbook.experience.recorder")
    assert rank_of("skillbook.cli.app") < rank_of(ENTRY) == rank_of(FACE)
    assert stage_of("skillbook.pipeline.cache.footprint") == "cache"
    assert stage_of("skillbook.pipeline.book") == "book"
    assert stage_of("skillbook.pipeline") is None
    assert _STAGE_RANK["parse"] < _STAGE_RANK["lookup"] == _STAGE_RANK["validation"]
