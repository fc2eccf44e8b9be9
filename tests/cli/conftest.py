"""In-process CLI tests: click's runner in an isolated home, project folder and PATH."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from skillbook.cli.app import cli

_CLEARED = ("NO_COLOR", "FORCE_COLOR", "LC_ALL", "LC_CTYPE", "TERM", "COLUMNS")


@dataclass
class Shell:
    """A home (``HOME``), an empty bundled folder, and the project folder as cwd."""

    home: Path
    project: Path

    def run(
        self, *args: str, env: Mapping[str, str | None] | None = None, charset: str = "utf-8"
    ) -> Result:
        runner = CliRunner(charset=charset)
        return runner.invoke(cli, list(args), env=env, prog_name="skillbook")


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Shell:
    for name in list(os.environ):
        if name.startswith(("SKILLBOOK_", "OPENCLAW_")) or name in _CLEARED:
            monkeypatch.delenv(name)
    home, project, bundled = tmp_path / "home", tmp_path / "project", tmp_path / "bundled"
    for folder in (home, project, bundled):
        folder.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.setenv("SKILLBOOK_BUNDLED_SKILLS_DIR", str(bundled))
    monkeypatch.chdir(project)
    return Shell(home, project)
