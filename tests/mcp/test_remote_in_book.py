"""Remote MCP skills through the whole stack: config → Loader → status, prompt, CLI.

A second workspace is served by ``python -m skillbook serve`` (stdio); the first
workspace names it in ``skills.mcp.servers``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from factories import write_skill

import skillbook
from skillbook.errors import ConfigError

pytestmark = pytest.mark.subprocess

pytest.importorskip("mcp")


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", ""),
        "SKILLBOOK_STATE_DIR": str(tmp_path / "state"),
        "SKILLBOOK_BUNDLED_SKILLS_DIR": str(tmp_path / "no-bundled"),
    }
    served = tmp_path / "served"
    write_skill(
        served / "skills" / "remote-notes",
        description="Take notes on the remote server.",
        body="# remote-notes\n\nBody of remote-notes.\n",
    )
    refs = served / "skills" / "remote-notes" / "references"
    refs.mkdir()
    (refs / "more.md").write_text("More detail, fetched on demand.\n", encoding="utf-8")
    write_skill(served / "skills" / "shared-name", description="The remote copy of a shared name.")
    local = tmp_path / "local"
    write_skill(local / "skills" / "shared-name", description="The local copy wins.")
    server_env = {**env, "SKILLBOOK_STATE_DIR": str(tmp_path / "server-state")}
    config = {
        "skills": {
            "mcp": {
                "servers": [
                    {
                        "name": "team",
                        "command": [
                            sys.executable,
                            "-m",
                            "skillbook",
                            "--workspace",
                            str(served),
                            "serve",
                        ],
                        "env": server_env,
                    }
                ]
            }
        }
    }
    cfg = tmp_path / "skillbook.json"
    cfg.write_text(json.dumps(config), encoding="utf-8")
    return local, cfg, env


def test_remote_skills_join_the_catalog_below_local_ones(
    setup: tuple[Path, Path, dict[str, str]],
) -> None:
    local, cfg, env = setup
    book = skillbook.load(local, config=cfg, env=env)
    by_name = {s.name: s for s in book.skills}
    remote = by_name["remote-notes"]
    assert remote.source == "mcp-remote"
    assert remote.origin is not None and "team" in remote.origin
    assert remote.file_path.read_text(encoding="utf-8").endswith("Body of remote-notes.\n")
    # Local wins over remote for the same name, and the shadowing is reported.
    assert by_name["shared-name"].source == "openclaw-workspace"
    assert any(s.name == "shared-name" for s in book.discovery.shadowed)
    assert "<name>remote-notes</name>" in book.prompt
    assert "The local copy wins." in book.prompt


def test_cli_lists_remote_skills_with_their_source(
    setup: tuple[Path, Path, dict[str, str]],
) -> None:
    local, cfg, env = setup
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "skillbook",
            "--workspace",
            str(local),
            "--config",
            str(cfg),
            "list",
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    skills = {s["name"]: s for s in json.loads(proc.stdout)["skills"]}
    assert skills["remote-notes"]["source"] == "mcp-remote"
    assert "team" in skills["remote-notes"]["origin"]
    assert "origin" not in skills["shared-name"]


def test_bad_server_config_names_the_key(tmp_path: Path) -> None:
    cfg = tmp_path / "bad.json"
    cfg.write_text('{"skills": {"mcp": {"servers": [{"name": "x"}]}}}', encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        skillbook.load_config(cfg)
    assert "skills.mcp.servers[0]" in str(info.value)


def test_read_fetches_remote_files_on_demand_and_exec_refuses_remote_skills(
    setup: tuple[Path, Path, dict[str, str]],
) -> None:
    from skillbook.mcp.remote_catalog import fetch_remote_file
    from skillbook.mcp.remote_source import DEFAULT_CACHE_DIRNAME
    from skillbook.runtime.tools import ExecTool, ReadTool

    local, cfg, env = setup
    book = skillbook.load(local, config=cfg, env=env)
    remote = book.get("remote-notes")
    specs = book.config.skills.mcp_servers
    cache = book.paths.state_dir / DEFAULT_CACHE_DIRNAME

    def fetch(skill: skillbook.Skill, relative: str) -> object:
        return fetch_remote_file(skill, relative, specs, cache_dir=cache)

    read = ReadTool(book.eligible, home=env["HOME"], fetch_missing=fetch)
    result = read.run({"path": str(remote.base_dir / "references" / "more.md")})
    assert not result.is_error, result.text
    assert result.text == "More detail, fetched on demand.\n"
    missing = read.run({"path": str(remote.base_dir / "references" / "absent.md")})
    assert missing.is_error

    exec_tool = ExecTool(book.eligible, config=book.config, base_env=env, workspace=local)
    refused = exec_tool.run({"command": "true", "skill": "remote-notes"})
    assert refused.is_error
    assert "remote MCP server" in refused.text
