"""The real ``skills`` CLI for the twin-sandbox tests (twin_sandbox.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cached_tools import skills_cli

from distribution.hub.processes import unavailable


@pytest.fixture(scope="module")
def peer() -> Path:
    """``skills@1.6.0`` from npm, installed into ``.cache/skills-cli`` on first use;
    without node and npm the test skips, or fails where
    ``SKILLBOOK_HUB_REQUIRE_SERVICES=1`` (``.ci/run``)."""
    found = skills_cli()
    if isinstance(found, str):
        unavailable(found)
    return found
