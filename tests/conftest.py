"""Shared fixtures: the public corpus and OpenClaw's own code (the oracle).

Both live in ``../shared`` beside the checkout. Where it is absent (a fresh clone
elsewhere) the tests that need them skip with a message saying so.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from oracle_support import CORPUS, Oracle, oracle_dir


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"public corpus not found at {CORPUS} (needs ../shared beside the checkout)")
    return CORPUS


@pytest.fixture(scope="session")
def oracle() -> Iterator[Oracle]:
    found = oracle_dir()
    if isinstance(found, str):
        pytest.skip(f"OpenClaw oracle unavailable: {found}")
    yield Oracle(found)
