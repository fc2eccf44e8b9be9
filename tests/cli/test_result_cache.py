"""``skillbook prompt`` answered from a kept result (skillbook.cli.entry + footprint +
result_store): one test per kind of input the build reads, each proving that a change
to it makes the fast path step aside, and that the next run prints the new prompt."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from factories import write_file, write_skill
from result_world import World, fake_module

from skillbook.pipeline.cache import footprint


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    # Files written a moment ago are racy; the tests give every change a distinct
    # timestamp instead (World.bump), so the racy rule is tested on its own below.
    monkeypatch.setattr(footprint, "RACY_NS", -(10**18))
    yield World.make(tmp_path)


def primed(world: World, *extra: str) -> str:
    """Run once (records), and check that the next run is answered from the record."""
    first = world.prompt(*extra)
    assert world.cached(*extra) == first
    assert world.prompt(*extra) == first
    return first


def changed(world: World, change: Callable[[], None], *extra: str) -> tuple[str, str]:
    """The prompt before and after ``change``; the fast path must not answer in between."""
    before = primed(world, *extra)
    change()
    assert world.cached(*extra) is None
    after = world.prompt(*extra)
    assert after == world.fresh(*extra)
    assert world.cached(*extra) == after
    return before, after


def test_the_second_run_is_answered_from_the_record(world: World) -> None:
    text = primed(world)
    assert "<name>alpha</name>" in text and "<name>beta</name>" not in text
    assert text == world.fresh()
    assert len(world.stored()) == 1
    # --section and --read-tool are keys of their own.
    section = primed(world, "--section", "--read-tool", "cat")
    assert section != text and "cat" in section
    assert len(world.stored()) == 2


def test_editing_a_skill_md(world: World) -> None:
    md = write_skill(world.skills / "alpha", description="Alpha does b.") / "SKILL.md"
    world.bump(md)
    before, after = changed(
        world,
        lambda: world.bump(
            write_skill(world.skills / "alpha", description="Alpha does c.") / "SKILL.md"
        ),
    )
    assert "Alpha does b." in before and "Alpha does c." in after


def test_adding_and_removing_a_skill(world: World) -> None:
    _, after = changed(
        world, lambda: world.bump(write_skill(world.skills / "delta") / "SKILL.md", world.skills)
    )
    assert "<name>delta</name>" in after

    def remove() -> None:
        (world.skills / "delta" / "SKILL.md").unlink()
        (world.skills / "delta").rmdir()
        world.bump(world.skills)

    _, after = changed(world, remove)
    assert "delta" not in after


def test_chmod_of_a_skill_md(world: World) -> None:
    md = world.skills / "alpha" / "SKILL.md"
    _, after = changed(world, lambda: md.chmod(0o600))
    assert "<name>alpha</name>" in after


def test_a_new_root_appearing(world: World) -> None:
    project = world.ws / ".agents" / "skills"

    def add_root() -> None:
        write_skill(project / "epsilon")
        world.bump(project / "epsilon" / "SKILL.md", project, project.parent, world.ws)

    _, after = changed(world, add_root)
    assert "<name>epsilon</name>" in after


def test_editing_the_config(world: World) -> None:
    def edit() -> None:
        write_file(world.config, json.dumps({"skills": {"entries": {"alpha": {"enabled": False}}}}))
        world.bump(world.config)

    before, after = changed(world, edit)
    assert "<name>alpha</name>" in before and "<name>alpha</name>" not in after


def test_a_config_candidate_appearing(world: World) -> None:
    # Without --config the config is looked for; a file appearing there is read.
    args = ["-w", str(world.ws), "prompt"]
    first = world.run(*args)
    assert world.run(*args) == first

    def cached() -> str | None:
        from skillbook.cli import entry
        from skillbook.pipeline.cache import result_store

        with world.active():
            folder = result_store.results_folder(os.environ)
            assert folder is not None
            return entry.cached_output(
                folder, result_store.invocation_key(args, os.getcwd()), os.environ
            )

    assert cached() == first
    candidate = world.base / "state" / "skillbook.json"
    write_file(candidate, json.dumps({"skills": {"entries": {"alpha": {"enabled": False}}}}))
    world.bump(candidate)
    assert cached() is None
    assert "<name>alpha</name>" not in world.run(*args)


def test_an_env_var_the_build_read(world: World) -> None:
    def set_foo() -> None:
        world.env["FOO"] = "1"

    _, after = changed(world, set_foo)
    assert "<name>gamma</name>" in after
    # A variable no build step read does not matter.
    world.env["UNRELATED_VARIABLE"] = "x"
    assert world.cached() == after


def test_a_gated_binary_appearing_losing_its_exec_bit_and_disappearing(world: World) -> None:
    tool = world.bin / "tool"

    def appear() -> None:
        write_file(tool, "#!/bin/sh\n").chmod(0o755)
        world.bump(tool)

    _, after = changed(world, appear)
    assert "<name>beta</name>" in after
    _, after = changed(world, lambda: tool.chmod(0o644))
    assert "<name>beta</name>" not in after
    tool.chmod(0o755)
    world.prompt()
    _, after = changed(world, tool.unlink)
    assert "<name>beta</name>" not in after


def test_a_loaded_module_file_touched(world: World, tmp_path: Path) -> None:
    source = write_file(tmp_path / "fake_module.py", "x = 1\n")
    world.bump(source)
    with fake_module(source):
        changed(world, lambda: world.bump(source))


@pytest.mark.parametrize(
    ("how", "extra"),
    [("flag", ("--no-cache",)), ("env", ()), ("config", ())],
)
def test_off_with_the_parse_cache(world: World, how: str, extra: tuple[str, ...]) -> None:
    if how == "env":
        world.env["SKILLBOOK_CACHE"] = "0"
    if how == "config":
        write_file(world.config, json.dumps({"skills": {"cache": False}}))
        world.bump(world.config)
    text = world.prompt(*extra)
    assert world.prompt(*extra) == text
    assert world.stored() == []


def test_a_root_that_is_not_plain_is_recorded_read_by_read(world: World) -> None:
    # Links, nested roots, groups...: tests/cli/test_result_cache_scanned.py, one by one.
    link = world.skills / "linked"
    link.symlink_to(world.skills / "alpha")
    world.bump(world.skills)

    def retarget() -> None:
        link.unlink()
        link.symlink_to(world.skills / "gamma")

    _, after = changed(world, retarget)
    assert "<name>alpha</name>" in after


def test_a_plugin_folder_with_anything_in_it_is_not_recorded(world: World) -> None:
    (world.ws / ".openclaw" / "extensions" / "thing").mkdir(parents=True)
    world.prompt()
    assert world.stored() == []


def test_files_changed_just_before_the_build_are_not_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = World.make(tmp_path)
    monkeypatch.setattr(footprint, "RACY_NS", 2_000_000_000)
    # World.make dates everything in the past, but the ctimes are now.
    world.prompt()
    assert world.stored() == []


def test_other_commands_and_options_fall_through(world: World) -> None:
    world.run("-w", str(world.ws), "-c", str(world.config), "prompt", "--json")
    world.run("-w", str(world.ws), "-c", str(world.config), "list")
    assert world.stored() == []


def test_keeping_results_does_not_create_a_default_state_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without SKILLBOOK_STATE_DIR the state dir is the first existing of ~/.skillbook,
    # ~/.openclaw, ...: a result kept under ~/.skillbook would move it.
    monkeypatch.setattr(footprint, "RACY_NS", -(10**18))
    world = World.make(tmp_path)
    del world.env["SKILLBOOK_STATE_DIR"]
    home = Path(world.env["HOME"])
    (home / ".openclaw").mkdir()
    world.bump(home / ".openclaw", home)
    text = world.prompt()
    assert world.cached() == text
    assert not (home / ".skillbook").exists()
    assert list((home / ".cache" / "skillbook" / "results").glob("*.result"))


def test_a_removed_working_folder_goes_to_the_command_line(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillbook.cli import entry

    calls: list[list[str]] = []
    monkeypatch.setattr("skillbook.cli.app.main", calls.append)
    gone = tmp_path / "gone"
    gone.mkdir()
    with world.active():
        os.chdir(gone)
        gone.rmdir()
        entry.main(world.args())
        os.chdir(world.base)
    assert calls == [world.args()]
