"""The result cache over skill roots that are not plain (links, nested ``skills/``
roots, hidden and grouped folders, broken skills) and over the recursive scan of the
OpenClaw 2026.9 profile: each kind of input is recorded, and a change to it makes the
fast path step aside, the next run printing what a build that reuses nothing prints."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from factories import skill_text, write_file, write_skill
from result_world import World

from skillbook.pipeline.cache import footprint

PROFILES = (None, "openclaw-2026.9")


@pytest.fixture(params=PROFILES, ids=("2026.4", "2026.9"))
def world(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[World]:
    monkeypatch.setattr(footprint, "RACY_NS", -(10**18))  # see test_result_cache.py
    yield World.make(tmp_path, compat=request.param)


def recorded(world: World) -> str:
    """Run once; the next run must be answered from the record, as a fresh build."""
    first = world.prompt()
    assert world.cached() == first
    assert first == world.fresh()
    return first


def after(world: World, change: Callable[[], None]) -> tuple[str, str]:
    """The prompt before and after ``change``, which the fast path must notice."""
    before = recorded(world)
    change()
    assert world.cached() is None
    text = world.prompt()
    assert text == world.fresh()
    assert world.cached() == text
    return before, text


def _outside(world: World, name: str, description: str) -> Path:
    folder = write_skill(world.base / "elsewhere" / name, description=description)
    world.bump(folder / "SKILL.md", folder, folder.parent)
    return folder


def _relink(world: World, link: Path, target: Path) -> None:
    if link.is_symlink():
        link.unlink()
    link.symlink_to(target)
    world.bump(link.parent)


def test_a_skill_folder_linked_from_outside_the_root(world: World) -> None:
    # ~/.openclaw/skills/far -> a checkout elsewhere, allowed by the config.
    target = _outside(world, "far", "Far away one.")
    elsewhere = json.dumps({"skills": {"load": {"allowSymlinkTargets": [str(target.parent)]}}})
    world.bump(write_file(world.config, elsewhere))
    managed = world.base / "state" / "skills"
    managed.mkdir(parents=True)
    world.bump(managed, managed.parent)
    link = managed / "far"
    _relink(world, link, target)
    before, text = after(
        world, lambda: world.bump(write_skill(target, description="Far away two.") / "SKILL.md")
    )
    assert "Far away one." in before and "Far away two." in text
    other = _outside(world, "near", "Near by.")
    before, text = after(world, lambda: _relink(world, link, other))
    assert "Near by." in text and "Far away" not in text
    before, text = after(world, lambda: _relink(world, link, world.base / "nowhere"))
    assert "Near by." in before and "Near by." not in text


def test_a_folder_above_a_link_target_renamed(world: World) -> None:
    # Nothing the link reaches changes but the real path the scan took: `far` resolves
    # through `via`, a link to `elsewhere`, renamed and followed by `via`.
    target = _outside(world, "far", "Far away.")
    elsewhere = target.parent
    via = world.base / "via"
    via.symlink_to(elsewhere)
    allowed = {"skills": {"load": {"allowSymlinkTargets": [str(via)]}}}
    world.bump(write_file(world.config, json.dumps(allowed)))
    managed = world.base / "state" / "skills"
    managed.mkdir(parents=True)
    world.bump(managed, managed.parent)
    _relink(world, managed / "far", via / "far")

    def rename() -> None:
        moved = elsewhere.rename(world.base / "moved")
        world.bump(moved, world.base)
        _relink(world, via, moved)

    before, text = after(world, rename)
    assert "<name>far</name>" in before
    if world.compat:  # the managed root may link anywhere: the real folder is listed
        assert f"{elsewhere}/far/SKILL.md" in before and "moved/far/SKILL.md" in text


def test_a_linked_skill_folder_inside_the_root_retargeted(world: World) -> None:
    for name in ("one", "two"):
        folder = write_skill(world.skills / "pool" / name, description=f"Pool {name}.")
        world.bump(folder / "SKILL.md", folder, folder.parent)
    link = world.skills / "picked"
    _relink(world, link, world.skills / "pool" / "one")
    before, text = after(world, lambda: _relink(world, link, world.skills / "pool" / "two"))
    if world.compat is None:  # 2026.9 lists pool/one and pool/two whatever the link says
        assert "<name>one</name>" in before and "<name>one</name>" not in text
        assert "<name>two</name>" in text


def test_the_linked_target_edited_and_the_link_made_dangling(world: World) -> None:
    target = write_skill(world.skills / "store", description="Stored one.")
    world.bump(target / "SKILL.md", target)
    link = world.skills / "alias"
    _relink(world, link, target)
    before, text = after(
        world, lambda: world.bump(write_skill(target, description="Stored two.") / "SKILL.md")
    )
    assert "Stored two." in text and "Stored one." in before

    def dangle() -> None:
        _relink(world, link, world.base / "nowhere")

    after(world, dangle)


def test_a_symlinked_skill_md(world: World) -> None:
    folder = world.skills / "pointer"
    real = write_file(folder / "real.md", skill_text("pointer", "Points one.", body=""))
    world.bump(real, folder)
    (folder / "SKILL.md").symlink_to("real.md")
    world.bump(folder)
    before, text = after(
        world,
        lambda: world.bump(write_file(real, skill_text("pointer", "Points two, longer.", body=""))),
    )
    if world.compat:  # 2026.9 reads a SKILL.md linked inside its folder; 2026.4 refuses it
        assert "Points one." in before and "Points two, longer." in text
    else:
        assert "pointer" not in before + text


def test_a_skill_md_edited_in_place_in_a_root_that_is_not_plain(world: World) -> None:
    # A dangling link makes the root not plain; the edit changes only the file itself
    # (its folder keeps its mtime), so only the file's own signature can show it.
    (world.skills / "dangling").symlink_to(world.base / "nowhere")
    world.bump(world.skills)
    md = world.skills / "alpha" / "SKILL.md"

    def edit() -> None:
        folder_mtime = md.parent.stat().st_mtime_ns
        write_skill(md.parent, description="Alpha, edited in place.")
        os.utime(md, ns=(1_500_000_000_000_000_000, 1_500_000_000_000_000_000))
        assert md.parent.stat().st_mtime_ns == folder_mtime

    before, text = after(world, edit)
    assert "Alpha, edited in place." in text and "Alpha does a." in before


def test_a_nested_skills_root(world: World) -> None:
    nested = world.ws / "skills" / "skills"
    folder = write_skill(nested / "inner", description="Inner one.")
    world.bump(folder / "SKILL.md", folder, nested)
    before, text = after(
        world, lambda: world.bump(write_skill(folder, description="Inner two.") / "SKILL.md")
    )
    assert "Inner two." in text and "Inner one." in before


def test_a_broken_skill_recorded_and_fixed(world: World) -> None:
    folder = world.skills / "broken"
    md = write_file(folder / "SKILL.md", "---\nname: broken\ndescription: [unclosed\n---\n")
    world.bump(md, folder, world.skills)
    before, text = after(
        world, lambda: world.bump(write_skill(folder, description="Fixed.") / "SKILL.md")
    )
    assert "Fixed." in text and "Fixed." not in before


def test_a_hidden_folder_and_a_grouped_layout(world: World) -> None:
    hidden = write_skill(world.skills / ".stash" / "kept", description="Hidden.")
    grouped = write_skill(world.skills / "group" / "leaf", description="Leaf.")
    world.bump(hidden / "SKILL.md", hidden, hidden.parent, grouped / "SKILL.md", grouped)
    world.bump(grouped.parent, world.skills)
    more = world.skills / "group" / "leaf2"

    def add_leaf() -> None:
        world.bump(write_skill(more, description="Leaf two.") / "SKILL.md", more)

    after(world, add_leaf)


def test_a_folder_appearing_deep_in_a_tree(world: World) -> None:
    deep = world.skills / "a" / "b" / "c"
    deep.mkdir(parents=True)
    world.bump(deep, deep.parent, deep.parent.parent, world.skills)
    leaf = deep / "d"

    def appear() -> None:
        world.bump(write_skill(leaf, description="Deep leaf.") / "SKILL.md", leaf)

    if world.compat:  # six levels deep: 2026.9 finds it
        before, text = after(world, appear)
        assert "Deep leaf." in text and "Deep leaf." not in before
    else:  # 2026.4 never looks there: the kept result still holds, and is right
        recorded(world)
        appear()
        assert world.cached() == world.fresh()


def test_a_root_over_its_limits(world: World) -> None:
    write_file(world.config, '{"skills": {"limits": {"maxSkillsLoadedPerSource": 2}}}\n')
    world.bump(world.config)
    after(world, lambda: world.bump(*_removed(world.skills / "alpha")))


def _removed(folder: Path) -> list[Path]:
    (folder / "SKILL.md").unlink()
    folder.rmdir()
    return [folder.parent]
