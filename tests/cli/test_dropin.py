"""An OpenClaw user runs skillbook with no flags: same config, managed skills and workspace.

Also `skillbook doctor`, which says which files are in effect and why, and unknown agents.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli.conftest import Shell, write_skill


@pytest.fixture
def openclaw(shell: Shell) -> Path:
    """~/.openclaw as OpenClaw leaves it: config, a managed skill, the default workspace."""
    state = shell.home / ".openclaw"
    state.mkdir()
    (state / "openclaw.json").write_text(
        "// OpenClaw's own file, comments and all\n"
        '{agents: {list: [{id: "main"}, {id: "ops", skills: ["managed-one"]}]},}\n',
        encoding="utf-8",
    )
    write_skill(state / "skills", "managed-one", "name: managed-one\ndescription: Managed.")
    write_skill(state / "workspace" / "skills", "ws-one", "name: ws-one\ndescription: Mine.")
    return state


def test_list_with_no_flags_shows_openclaws_skills(shell: Shell, openclaw: Path) -> None:
    result = shell.run("list", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["workspaceDir"] == str(openclaw / "workspace")
    assert data["managedSkillsDir"] == str(openclaw / "skills")
    assert [(s["name"], s["source"]) for s in data["skills"]] == [
        ("managed-one", "openclaw-managed"),
        ("ws-one", "openclaw-workspace"),
    ]
    # The same file named on the command line or in the variable: the same skills.
    named = shell.run("--config", str(openclaw / "openclaw.json"), "list", "--json")
    env = shell.run("list", "--json", env={"OPENCLAW_CONFIG_PATH": str(openclaw / "openclaw.json")})
    assert json.loads(named.stdout) == data == json.loads(env.stdout)


def test_profile_picks_openclaws_profile_workspace(shell: Shell, openclaw: Path) -> None:
    write_skill(
        openclaw / "workspace-work" / "skills", "work-one", "name: work-one\ndescription: W."
    )
    data = json.loads(shell.run("list", "--json", env={"OPENCLAW_PROFILE": "work"}).stdout)
    assert data["workspaceDir"] == str(openclaw / "workspace-work")
    assert "work-one" in [s["name"] for s in data["skills"]]


def test_unknown_agent_is_an_error_naming_the_known_ones(shell: Shell, openclaw: Path) -> None:
    result = shell.run("--agent", "nobody", "list")
    assert result.exit_code == 2
    assert result.stderr == 'skillbook: unknown agent id "nobody" (known: main, ops)\n'
    result = shell.run("list", "--json", "--agent", "nobody")
    assert result.exit_code == 2 and result.stderr == ""
    assert json.loads(result.stdout) == {
        "error": 'unknown agent id "nobody" (known: main, ops)',
        "code": "unknown-agent",
    }
    ops = json.loads(shell.run("-a", "ops", "check", "--json").stdout)
    assert ops["filteredOut"] == []  # ops's workspace (workspace-ops) is empty


def test_doctor_says_which_files_are_used_and_why(shell: Shell, openclaw: Path) -> None:
    result = shell.run("doctor")
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert (
        f"Config      {openclaw / 'openclaw.json'}  (OpenClaw's config at its default place)"
        in text
    )
    assert f"State dir   {openclaw}  (the config file's folder)" in text
    assert (
        f"Workspace   {openclaw / 'workspace'}  (OpenClaw's default, for OpenClaw's config)" in text
    )
    assert "Mode        openclaw  (the default)" in text
    assert (
        f"openclaw-managed        {openclaw / 'skills'}  (<state dir>/skills; ok, 1 skill)" in text
    )
    assert "agents-skills-personal" in text and "missing" in text
    assert "Skills: 2 loaded, 2 ready; 0 errors, 0 warnings" in text
    assert "known: main, ops" in text


def test_doctor_reports_both_configs_and_which_wins(shell: Shell, openclaw: Path) -> None:
    own = shell.home / ".skillbook" / "skillbook.json"
    own.parent.mkdir()
    own.write_text("{}", encoding="utf-8")
    data = json.loads(shell.run("doctor", "--json").stdout)
    assert data["config"]["file"] == str(own)
    assert data["config"]["notRead"] == [str(openclaw / "openclaw.json")]
    assert data["config"]["stateDir"] == str(own.parent)
    # skillbook's own config names no workspace: the current folder.
    assert data["workspace"]["path"] == str(shell.project)
    assert data["workspace"]["reason"] == "the current folder"
    text = shell.run("doctor").stdout
    assert f"not read: {openclaw / 'openclaw.json'}" in text


def test_doctor_json_and_problems(shell: Shell) -> None:
    bad = shell.project / "bad.json"
    bad.write_text('{"skills": {"policy": {}}}', encoding="utf-8")
    result = shell.run("doctor", "--json", "--config", str(bad), "--agent", "ops")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert [p["code"] for p in data["problems"]] == ["config-invalid", "unknown-agent"]
    assert data["skills"] is None  # not loaded with a broken config
    assert data["config"]["reason"] == "--config"
    assert [r["source"] for r in data["roots"]] == [
        "openclaw-bundled",
        "openclaw-managed",
        "agents-skills-personal",
        "agents-skills-project",
        "openclaw-workspace",
        "openclaw-workspace",
    ]
    assert data["roots"][-2]["origin"].startswith("<workspace>/skills/auto")
    assert set(data) >= {"home", "osHome", "agent", "workspace", "mode", "bundledDir"}
    text = shell.run("doctor", "--config", str(bad)).stdout
    assert "Problems:" in text and "skills.policy" in text


def test_doctor_names_the_variables_and_extra_dirs(shell: Shell) -> None:
    extra = shell.project / "team"
    cfg = shell.project / "c.json"
    cfg.write_text(json.dumps({"skills": {"load": {"extraDirs": ["", str(extra)]}}}), "utf-8")
    state = shell.project / "state"
    result = shell.run("doctor", "--json", "-c", str(cfg), env={"SKILLBOOK_STATE_DIR": str(state)})
    data = json.loads(result.stdout)
    assert data["roots"][0] == {
        "source": "openclaw-extra",
        "path": str(extra),
        "origin": "skills.load.extraDirs[1]",
        "exists": False,
        "skills": 0,
    }
    assert data["environment"]["SKILLBOOK_STATE_DIR"] == str(state)
    assert data["config"]["stateDirReason"] == "$SKILLBOOK_STATE_DIR"
    assert data["skills"]["warnings"] == 1  # the missing extra dir


def test_a_configured_workspace_that_is_missing(shell: Shell) -> None:
    cfg = shell.project / "c.json"
    cfg.write_text('{agents: {defaults: {workspace: "~/gone"}}}', encoding="utf-8")
    result = shell.run("-c", str(cfg), "list", "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["code"] == "workspace-missing"
    doctor = shell.run("-c", str(cfg), "doctor", "--json")
    assert doctor.exit_code == 1
    assert json.loads(doctor.stdout)["problems"][0]["code"] == "workspace-missing"


def test_at_a_terminal_each_command_says_which_config_it_reads(
    shell: Shell, openclaw: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = shell.home / ".skillbook" / "skillbook.json"
    own.parent.mkdir()
    own.write_text("{}", encoding="utf-8")
    assert shell.run("list").stderr == ""  # not a terminal: scripts are not told
    monkeypatch.setattr("skillbook.cli.context._is_terminal", lambda _stream: True)
    result = shell.run("list")
    assert result.stderr == (
        f"skillbook: reading {own} (skillbook's own config at its default place); "
        f"not reading {openclaw / 'openclaw.json'} (pass --config FILE to choose)\n"
    )
    # Naming the file ends the ambiguity.
    assert shell.run("list", "-c", str(own)).stderr == ""
