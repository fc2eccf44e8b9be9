"""Inside ``distribution``: the registry client, the registry server and the agents
stand beside the installers and sync, never on them; what they share lives below them
(directly in ``skillbook.distribution`` or in ``skillbook.base``).

Every import counts, at any level: module top, function bodies, ``TYPE_CHECKING``
blocks, relative imports, and module paths given as strings (lazy exports).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

DISTRIBUTION = Path(__file__).resolve().parents[2] / "src" / "skillbook" / "distribution"
_MODULE_STRING = re.compile(r"skillbook(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?::[A-Za-z_]\w*)?")

#: part -> the parts of ``distribution`` it must not import.
FORBIDDEN: dict[str, frozenset[str]] = {
    "registry": frozenset({"install", "sync"}),
    "hub": frozenset({"install", "sync"}),
    "agents": frozenset({"install", "sync"}),
    "sync": frozenset({"install", "registry"}),
}


def module_name(path: Path) -> str:
    rel = path.relative_to(DISTRIBUTION.parents[1]).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(path: Path, text: str | None = None) -> set[str]:
    """Every ``skillbook…`` module ``path`` (or ``text`` placed there) names in an
    import or a module-path string; relative imports are resolved from ``path``."""
    source = path.read_text(encoding="utf-8") if text is None else text
    tree = ast.parse(source, filename=str(path))
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package.pop()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package[: len(package) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            found.add(base)
            # `from skillbook.distribution import install` imports the package itself.
            found.update(f"{base}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and _MODULE_STRING.fullmatch(node.value)
        ):
            found.add(node.value.split(":")[0])
    return {name for name in found if name.startswith("skillbook.")}


def part_of(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) > 2 and parts[:2] == ["skillbook", "distribution"]:
        return parts[2]
    return None


def _modules(part: str) -> list[Path]:
    return sorted((DISTRIBUTION / part).rglob("*.py"))


CASES = [(part, path) for part in FORBIDDEN for path in _modules(part)]


@pytest.mark.parametrize(
    ("part", "path"), CASES, ids=[str(p.relative_to(DISTRIBUTION)) for _, p in CASES]
)
def test_a_distribution_part_imports_no_sibling_it_stands_beside(part: str, path: Path) -> None:
    wrong = sorted(m for m in imported(path) if part_of(m) in FORBIDDEN[part])
    assert wrong == [], f"{path.relative_to(DISTRIBUTION)} ({part}) imports {wrong}"


def test_every_part_named_exists() -> None:
    # A renamed part would make its cases vanish silently.
    for part in FORBIDDEN:
        assert _modules(part), part


def test_the_check_sees_every_kind_of_import() -> None:
    sample = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from skillbook.distribution.install.progress import P\n"
        "def f():\n    import skillbook.distribution.sync.swap\n"
        "    from ..install import extract\n"
        "    from .. import sync\n"
        "_LAZY = {'Y': 'skillbook.distribution.install.fetch:fetch_to_file'}\n"
    )
    # Placed in distribution/registry, so the relative imports resolve from there.
    names = imported(DISTRIBUTION / "registry" / "sample.py", sample)
    assert {m for m in names if part_of(m) in FORBIDDEN["registry"]} == {
        "skillbook.distribution.install",
        "skillbook.distribution.install.extract",
        "skillbook.distribution.install.fetch",
        "skillbook.distribution.install.progress",
        "skillbook.distribution.install.progress.P",
        "skillbook.distribution.sync",
        "skillbook.distribution.sync.swap",
    }
