"""docs/registry.md stays true: its examples run, in order, against a ClawHub-compatible
registry on 127.0.0.1, and print what the page shows.

Each ``sh`` block runs with ``bash -e`` and each ``python`` block in a fresh interpreter,
all in one empty folder (the workspace) with an isolated home and state dir. A ``text``
block right after a code block is that block's expected output (stdout and stderr
together), with the folder written as ``/tmp/docs`` and the registry as
``https://clawhub.example``.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from docs_examples import run_examples

from distribution.registry.clawhub_server import ClawHub

pytestmark = pytest.mark.subprocess

DOC = Path(__file__).resolve().parents[3] / "docs" / "registry.md"
SHOWN_AS = "/tmp/docs"
REGISTRY_AS = "https://clawhub.example"
V1 = b"---\nname: standup-notes\ndescription: Turn yesterday's commits into standup notes.\n---\nList the commits.\n"
V2 = V1 + b"Group them by repository.\n"


BACKUP_AS = "20260105T143000000-3fa2c1"


def test_every_example_runs_and_prints_what_the_page_shows(hub: ClawHub, tmp_path: Path) -> None:
    summary = "Turn yesterday's commits into standup notes."
    hub.state.publish(
        "standup-notes",
        "1.0.0",
        {"SKILL.md": V1},
        owner="team",
        display_name="Standup Notes",
        summary=summary,
    )
    hub.state.publish("standup-notes", "1.1.0", {"SKILL.md": V2}, owner="team")
    work = tmp_path / "work"
    work.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SKILLBOOK_", "OPENCLAW_", "CLAWHUB_", "CLAWDHUB_", "GIT_"))
    }
    env.update(
        HOME=str(tmp_path / "home"),
        SKILLBOOK_STATE_DIR=str(tmp_path / "state"),
        SKILLBOOK_BUNDLED_SKILLS_DIR=str(tmp_path / "bundled"),
        CLAWHUB_URL=hub.url,
        COLUMNS="100",
        LANG="C.UTF-8",
        PATH=os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""),
    )
    (tmp_path / "bundled").mkdir()
    host = hub.url.split("://", 1)[1]

    def shown(out: str) -> str:
        out = out.replace(str(work), SHOWN_AS).replace(hub.url, REGISTRY_AS)
        # A backup's id is the time it was made: the page shows one made on 5 Jan 2026.
        out = re.sub(r"\b\d{8}T\d{9}-[0-9a-f]{6}\b", BACKUP_AS, out)
        return out.replace(host, REGISTRY_AS.split("://")[1])

    run_examples(
        DOC,
        work,
        env,
        shown,
        at_least=10,
        message=lambda i, code, out: f"example {i}:\n{code}\n---\n{out}",
    )
