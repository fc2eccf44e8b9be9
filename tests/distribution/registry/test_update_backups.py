"""Issue 18 §6: `update` over a local edit shows the edit and what the new version
changes, names that version, and `--force` keeps the edited folder for `restore`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli.conftest import Shell, shell  # noqa: F401 (fixture)
from factories import skill_text

from distribution.registry.clawhub_server import ClawHub, Failure
from distribution.registry.conftest import DEMO_V1, DEMO_V2, point_at
from skillbook.distribution.registry.backups import list_backups
from skillbook.distribution.registry.workdir import Workdir

MINE = skill_text("demo", "Mine.", body="# Demo\nSay hello.\n")


@pytest.fixture
def sh(shell: Shell, hub: ClawHub, monkeypatch: pytest.MonkeyPatch) -> Shell:  # noqa: F811
    point_at(shell, hub, monkeypatch)
    hub.state.publish("demo", "1.0.0", DEMO_V1, summary="Says hello")
    assert shell.run("install", "demo").exit_code == 0
    hub.state.publish("demo", "1.1.0", DEMO_V2)
    (shell.project / "skills/demo/SKILL.md").write_text(MINE, encoding="utf-8")
    return shell


def lock_version(project: Path) -> str:
    lock = json.loads((project / ".clawhub/lock.json").read_text(encoding="utf-8"))
    return str(lock["skills"]["demo"]["version"])


def test_a_refused_update_shows_the_edit_and_what_the_new_version_changes(sh: Shell) -> None:
    refused = sh.run("update", "demo")
    assert refused.exit_code == 1
    assert "has local changes (1 changed: SKILL.md); updating to 1.1.0 would" in refused.stderr
    assert "`skillbook restore demo`" in refused.stderr
    out = refused.stdout
    edit, update = out.split("# What 1.1.0 changes (demo@1.0.0 -> demo@1.1.0):\n")
    assert edit.startswith("# Your edit of demo (demo@1.0.0 -> the folder):\n")
    assert "--- demo@1.0.0/SKILL.md\n+++ demo/SKILL.md\n" in edit
    assert "-description: A demo skill.\n+description: Mine.\n" in edit
    assert "references" not in edit  # only what was edited
    assert "-reference one\n+reference two\n" in update
    assert "--- /dev/null\n+++ demo@1.1.0/references/b.md\n" in update and "+new file\n" in update
    # Nothing changed, nothing kept.
    assert (sh.project / "skills/demo/SKILL.md").read_text(encoding="utf-8") == MINE
    assert sh.run("restore", "--list").stdout == "No backups.\n"

    [result] = json.loads(sh.run("update", "demo", "--json").stdout)["results"]
    assert result["code"] == "registry.local-changes" and result["available"] == "1.1.0"
    assert result["localDiff"] == edit.split("\n", 1)[1]
    assert result["updateDiff"] == update


def test_a_refusal_stands_when_the_registry_cannot_show_the_new_version(
    sh: Shell, hub: ClawHub
) -> None:
    hub.state.failures["/api/v1/skills/demo"] = [Failure(404, body=b"Skill not found")] * 5
    refused = sh.run("update", "demo")
    assert refused.exit_code == 1
    assert "has local changes (1 changed: SKILL.md); updating would" in refused.stderr
    assert "cannot ask the registry for the new version" in refused.stderr
    assert refused.stdout == ""


def test_force_keeps_a_backup_that_restore_brings_back(sh: Shell) -> None:
    skill = sh.project / "skills/demo"
    forced = sh.run("update", "demo", "--force")
    assert (forced.exit_code, forced.stdout) == (0, "Updated demo: 1.0.0 -> 1.1.0\n")
    [backup] = list_backups(Workdir(sh.project), "demo")
    assert f"kept the edited demo as backup {backup.id}" in forced.stderr
    assert (skill / "SKILL.md").read_bytes() == DEMO_V2["SKILL.md"]
    assert (backup.tree / "SKILL.md").read_text(encoding="utf-8") == MINE
    listed = sh.run("restore", "--list").stdout
    assert listed.startswith(f"demo  {backup.id}  1.0.0  ") and listed.endswith(" update --force\n")

    restored = sh.run("restore", "demo")
    assert restored.exit_code == 0, restored.output
    assert restored.stdout == f"Restored demo from backup {backup.id} (1.0.0) -> {skill}\n"
    assert (skill / "SKILL.md").read_text(encoding="utf-8") == MINE
    assert not (skill / "references/b.md").exists()
    assert lock_version(sh.project) == "1.0.0"
    # Back as it was: version 1.0.0 with the edit, and still known as an edit.
    assert sh.run("verify").stdout == "✗ demo (clawhub 1.0.0): modified (1 changed: SKILL.md)\n"
    [replaced] = list_backups(Workdir(sh.project), "demo")
    assert f"kept as backup {replaced.id}" in restored.stderr

    # The folder the restore replaced is a backup too: restoring again swaps back.
    again = sh.run("restore", "demo", "--json")
    assert json.loads(again.stdout)["restored"]["version"] == "1.1.0"
    assert (skill / "SKILL.md").read_bytes() == DEMO_V2["SKILL.md"]
    assert sh.run("verify").stdout == "✓ demo (clawhub 1.1.0): unchanged\n"
    assert lock_version(sh.project) == "1.1.0"


def test_restore_without_a_backup_and_half_built_backups(sh: Shell) -> None:
    missing = sh.run("restore", "demo", "--json")
    assert missing.exit_code == 1
    assert json.loads(missing.stdout)["code"] == "registry.no-backup"
    assert 'No backup of "demo"' in sh.run("restore", "demo").stderr
    # A backup a killed run left half-built has no name list_backups reads: never offered.
    half = sh.project / ".skillbook/backups/demo/.20260101T000000000-abcdef.tmp/tree"
    half.mkdir(parents=True)
    assert sh.run("restore", "--list").stdout == "No backups.\n"
    assert sh.run("restore", "demo").exit_code == 1
    assert (sh.project / "skills/demo/SKILL.md").read_text(encoding="utf-8") == MINE
    # A restore leaves no staging folders behind.
    sh.run("update", "demo", "--force")
    sh.run("restore", "demo")
    leftovers = [n for n in os.listdir(sh.project / "skills") if n.startswith(".")]
    assert leftovers == [] or all(n.endswith(".lock") for n in leftovers), leftovers
