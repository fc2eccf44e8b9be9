"""The sync API: which skills, the target guard, cleanup, catalog, env, failures."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from factories import skill_text, write_file, write_skill

from distribution.sync.sync_world import World, listing, lock_held_elsewhere
from skillbook.distribution import swap
from skillbook.distribution.sync import SyncBusy, SyncError, TargetNotSynced
from skillbook.distribution.sync.marker import MARKER_FILE
from skillbook.distribution.sync.result import SyncProgress
from skillbook.distribution.sync.sandbox import CATALOG_FILE, env_file_text
from skillbook.distribution.sync.workspace import sync, sync_book, sync_entries
from skillbook.pipeline.book import Loader

GATED = {"openclaw": {"requires": {"bins": ["not-installed"]}}}


@pytest.fixture
def world(tmp_path: Path) -> World:
    w = World(tmp_path)
    write_skill(w.skills / "alpha")
    write_skill(w.skills / "gated", metadata=GATED)
    write_skill(w.bundled / "alpha", name="alpha", description="bundled, shadowed")
    write_skill(w.bundled / "tool", name="tool")
    return w


def folders(target: Path) -> list[str]:
    return sorted(os.listdir(target / "skills"))


def test_without_a_filter_every_winner_is_synced_ready_or_not(world: World) -> None:
    book = world.book()
    assert [s.name for s in sync_entries(book)] == ["alpha", "tool", "gated"]
    result = sync_book(book, world.base / "t")
    assert folders(world.base / "t") == ["alpha", "gated", "tool"]
    # The winning copy of "alpha" (the workspace's), not the bundled one.
    assert "bundled" not in (world.base / "t" / "skills" / "alpha" / "SKILL.md").read_text()
    assert result.ok and [s.folder for s in result.synced] == ["alpha", "tool", "gated"]


def test_with_a_filter_only_ready_allowed_skills_are_synced(world: World) -> None:
    book = world.book(skill_filter=["alpha", "gated"])
    assert [s.name for s in sync_entries(book)] == ["alpha"]
    sync_book(book, world.base / "t")
    assert folders(world.base / "t") == ["alpha"]


def test_the_agent_allowlist_is_a_filter(world: World) -> None:
    config = {"agents": {"list": [{"id": "writer", "skills": ["tool", "gated"]}]}}
    sync_book(world.book(config, agent="writer"), world.base / "t")
    assert folders(world.base / "t") == ["tool"]


def test_the_convenience_function_loads_and_syncs(world: World) -> None:
    result = sync(world.workspace, world.base / "t", env=world.env(), skill_filter=["tool"])
    assert [s.name for s in result.synced] == ["tool"]


def test_same_source_and_target_is_a_no_op(world: World) -> None:
    before = listing(world.skills)
    result = sync_book(world.book(), world.workspace)
    assert result.skipped and result.synced == ()
    assert [d.code for d in result.diagnostics] == ["sync.same-workspace"]
    (world.base / "alias").symlink_to(world.workspace)
    assert sync_book(world.book(), world.base / "alias").skipped
    assert listing(world.skills) == before


def test_a_skills_folder_no_sync_made_is_not_replaced_without_force(world: World) -> None:
    target = world.base / "t"
    mine = write_skill(target / "skills" / "my-own-skill")
    with pytest.raises(TargetNotSynced, match="was not made by skillbook sync"):
        sync_book(world.book(), target)
    assert (mine / "SKILL.md").is_file()
    assert sorted(os.listdir(target)) == ["skills"]  # no staging left behind
    sync_book(world.book(), target, force=True)
    assert folders(target) == ["alpha", "gated", "tool"]


def test_an_empty_skills_folder_is_fine_and_later_syncs_recognise_their_tree(
    world: World,
) -> None:
    target = world.base / "t"
    (target / "skills").mkdir(parents=True)
    sync_book(world.book(), target)
    write_skill(world.skills / "beta")
    sync_book(world.book(), target)
    assert "beta" in folders(target)
    record = json.loads((target / MARKER_FILE).read_text())
    assert [(os.lstat(target / "skills").st_dev, os.lstat(target / "skills").st_ino)] == [
        tuple(t) for t in record["trees"][:1]
    ]
    (target / MARKER_FILE).unlink()
    with pytest.raises(TargetNotSynced):
        sync_book(world.book(), target)


def test_leftovers_of_a_crashed_sync_are_removed_and_reported(world: World) -> None:
    target = world.base / "t"
    sync_book(world.book(), target)
    half = swap.staging_name(target / "skills", "tmp", "abcdefgh")
    write_skill(half / "half-copied")
    result = sync_book(world.book(), target)
    assert not half.exists()
    assert [d.code for d in result.diagnostics if d.code.startswith("sync.left")] == [
        "sync.leftover-removed"
    ]
    assert sorted(os.listdir(target)) == [MARKER_FILE, "skills"]


def test_a_failed_copy_leaves_nothing_of_that_skill(world: World) -> None:
    os.mkfifo(world.skills / "alpha" / "a-pipe")
    result = sync_book(world.book(), world.base / "t")
    assert folders(world.base / "t") == ["gated", "tool"]
    assert not result.ok and result.failed == ("alpha",)
    bad = [d for d in result.diagnostics if d.code == "sync.copy-failed"]
    assert bad[0].message.startswith("Failed to copy alpha to sandbox: Cannot copy a FIFO pipe")
    assert bad[0].severity == "error"


def test_a_target_inside_a_skill_cannot_swallow_itself(world: World) -> None:
    target = world.skills / "alpha" / "sandbox"
    result = sync_book(world.book(), target)
    assert result.failed == ("alpha",)
    assert "subdirectory of itself" in result.diagnostics[0].message
    assert folders(target) == ["gated", "tool"]


def test_standalone_markdown_skills_are_reported_not_synced(world: World) -> None:
    write_file(world.skills / "notes.md", skill_text("notes", "loose file", body=""))
    book = Loader(world.workspace, env=world.env(), cwd=world.base, mode="mixed").load()
    assert "notes" in [s.name for s in book.skills]
    result = sync_book(book, world.base / "t")
    assert "notes.md" not in folders(world.base / "t")
    assert [d.skill for d in result.diagnostics if d.code == "sync.standalone-skipped"] == ["notes"]


def test_one_thread_or_many_give_the_same_tree(world: World) -> None:
    for i in range(30):
        folder = write_skill(world.skills / f"extra-{i}")
        (folder / "sub").mkdir()
        (folder / "sub" / "notes.md").write_text(f"notes {i}\n" * 100)
    one = sync_book(world.book(), world.base / "one", workers=1)
    many = sync_book(world.book(), world.base / "many", workers=8)
    assert listing(world.base / "one" / "skills") == listing(world.base / "many" / "skills")
    assert [s.folder for s in one.synced] == [s.folder for s in many.synced]
    assert [d.to_dict() for d in one.diagnostics] == [d.to_dict() for d in many.diagnostics]
    assert len(many.synced) == 33


def test_progress_is_reported_per_skill_and_after_the_swap(world: World) -> None:
    seen: list[SyncProgress] = []
    sync_book(world.book(), world.base / "t", progress=seen.append)
    assert [(p.stage, p.done, p.total, p.name) for p in seen] == [
        ("skill", 1, 3, "alpha"),
        ("skill", 2, 3, "tool"),
        ("skill", 3, 3, "gated"),
        ("swap", 3, 3, None),
    ]


def test_an_error_midway_removes_the_half_built_tree(world: World) -> None:
    target = world.base / "t"
    sync_book(world.book(), target)
    before = listing(target / "skills")

    def explode(progress: SyncProgress) -> None:
        if progress.done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sync_book(world.book(), target, progress=explode)
    assert listing(target / "skills") == before
    assert sorted(os.listdir(target)) == [MARKER_FILE, "skills"]


def test_a_symlinked_skill_with_sandbox_links_is_a_real_folder(world: World) -> None:
    write_skill(world.skills / ".store" / "real", name="linked")
    (world.skills / ".store" / "real" / "leak").symlink_to("/etc/passwd")
    (world.skills / "linked").symlink_to(".store/real")
    result = sync_book(world.book(), world.base / "t", links="sandbox")
    copied = world.base / "t" / "skills" / "linked"
    assert copied.is_dir() and not copied.is_symlink() and not (copied / "leak").exists()
    assert [d.code for d in result.diagnostics if d.skill == "linked"] == ["sync.link-dropped"]


def test_catalog_with_the_sandbox_paths(world: World) -> None:
    write_skill(world.bundled / "dup-folder", name="first")
    write_skill(world.skills / "dup-folder", name="second")
    target = world.base / "t"
    result = sync_book(world.book(), target, mount="/skills/")
    assert result.mount == "/skills" and result.catalog is not None
    text = (target / "skills" / CATALOG_FILE).read_text()
    assert text == result.catalog.text + "\n"
    assert "<location>/skills/alpha/SKILL.md</location>" in text
    assert "<location>/skills/dup-folder/SKILL.md</location>" in text
    assert "<location>/skills/dup-folder-2/SKILL.md</location>" in text
    assert "gated" not in text  # not ready on this host: not offered
    assert str(world.base) not in text
    assert [s.name for s in result.catalog.kept] == ["alpha", "first", "tool", "second"]
    assert result.catalog_path == target / "skills" / CATALOG_FILE


def test_a_mount_must_be_absolute(world: World) -> None:
    with pytest.raises(ValueError, match="absolute path"):
        sync_book(world.book(), world.base / "t", mount="skills")


def test_declared_env_vars_are_listed_for_pass_through(world: World) -> None:
    meta = {
        "openclaw": {
            "primaryEnv": "WEATHER_KEY",
            "requires": {"env": ["WEATHER_KEY", "UNITS", "LD_PRELOAD"]},
        }
    }
    write_skill(world.skills / "weather", metadata=meta)
    write_skill(
        world.skills / "maps",
        metadata={"openclaw": {"requires": {"env": ["UNITS", "MAPS_TOKEN"]}}},
    )
    config = {"skills": {"entries": {"maps": {"env": {"MAPS_TOKEN": "from-config"}}}}}
    book = world.book(config)
    result = sync_book(book, world.base / "t", env={"WEATHER_KEY": "secret-value"})
    assert [(v.name, v.state, v.skills, v.primary) for v in result.env] == [
        ("UNITS", "missing", ("maps", "weather"), False),
        ("MAPS_TOKEN", "config", ("maps",), False),
        ("WEATHER_KEY", "set", ("weather",), True),
        ("LD_PRELOAD", "blocked", ("weather",), False),
    ]
    assert [d.code for d in result.diagnostics if d.code == "sync.env-blocked"] == [
        "sync.env-blocked"
    ]
    text = env_file_text(result.env)
    assert [line for line in text.splitlines() if not line.startswith("#")] == [
        "UNITS",
        "MAPS_TOKEN",
        "WEATHER_KEY",
    ]
    assert "secret-value" not in json.dumps(result.to_json())


def test_a_book_without_a_workspace_cannot_sync(world: World) -> None:
    book = Loader(None, env=world.env(), cwd=world.base).load()
    with pytest.raises(SyncError, match="needs a source workspace"):
        sync_book(book, world.base / "t")


def test_a_target_that_is_a_file_is_an_error(world: World) -> None:
    (world.base / "t").write_text("not a folder")
    with pytest.raises(SyncError, match="cannot sync into"):
        sync_book(world.book(), world.base / "t")


@pytest.mark.subprocess
def test_a_busy_target_fails_fast_without_wait(world: World) -> None:
    target = world.base / "t"
    target.mkdir()
    with lock_held_elsewhere(target), pytest.raises(SyncBusy, match="another sync into"):
        sync_book(world.book(), target, wait=False)
    assert sync_book(world.book(), target, wait=False).ok


def test_result_json_shape(world: World) -> None:
    result = sync_book(world.book(), world.base / "t", mount="/skills")
    data = result.to_json()
    assert list(data) == [
        "source",
        "target",
        "skillsDir",
        "skipped",
        "swap",
        "synced",
        "failed",
        "env",
        "diagnostics",
        "catalog",
    ]
    assert data["swap"] == "rename" and data["synced"][0]["folder"] == "alpha"
    assert data["catalog"]["mount"] == "/skills" and data["catalog"]["included"]


def test_a_failed_cleanup_is_a_warning_not_a_failure(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = world.base / "t"
    sync_book(world.book(), target)
    real_remove = swap.remove_tree

    def remove(path: str | os.PathLike[str], *, workers: int = 1) -> None:
        if ".skills.tmp-" in os.fspath(path):  # the old tree after the exchange
            raise PermissionError(13, "Permission denied", os.fspath(path))
        real_remove(path, workers=workers)

    monkeypatch.setattr(swap, "remove_tree", remove)
    write_skill(world.skills / "beta")
    result = sync_book(world.book(), target)
    assert result.ok and "beta" in folders(target)
    assert [d.code for d in result.diagnostics] == ["sync.cleanup-failed"]
    monkeypatch.setattr(swap, "remove_tree", real_remove)
    again = sync_book(world.book(), target)
    assert [d.code for d in again.diagnostics] == ["sync.leftover-removed"]
