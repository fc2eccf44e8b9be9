"""docs/sync.md stays true: its examples run, in order, and print what the page shows.

Each ``sh`` block runs with ``bash -e`` and each ``python`` block in a fresh
interpreter, all in one empty folder with an isolated home and state dir. A ``text``
block right after a code block is that block's expected output (stdout and stderr
together), with the folder written as ``/tmp/docs``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess

DOC = Path(__file__).resolve().parents[2] / "docs" / "sync.md"
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
SHOWN_AS = "/tmp/docs"


def blocks() -> list[tuple[str, str, str | None]]:
    """(language, code, expected output or None) for every sh/python block."""
    found = [(m.group(1), m.group(2)) for m in FENCE.finditer(DOC.read_text(encoding="utf-8"))]
    out: list[tuple[str, str, str | None]] = []
    for i, (lang, code) in enumerate(found):
        if lang not in ("sh", "python"):
            continue
        after = found[i + 1] if i + 1 < len(found) else None
        out.append((lang, code, after[1] if after and after[0] == "text" else None))
    return out


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
    examples = blocks()
    assert len(examples) >= 10
    for index, (lang, code, expected) in enumerate(examples, 1):
        argv = ["bash", "-e", "-o", "pipefail", "-c", code]
        if lang == "python":
            argv = [sys.executable, "-c", code]
        proc = subprocess.run(
            argv,
            cwd=work,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=120,
            check=False,
        )
        shown = proc.stdout.replace(str(work), SHOWN_AS)
        assert proc.returncode == 0, f"example {index} failed:\n{code}\n---\n{shown}"
        if expected is not None:
            assert shown == expected, f"example {index} printed something else:\n{code}"
