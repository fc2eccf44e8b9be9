"""``skillbook sync`` and ``skillbook load``, in-process with click's runner."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from factories import write_skill

from distribution.sync.sync_world import World, listing, lock_held_elsewhere
from skillbook.cli.app import cli

ENV_META = {"openclaw": {"primaryEnv": "WX_KEY", "requires": {"env": ["WX_KEY"]}}}


@pytest.fixture
def world(tmp_path: Path) -> World:
    w = World(tmp_path)
    write_skill(w.skills / "alpha")
    write_skill(w.skills / "weather", metadata=ENV_META)
    write_skill(w.bundled / "jq")
    return w


def run(world: World, *args: str, **env: str) -> Result:
    return CliRunner().invoke(
        cli, ["-w", str(world.workspace), *args], env=world.env(**env), catch_exceptions=False
    )


def test_sync_prints_where_each_skill_went(world: World) -> None:
    target = world.base / "t"
    result = run(world, "sync", str(target), WX_KEY="x")
    assert result.exit_code == 0, result.output
    assert f"Synced 3 of 3 skills into {target / 'skills'}" in result.stdout
    assert "  weather  skills/weather" in result.stdout
    assert "WX_KEY  set      weather" in result.stdout
    assert "docker run --env WX_KEY ..." in result.stdout
    assert sorted(os.listdir(target / "skills")) == ["alpha", "jq", "weather"]


def test_sync_json(world: World) -> None:
    result = run(world, "sync", str(world.base / "t"), "--json")
    data = json.loads(result.stdout)
    assert [s["folder"] for s in data["synced"]] == ["jq", "alpha", "weather"]
    assert data["env"] == [
        {"name": "WX_KEY", "skills": ["weather"], "primary": True, "state": "missing"}
    ]


def test_mount_and_print_prompt(world: World) -> None:
    target = world.base / "t"
    result = run(world, "sync", str(target), "--mount", "/skills", "--print-prompt")
    assert result.exit_code == 0
    assert result.stdout.startswith("\n\nThe following skills")
    assert "<location>/skills/alpha/SKILL.md</location>" in result.stdout
    assert "Synced" not in result.stdout and "Synced 3 of 3" in result.stderr
    assert (target / "skills" / ".catalog.md").read_text() == result.stdout


def test_print_prompt_without_a_mount_uses_the_target_paths(world: World) -> None:
    target = world.base / "t"
    result = run(world, "sync", str(target), "--print-prompt")
    assert f"<location>{target / 'skills' / 'alpha' / 'SKILL.md'}</location>" in result.stdout


def test_env_file_holds_names_only(world: World) -> None:
    env_file = world.base / "sandbox.env"
    result = run(world, "sync", str(world.base / "t"), "--env-file", str(env_file), WX_KEY="s3")
    assert result.exit_code == 0
    text = env_file.read_text()
    assert "WX_KEY" in text.splitlines() and "s3" not in text
    assert not [n for n in os.listdir(world.base) if n.startswith(".sandbox.env")]


def test_skill_filter_and_links(world: World) -> None:
    write_skill(world.skills / ".hidden" / "real", name="aliased")
    (world.skills / "aliased").symlink_to(".hidden/real")
    target = world.base / "t"
    result = run(world, "sync", str(target), "--skill", "aliased", "--links", "sandbox")
    assert result.exit_code == 0, result.output
    assert [e["path"] for e in listing(target / "skills")] == ["aliased", "aliased/SKILL.md"]


def test_a_failed_skill_exits_1(world: World) -> None:
    os.mkfifo(world.skills / "alpha" / "pipe")
    result = run(world, "sync", str(world.base / "t"))
    assert result.exit_code == 1
    assert "Failed to copy alpha to sandbox: Cannot copy a FIFO pipe" in result.stdout


def test_a_foreign_skills_folder_needs_force(world: World) -> None:
    target = world.base / "t"
    write_skill(target / "skills" / "precious")
    result = run(world, "sync", str(target))
    assert result.exit_code == 2
    assert "was not made by skillbook sync" in result.stderr
    assert (target / "skills" / "precious" / "SKILL.md").exists()
    assert run(world, "sync", str(target), "--force").exit_code == 0


def test_same_workspace_is_a_no_op(world: World) -> None:
    result = run(world, "sync", str(world.workspace))
    assert result.exit_code == 0
    assert result.stdout.startswith("Nothing synced: the target")


@pytest.mark.subprocess
def test_no_wait_exits_2_when_busy(world: World) -> None:
    target = world.base / "t"
    target.mkdir()
    with lock_held_elsewhere(target):
        result = run(world, "sync", str(target), "--no-wait")
    assert result.exit_code == 2 and "another sync" in result.stderr


def test_bad_mount_exits_2(world: World) -> None:
    result = run(world, "sync", str(world.base / "t"), "--mount", "relative")
    assert result.exit_code == 2 and "absolute path" in result.stderr


# -- load -----------------------------------------------------------------------------


def test_load_a_skill_then_refuse_an_edited_copy(world: World) -> None:
    result = run(world, "load", "jq")
    assert result.exit_code == 0
    assert result.stdout == "✓ jq: loaded into skills/jq (from bundled)\n"
    assert run(world, "load", "jq").stdout == "= jq: skills/jq is up to date\n"
    (world.skills / "jq" / "notes.md").write_text("mine")
    refused = run(world, "load", "jq")
    assert refused.exit_code == 1
    assert "✗ jq: skills/jq was edited (notes.md); not overwritten" in refused.stdout
    forced = run(world, "load", "jq", "--force")
    assert forced.exit_code == 0 and "discarded your changes to notes.md" in forced.stdout


def test_load_all_json_and_from(world: World) -> None:
    write_skill(world.managed / "jq", description="managed jq")
    data = json.loads(run(world, "load", "--all", "--from", "bundled", "--json").stdout)
    assert [(s["name"], s["source"], s["action"]) for s in data["skills"]] == [
        ("jq", "openclaw-bundled", "loaded")
    ]
    assert run(world, "load", "jq", "--from", "managed").stdout.startswith("✓ jq: refreshed")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "Provide a skill name or use --all."),
        (("jq", "--all"), "Use either skill names or --all."),
        (("nope",), 'no bundled or managed skill "nope"'),
        (("nope", "--from", "managed"), 'no managed skill "nope"'),
    ],
)
def test_load_usage_errors(world: World, args: tuple[str, ...], message: str) -> None:
    result = run(world, "load", *args)
    assert result.exit_code == 2 and message in result.stderr


def test_load_with_nothing_to_load(tmp_path: Path) -> None:
    world = World(tmp_path)
    result = run(world, "load", "--all")
    assert result.exit_code == 0 and result.stdout == "No bundled or managed skills to load.\n"
