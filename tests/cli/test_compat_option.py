"""``--compat`` (a global option, before or after the command), ``skills.compat`` in the
config, and ``skillbook doctor`` saying which profile is in effect and why."""

from __future__ import annotations

import json
from pathlib import Path

from factories import write_skill

from cli.conftest import Shell


def workspace(shell: Shell) -> Path:
    ws = shell.project / "ws"
    # Folder order (a, b) differs from name order (alpha, zeta).
    write_skill(ws / "skills" / "a", "zeta", "Z.")
    write_skill(ws / "skills" / "b", "alpha", "A.")
    return ws


def names(text: str) -> list[str]:
    return [line.strip()[6:-7] for line in text.splitlines() if line.strip().startswith("<name>")]


def test_compat_flag_before_or_after_the_command(shell: Shell) -> None:
    workspace(shell)
    default = shell.run("-w", "ws", "prompt")
    assert default.exit_code == 0, default.output
    assert names(default.stdout) == ["zeta", "alpha"]
    assert "Use the read tool" in default.stdout
    before = shell.run("--compat", "openclaw-2026.9", "-w", "ws", "prompt")
    after = shell.run("-w", "ws", "prompt", "--compat", "openclaw-2026.9")
    assert before.exit_code == after.exit_code == 0, before.output + after.output
    assert before.stdout == after.stdout
    assert names(before.stdout) == ["alpha", "zeta"]
    assert "Read a skill's file at its listed location" in before.stdout


def test_unknown_profile_is_a_usage_error(shell: Shell) -> None:
    result = shell.run("--compat", "openclaw-2027.1", "list")
    assert result.exit_code == 2
    assert "openclaw-2026.4" in result.output and "openclaw-2026.9" in result.output


def test_config_key_and_doctor(shell: Shell) -> None:
    workspace(shell)
    config = shell.project / "skillbook.json"
    config.write_text('{skills: {compat: "openclaw-2026.9"}}', encoding="utf-8")
    by_config = shell.run("-c", str(config), "-w", "ws", "prompt")
    assert names(by_config.stdout) == ["alpha", "zeta"]
    report = json.loads(shell.run("-c", str(config), "-w", "ws", "doctor", "--json").stdout)
    assert report["compat"] == {
        "value": "openclaw-2026.9",
        "reason": f"skills.compat in {config}",
        "openclaw": "2026.9.6",
    }
    text = shell.run("-w", "ws", "doctor").stdout
    assert "Compat      openclaw-2026.4 (OpenClaw 2026.4.12)  (the default)" in text
    flagged = shell.run("-c", str(config), "-w", "ws", "doctor", "--compat", "openclaw-2026.4")
    assert "Compat      openclaw-2026.4 (OpenClaw 2026.4.12)  (--compat)" in flagged.stdout
    bad = shell.project / "bad.json"
    bad.write_text('{skills: {compat: "2026.9"}}', encoding="utf-8")
    result = shell.run("-c", str(bad), "list")
    assert result.exit_code == 2
    assert "skills.compat: expected one of" in result.stderr
