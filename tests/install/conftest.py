"""Fixtures of the installer tests (see install_support for the helpers)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from install_support import Server, Standins, serve


@pytest.fixture
def standins(tmp_path: Path) -> Standins:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    return Standins(bin_dir=bin_dir, record=tmp_path / "calls.jsonl")


@pytest.fixture
def server() -> Iterator[Server]:
    yield from serve()
