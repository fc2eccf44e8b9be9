"""``load``: copy bundled or managed skills into the workspace, never clobbering edits."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from factories import write_skill

from distribution.sync.sync_world import World
from skillbook.distribution import swap
from skillbook.distribution.sync import SyncError
from skillbook.distribution.sync.load import ORIGIN_FILE, load_skills, loadable_skills
from skillbook.errors import SkillNotFound
from skillbook.model import Source


@pytest.fixture
def world(tmp_path: Path) -> World:
    w = World(tmp_path)
    weather = write_skill(w.bundled / "weather", description="bundled weather")
    (weather / "scripts").mkdir()
    (weather / "scripts" / "get.sh").write_text("#!/bin/sh\ncurl wttr.in\n")
    (weather / "scripts" / "get.sh").chmod(0o755)
    write_skill(w.bundled / "jq-folder", name="jq")
    write_skill(w.managed / "weather", description="managed weather")
    return w


def test_a_loaded_copy_is_a_workspace_skill_that_wins(world: World) -> None:
    (outcome,) = load_skills(world.book(), ["jq"])
    assert (outcome.action, outcome.folder) == ("loaded", world.skills / "jq-folder")
    book = world.book()
    jq = book.get("jq")
    assert jq.source == Source.WORKSPACE and jq.base_dir == world.skills / "jq-folder"
    record = json.loads((world.skills / "jq-folder" / ORIGIN_FILE).read_text())
    assert record["source"] == "openclaw-bundled"
    assert [f["path"] for f in record["files"]] == ["SKILL.md"]


def test_managed_wins_over_bundled_unless_asked(world: World) -> None:
    (managed,) = load_skills(world.book(), ["weather"])
    assert managed.source == Source.MANAGED
    assert "managed weather" in (world.skills / "weather" / "SKILL.md").read_text()
    # The copy was not edited, so switching it to the bundled original needs no force.
    (bundled,) = load_skills(world.book(), ["weather"], sources=(Source.BUNDLED.value,))
    assert bundled.source == Source.BUNDLED and bundled.action == "refreshed"
    assert "bundled weather" in (world.skills / "weather" / "SKILL.md").read_text()


def test_all_and_lookup_by_name_or_folder(world: World) -> None:
    book = world.book()
    assert [s.name for s in loadable_skills(book)] == ["jq", "weather"]
    assert [o.name for o in load_skills(book, None)] == ["jq", "weather"]
    assert [o.action for o in load_skills(world.book(), ["jq-folder", "jq"])] == ["unchanged"]
    with pytest.raises(SkillNotFound):
        load_skills(world.book(), ["jq", "nope"])


def test_an_unchanged_copy_is_left_alone_and_an_unedited_one_refreshed(world: World) -> None:
    load_skills(world.book(), ["weather"], sources=(Source.BUNDLED.value,))
    again = load_skills(world.book(), ["weather"], sources=(Source.BUNDLED.value,))
    assert [o.action for o in again] == ["unchanged"]
    write_skill(world.bundled / "weather", description="bundled weather, v2")
    (refreshed,) = load_skills(world.book(), ["weather"], sources=(Source.BUNDLED.value,))
    assert refreshed.action == "refreshed" and refreshed.diagnostics == ()
    assert "v2" in (world.skills / "weather" / "SKILL.md").read_text()
    assert os.access(world.skills / "weather" / "scripts" / "get.sh", os.X_OK)


def test_an_edited_copy_is_refused_with_the_changed_files(world: World) -> None:
    bundled = (Source.BUNDLED.value,)
    load_skills(world.book(), ["weather"], sources=bundled)
    copy = world.skills / "weather"
    (copy / "SKILL.md").write_text((copy / "SKILL.md").read_text() + "\nMy own notes.\n")
    (copy / "scripts" / "get.sh").unlink()
    (copy / "mine.md").write_text("new file")
    write_skill(world.bundled / "weather", description="bundled weather, v2")
    before = (copy / "SKILL.md").read_text()
    (refused,) = load_skills(world.book(), ["weather"], sources=bundled)
    assert refused.action == "refused" and not refused.ok
    assert refused.changed == ("SKILL.md", "mine.md", "scripts/get.sh")
    assert [d.code for d in refused.diagnostics] == ["load.edited"]
    assert "SKILL.md, mine.md, scripts/get.sh" in refused.diagnostics[0].message
    assert (copy / "SKILL.md").read_text() == before and (copy / "mine.md").exists()
    (forced,) = load_skills(world.book(), ["weather"], sources=bundled, force=True)
    assert forced.action == "replaced" and [d.code for d in forced.diagnostics] == ["load.replaced"]
    assert not (copy / "mine.md").exists() and "v2" in (copy / "SKILL.md").read_text()


def test_a_folder_load_did_not_make_counts_as_edited(world: World) -> None:
    write_skill(world.skills / "jq-folder", name="my-jq")
    (refused,) = load_skills(world.book(), ["jq"])
    assert refused.action == "refused" and refused.changed == ("SKILL.md",)
    (world.skills / "jq-folder" / "SKILL.md").unlink()
    (loaded,) = load_skills(world.book(), ["jq"])  # an empty folder is fine
    assert loaded.action == "loaded"


def test_leftovers_are_cleaned_and_failures_leave_nothing(world: World) -> None:
    world.skills.mkdir(parents=True)
    half = swap.staging_name(world.skills / "jq-folder", "tmp", "abcdefgh")
    write_skill(half)
    (outcome,) = load_skills(world.book(), ["jq"])
    assert [d.code for d in outcome.diagnostics] == ["sync.leftover-removed"]
    assert not half.exists()
    os.mkfifo(world.bundled / "weather" / "pipe")
    with pytest.raises(SyncError, match="cannot copy weather"):
        load_skills(world.book(), ["weather"], sources=(Source.BUNDLED.value,))
    assert sorted(os.listdir(world.skills)) == ["jq-folder"]


def test_links_leaving_the_skill_are_not_copied(world: World) -> None:
    (world.bundled / "weather" / "host").symlink_to("/etc/passwd")
    (world.bundled / "weather" / "inner").symlink_to("scripts/get.sh")
    load_skills(world.book(), ["weather"], sources=(Source.BUNDLED.value,))
    assert not os.path.lexists(world.skills / "weather" / "host")
    assert os.readlink(world.skills / "weather" / "inner") == "scripts/get.sh"


def test_load_needs_a_workspace(world: World) -> None:
    from skillbook.pipeline.book import Loader

    book = Loader(None, env=world.env(), cwd=world.base).load()
    with pytest.raises(SyncError, match="needs a workspace"):
        load_skills(book, ["jq"])


def test_a_failed_cleanup_of_the_old_copy_is_reported(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_skills(world.book(), ["jq"])
    write_skill(world.bundled / "jq-folder", name="jq", description="v2")
    real_remove = swap.remove_tree

    def remove(path: str | os.PathLike[str], *, workers: int = 1) -> None:
        if ".jq-folder.tmp-" in os.fspath(path):  # the old copy after the exchange
            raise PermissionError(13, "Permission denied", os.fspath(path))
        real_remove(path, workers=workers)

    monkeypatch.setattr(swap, "remove_tree", remove)
    (outcome,) = load_skills(world.book(), ["jq"])
    assert outcome.action == "refreshed"
    assert [d.code for d in outcome.diagnostics] == ["sync.cleanup-failed"]
    assert "v2" in (world.skills / "jq-folder" / "SKILL.md").read_text()
