"""Agent ids and the workspace a run reads (OpenClaw's agent scope), against OpenClaw itself."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from oracle_support import Oracle

from skillbook.config.agent_scope import (
    check_agent_id,
    default_agent_id,
    known_agent_ids,
    locate_workspace,
    openclaw_default_workspace,
)
from skillbook.config.file import Config
from skillbook.config.paths import Paths
from skillbook.errors import AgentNotFound, SkillbookError

AGENTS = {"agents": {"list": [{"id": "Main"}, {"id": "ops", "default": True}, {"id": "ops"}]}}


def test_known_and_default_agent_ids() -> None:
    config = Config.from_mapping(AGENTS)
    assert known_agent_ids(config) == ("main", "ops")
    assert default_agent_id(config) == "ops"
    assert known_agent_ids(Config.empty()) == ("main",)
    assert default_agent_id(Config.empty()) == "main"
    first = Config.from_mapping({"agents": {"list": [{"id": "writer"}, {"id": "ops"}]}})
    assert default_agent_id(first) == "writer"


def test_an_unknown_agent_is_an_error_naming_the_known_ones() -> None:
    config = Config.from_mapping(AGENTS)
    assert check_agent_id(config, "OPS") == "ops"
    assert check_agent_id(config, None) == "ops"
    with pytest.raises(AgentNotFound) as info:
        check_agent_id(config, " nobody ")
    assert str(info.value) == 'unknown agent id "nobody" (known: main, ops)'
    assert info.value.known == ("main", "ops") and isinstance(info.value, LookupError)
    assert isinstance(info.value, SkillbookError)
    # With no agents.list only OpenClaw's default id exists.
    with pytest.raises(AgentNotFound, match=r"\(known: main\)"):
        check_agent_id(Config.empty(), "helper")


def _paths(home: Path, config: Path | None = None) -> Paths:
    return Paths.from_env({"HOME": str(home)}, cwd=home, config=config)


def _config(path: Path, data: dict[str, Any]) -> Config:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return Config.from_mapping(data, file=path)


def test_workspace_from_the_flag_and_the_agents_config(tmp_path: Path) -> None:
    data = {
        "agents": {
            "defaults": {"workspace": "~/shared"},
            "list": [{"id": "main"}, {"id": "ops"}, {"id": "x", "workspace": "~/x-ws"}],
        }
    }
    file = tmp_path / "skillbook.json"
    config = _config(file, data)
    paths = _paths(tmp_path, file)

    def ws(agent: str | None = None, explicit: str | None = None) -> tuple[Path, str, bool]:
        got = locate_workspace(
            config, paths, agent=agent, explicit=explicit, env={}, cwd=tmp_path / "cwd"
        )
        return got.path, got.reason, got.configured

    assert ws(explicit="rel") == (tmp_path / "cwd" / "rel", "--workspace", True)
    assert ws() == (tmp_path / "shared", f"agents.defaults.workspace in {file}", True)
    assert ws("ops")[0] == tmp_path / "shared" / "ops"
    assert ws("X") == (tmp_path / "x-ws", f"agents.list[2].workspace in {file}", True)


def test_skillbooks_own_config_without_a_workspace_means_the_current_folder(
    tmp_path: Path,
) -> None:
    file = tmp_path / ".skillbook" / "skillbook.json"
    config = _config(file, {})
    got = locate_workspace(config, _paths(tmp_path), env={}, cwd=tmp_path / "proj")
    assert (got.path, got.reason, got.configured) == (
        tmp_path / "proj",
        "the current folder",
        False,
    )


def test_openclaws_config_without_a_workspace_means_openclaws_default(tmp_path: Path) -> None:
    file = tmp_path / ".openclaw" / "openclaw.json"
    config = _config(file, {"agents": {"list": [{"id": "main"}, {"id": "ops"}]}})
    paths = _paths(tmp_path)
    assert paths.config_path == file
    got = locate_workspace(config, paths, env={}, cwd=tmp_path / "proj")
    assert got.path == tmp_path / ".openclaw" / "workspace" and not got.configured
    assert got.reason == "OpenClaw's default, for OpenClaw's config"
    profiled = locate_workspace(config, paths, env={"OPENCLAW_PROFILE": " work "}, cwd=tmp_path)
    assert profiled.path == tmp_path / ".openclaw" / "workspace-work"
    assert "$OPENCLAW_PROFILE" in profiled.reason
    other = locate_workspace(config, paths, agent="ops", env={}, cwd=tmp_path)
    assert other.path == tmp_path / ".openclaw" / "workspace-ops"


@pytest.mark.parametrize("profile", ["", "default", "Default", "  "])
def test_the_default_profile_is_no_profile(tmp_path: Path, profile: str) -> None:
    path, _why = openclaw_default_workspace(tmp_path, {"OPENCLAW_PROFILE": profile})
    assert path == tmp_path / ".openclaw" / "workspace"


def test_workspace_choice_json(tmp_path: Path) -> None:
    got = locate_workspace(Config.empty(), _paths(tmp_path), env={}, cwd=tmp_path)
    assert got.to_json() == {
        "path": str(tmp_path),
        "reason": "the current folder",
        "configured": False,
        "exists": True,
        "agent": "main",
    }


# --------------------------------------------------------------------------- oracle

# Imports OpenClaw's own functions from its dist/ (looked up by source region and
# name, as the oracle harness does) and answers each case with its environment set.
_SCOPE_JS = r"""
import fs from "node:fs"; import path from "node:path"; import { pathToFileURL } from "node:url";
const dist = process.argv[2];
const files = fs.readdirSync(dist).filter((f) => f.endsWith(".js"));
async function find(region, name) {
  for (const f of files) {
    const text = fs.readFileSync(path.join(dist, f), "utf8");
    if (!text.includes(`//#region ${region}`) || !text.includes(`function ${name}(`)) continue;
    const m = text.match(new RegExp(`\\b${name} as ([\\w$]+)`));
    if (m) return (await import(pathToFileURL(path.join(dist, f)).href))[m[1]];
  }
  throw new Error(`not found: ${region}#${name}`);
}
const workspaceDir = await find("src/agents/agent-scope.ts", "resolveAgentWorkspaceDir");
const configDir = await find("src/utils.ts", "resolveConfigDir");
const configPath = await find("src/config/paths.ts", "resolveConfigPath");
const cases = JSON.parse(fs.readFileSync(0, "utf8"));
const base = { ...process.env };
const out = cases.map((c) => {
  for (const k of Object.keys(process.env)) delete process.env[k];
  Object.assign(process.env, { PATH: base.PATH }, c.env);
  return {
    workspace: workspaceDir(c.config, c.agent),
    managed: path.join(configDir(), "skills"),
    config: configPath(),
  };
});
process.stdout.write(JSON.stringify(out));
"""

_CASES: list[dict[str, Any]] = [
    {"name": "nothing", "env": {}, "config": {}, "agent": "main"},
    {"name": "profile", "env": {"OPENCLAW_PROFILE": "work"}, "config": {}, "agent": "main"},
    {"name": "profile-default", "env": {"OPENCLAW_PROFILE": "Default"}, "config": {}},
    {"name": "openclaw-home", "env": {"OPENCLAW_HOME": "{root}/oc-home"}, "config": {}},
    {
        "name": "other-agent",
        "env": {},
        "config": {"agents": {"list": [{"id": "main"}, {"id": "ops"}]}},
        "agent": "ops",
    },
    {
        "name": "state-dir",
        "env": {"OPENCLAW_STATE_DIR": "{root}/state"},
        "config": {"agents": {"list": [{"id": "main"}, {"id": "ops"}]}},
        "agent": "ops",
    },
    {
        "name": "defaults",
        "env": {},
        "config": {
            "agents": {"defaults": {"workspace": "~/ws"}, "list": [{"id": "a"}, {"id": "b"}]}
        },
        "agent": "b",
    },
    {
        "name": "own",
        "env": {"OPENCLAW_PROFILE": "work"},
        "config": {"agents": {"list": [{"id": "a", "workspace": "~/mine"}]}},
        "agent": "A",
    },
    {
        "name": "config-path",
        "env": {"OPENCLAW_CONFIG_PATH": "{root}/cfg/openclaw.json"},
        "config": {},
    },
]


@pytest.mark.oracle
def test_paths_and_workspace_match_openclaw(oracle: Oracle, tmp_path: Path) -> None:
    """§3.7 and OpenClaw's resolveAgentWorkspaceDir/resolveConfigPath/resolveConfigDir:
    the config file, managed dir and workspace skillbook picks with no flag are OpenClaw's."""
    home = tmp_path / "home"
    cases = []
    for case in _CASES:
        root = tmp_path / case["name"]
        env = {"HOME": str(home / case["name"])}
        env |= {k: v.replace("{root}", str(root)) for k, v in case["env"].items()}
        # The config lives where OpenClaw looks for it in that environment.
        if "OPENCLAW_CONFIG_PATH" in env:
            file = Path(env["OPENCLAW_CONFIG_PATH"])
        elif "OPENCLAW_STATE_DIR" in env:
            file = Path(env["OPENCLAW_STATE_DIR"]) / "openclaw.json"
        else:
            file = Path(env.get("OPENCLAW_HOME", env["HOME"])) / ".openclaw" / "openclaw.json"
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(json.dumps(case["config"]), encoding="utf-8")
        cases.append({"env": env, "config": case["config"], "agent": case.get("agent")})
    script = tmp_path / "scope.mjs"
    script.write_text(_SCOPE_JS, encoding="utf-8")
    dist = oracle.root / "node_modules" / "openclaw" / "dist"
    proc = subprocess.run(
        ["node", str(script), str(dist)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    expected = json.loads(proc.stdout)
    for case, want in zip(cases, expected, strict=True):
        env = case["env"]
        paths = Paths.from_env(env, cwd=tmp_path)
        config = Config.from_mapping(case["config"], file=paths.config_path)
        got = locate_workspace(config, paths, agent=case["agent"], env=env, cwd=tmp_path)
        assert str(paths.config_path) == want["config"], case
        assert str(paths.managed_dir) == want["managed"], case
        assert str(got.path) == want["workspace"], case
