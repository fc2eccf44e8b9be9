"""docs/sync.md stays true: its examples run, in order, and print what the page shows.

Each ``sh`` block runs with ``bash -e`` and each ``python`` block in a fresh
interpreter, all in one empty folder with an isolated home and state dir. A ``text``
block right after a code block is that block's expected output (stdout and stderr
together), with the folder written as ``/tmp/docs``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from docs_examples import run_examples

pytestmark = pytest.mark.subprocess

DOC = Path(__file__).resolve().parents[3] / "docs" / "sync.md"
SHOWN_AS = "/tmp/docs"


def test_every_example_runs_and_prints_what_the_page_shows(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLBOOK_", "OPENCLAW_"))}
    env.update(
        HOME=str(tmp_path / "home"),
        SKILLBOOK_STATE_DIR=str(tmp_path / "state"),
        PATH=os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""),
    )
    env.pop("DEPLOY_TOKEN", None)
    run_examples(DOC, work, env, lambda out: out.replace(str(work), SHOWN_AS), at_least=10)
