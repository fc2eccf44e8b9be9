"""``skillbook commands`` end to end, as a subprocess with an isolated environment.

Spec §6.1-6.3 (§12 "Commands"): one command per user-invocable skill, sanitised and
de-duplicated names; channel menus fit their limits. skillbook adds how each command
is answered: ``tool`` (§6.5 dispatch), ``exec`` (``metadata.skillbook.commandExec``)
or ``model``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from factories import write_skill

pytestmark = pytest.mark.e2e

SKILLS = {
    "deploy": "description: Deploy the current branch to staging.\n"
    "command-dispatch: tool\ncommand-tool: exec",
    "help": "description: House style help for this repository.",
    "standup": "description: Write today's standup note from git log.\n"
    'metadata:\n  skillbook:\n    commandExec: ./standup.sh "$1"',
    "quiet": "description: Not a command.\nuser-invocable: false",
    "both": "description: Tool dispatch and a command.\n"
    "command-dispatch: tool\ncommand-tool: record\n"
    "metadata:\n  skillbook:\n    commandExec: echo never",
}


class Sandbox:
    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "bundled").mkdir()
        self.env = {
            "HOME": str(root / "home"),
            "PATH": f"/usr/bin{os.pathsep}/bin",
            "SKILLBOOK_BUNDLED_SKILLS_DIR": str(root / "bundled"),
            "SKILLBOOK_STATE_DIR": str(root / "state"),
            "LANG": "C.UTF-8",
            "PYTHONIOENCODING": "utf-8",
            "COLUMNS": "100",
        }
        self.ws = root / "ws"

    def skill(self, name: str, frontmatter: str) -> None:
        write_skill(
            self.ws / "skills" / name, description=None, raw=frontmatter, body=f"# {name}\n"
        )

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        self.ws.mkdir(exist_ok=True)
        return subprocess.run(
            [sys.executable, "-m", "skillbook", "--workspace", str(self.ws), "commands", *args],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=120,
            check=False,
        )

    def json(self, *args: str) -> Any:
        proc = self.run("--json", *args)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    sandbox = Sandbox(tmp_path)
    for name, frontmatter in SKILLS.items():
        sandbox.skill(name, frontmatter)
    return sandbox


def test_text_lists_commands_with_what_they_run(box: Sandbox) -> None:
    proc = box.run()
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "Slash commands (4)"
    assert lines[1].split() == ["Command", "Skill", "Runs", "Description"]
    rows = [line.split(None, 3) for line in lines[3:7]]
    assert rows == [
        ["/both", "both", "tool", "Tool dispatch and a command."],
        ["/deploy", "deploy", "tool", "Deploy the current branch to staging."],
        ["/help_2", "help", "model", "House style help for this repository."],
        ["/standup", "standup", "exec", "Write today's standup note from git log."],
    ]
    assert "  /help_2 runs help (/help is taken)" in lines
    ignored = [line for line in lines if line.startswith("⚠ ")]
    assert len(ignored) == 1 and "`command-dispatch: tool`" in ignored[0] and "/both" in ignored[0]
    assert "quiet" not in proc.stdout


def test_json_shape(box: Sandbox) -> None:
    """§6.1 names and OpenClaw's `{name, skillName, description}` plus dispatch and source."""
    out = box.json()
    assert out["channel"] is None and out["omitted"] == []
    by_name = {c["name"]: c for c in out["commands"]}
    assert list(by_name) == ["both", "deploy", "help_2", "standup"]
    assert by_name["deploy"] == {
        "name": "deploy",
        "skillName": "deploy",
        "description": "Deploy the current branch to staging.",
        "dispatch": {"kind": "tool", "toolName": "exec", "argMode": "raw"},
        "source": "openclaw-workspace",
    }
    assert by_name["standup"]["dispatch"] == {"kind": "exec", "command": './standup.sh "$1"'}
    assert by_name["help_2"]["dispatch"] == {"kind": "model"}
    assert by_name["both"]["dispatch"]["kind"] == "tool"
    assert out["renamed"] == [
        {"skillName": "help", "base": "help", "name": "help_2", "deduplicated": True}
    ]
    codes = sorted(d["code"] for d in out["diagnostics"])
    assert codes == ["command.exec-ignored", "command.renamed"]


def test_channel_menu_leaves_out_what_does_not_fit(box: Sandbox) -> None:
    """Telegram/Discord: at most 100 commands; the rest are listed with the reason."""
    for index in range(100):
        box.skill(f"tool-{index:03d}", f"description: Generated skill number {index}.")
    proc = box.run("--channel", "telegram")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "Telegram menu (100 of 104 commands)"
    start = lines.index("Left out of the Telegram menu (`/skill <name>` still works):")
    left_out = lines[start + 1 : start + 5]
    assert left_out == [
        "  /tool_096 (tool-096): the menu is full",
        "  /tool_097 (tool-097): the menu is full",
        "  /tool_098 (tool-098): the menu is full",
        "  /tool_099 (tool-099): the menu is full",
    ]
    out = box.json("--channel", "discord")
    assert out["channel"] == "discord" and len(out["commands"]) == 100
    assert [(o["name"], o["reason"]) for o in out["omitted"]] == [
        (f"tool_{i:03d}", "max-commands") for i in range(96, 100)
    ]
    assert "command.channel-omitted" in {d["code"] for d in out["diagnostics"]}


def test_no_commands_and_bad_channel(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    proc = box.run()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "No slash commands: no ready skill is user-invocable.\n"
    empty = box.json("--channel", "telegram")
    assert empty == {
        "channel": "telegram",
        "commands": [],
        "omitted": [],
        "renamed": [],
        "diagnostics": [],
    }
    bad = box.run("--channel", "slack")
    assert bad.returncode == 2 and "slack" in bad.stderr
