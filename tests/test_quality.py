"""The project's own quick checks run with the tests: ruff and mypy stay clean."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.lint

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    local = BIN / name
    if local.exists():
        return str(local)
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return found


def test_ruff_check_is_clean() -> None:
    proc = subprocess.run(
        [_tool("ruff"), "check", "src", "tests", "benchmarks"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format_is_clean() -> None:
    proc = subprocess.run(
        [_tool("ruff"), "format", "--check", "src", "tests", "benchmarks"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_strict_is_clean() -> None:
    proc = subprocess.run(
        [_tool("mypy")],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _skipped_by_mypy() -> list[str]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return [
        module
        for override in config["tool"]["mypy"]["overrides"]
        if override.get("follow_imports") == "skip"
        for module in override["module"]
    ]


def _imported(path: Path) -> set[str]:
    """Every module ``path`` imports, and each ``from m import n`` as ``m.n`` too (``n``
    may be a module)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_mypy_skips_only_modules_no_code_here_imports() -> None:
    # follow_imports = "skip" makes a module Any for mypy: fine for the parts of installed
    # packages that only other packages read (pyproject.toml says why each is there), a
    # silent hole in the strict check if code here imported one.
    skipped = _skipped_by_mypy()
    assert skipped
    exact = {m for m in skipped if not m.endswith(".*")}
    under = tuple(m[:-1] for m in skipped if m.endswith(".*"))
    found = []
    for top in ("src", "tests", "benchmarks"):
        for path in sorted((REPO / top).rglob("*.py")):
            for name in _imported(path):
                if name in exact or name.startswith(under):
                    found.append(f"{path.relative_to(REPO)}: {name}")
    assert found == []
