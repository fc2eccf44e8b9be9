"""A plain root's whole scan is reused while nothing it read changed (skillbook.pipeline.cache.root_memo).

Reuse must be invisible: the same skills and diagnostics as a full scan, and any
change a full scan would see (an edit, a chmod, a folder added, removed or replaced
by a symlink, a nested ``skills/``) must be seen.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from skillbook.model import Source
from skillbook.pipeline.cache import root_memo as _root_memo
from skillbook.pipeline.discovery.discover import Discovery, Root, discover
from skillbook.pipeline.discovery.skill_reader import ParseCache


def write(root: Path, name: str, description: str = "Does things.") -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    md = folder / "SKILL.md"
    md.write_text(f"---\nname: {name}\ndescription: {description}\n---\nBody.\n")
    return md


@pytest.fixture
def root(tmp_path: Path) -> Path:
    skills = tmp_path / "skills"
    for i in range(6):
        write(skills, f"s{i}")
    return skills


@pytest.fixture(params=["listed", "trusted-folder"])
def trust(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """``trusted-folder``: the folder's stat is old enough to skip the listing."""
    if request.param == "trusted-folder":
        monkeypatch.setattr(_root_memo, "RACY_NS", -(10**18))
    return str(request.param)


def scan(root: Path, cache: ParseCache | None) -> Discovery:
    return discover([Root(Source.WORKSPACE, root)], cache=cache)


def view(d: Discovery) -> tuple[list[str], list[str], list[str]]:
    return (
        [s.name for s in d.skills],
        [s.description for s in d.skills],
        [f"{x.code}:{x.path}" for x in d.diagnostics],
    )


def test_unchanged_root_gives_back_the_same_skill_objects(root: Path, trust: str) -> None:
    cache = ParseCache()
    first = scan(root, cache)
    assert len(cache.roots) == 1
    hits = cache.hits
    second = scan(root, cache)
    assert all(a is b for a, b in zip(first.skills, second.skills, strict=True))
    assert cache.hits == hits + 6 and cache.misses == 6


@pytest.mark.parametrize(
    "change",
    ["edit", "chmod", "add", "remove", "symlink", "nested", "hidden", "rename"],
)
def test_every_change_a_full_scan_sees_is_seen(
    root: Path, tmp_path: Path, trust: str, change: str
) -> None:
    cache = ParseCache()
    scan(root, cache)
    if change == "edit":
        write(root, "s2", "Edited.")
    elif change == "chmod":
        (root / "s3" / "SKILL.md").chmod(0o000)
    elif change == "add":
        write(root, "s9")
    elif change == "remove":
        shutil.rmtree(root / "s1")
    elif change == "symlink":
        elsewhere = tmp_path / "elsewhere"
        shutil.move(str(root / "s4"), elsewhere)
        os.symlink(elsewhere, root / "s4")
    elif change == "nested":
        write(root / "skills", "inner")
    elif change == "hidden":
        write(root / ".hidden", "ghost")
    elif change == "rename":
        (root / "s5").rename(root / "s7")
    try:
        remembered = scan(root, cache)
        fresh = scan(root, None)
    finally:
        if change == "chmod":
            (root / "s3" / "SKILL.md").chmod(0o644)
    assert view(remembered) == view(fresh)


def test_roots_that_are_not_plain_are_not_remembered(root: Path, tmp_path: Path) -> None:
    target = tmp_path / "linked"
    write(target, "via-link")
    os.symlink(target / "via-link", root / "via-link")
    cache = ParseCache()
    first = scan(root, cache)
    assert cache.roots == {}
    assert view(scan(root, cache)) == view(first) == view(scan(root, None))


def test_a_skill_that_fails_to_load_keeps_the_root_unremembered(root: Path) -> None:
    (root / "broken").mkdir()
    (root / "broken" / "SKILL.md").write_text("---\nname: broken\n---\nno description\n")
    cache = ParseCache()
    first = scan(root, cache)
    assert cache.roots == {}
    write(root / "broken", "child")  # the invalid folder's children load (2026.4)
    assert view(scan(root, cache)) == view(scan(root, None)) != view(first)


def test_diagnostics_are_replayed(root: Path, tmp_path: Path) -> None:
    write(root, "s0", "x" * 10)
    (root / "s0" / "SKILL.md").write_text("---\ndescription: no name here\n---\n")
    cache = ParseCache()
    first = scan(root, cache)
    assert any(d.code == "parse.missing-name" for d in first.diagnostics)
    assert cache.roots
    assert view(scan(root, cache)) == view(first)


def test_one_edit_reloads_one_file_and_keeps_the_other_skill_objects(root: Path) -> None:
    cache = ParseCache()
    first = scan(root, cache)
    write(root, "s3", "Edited once.")
    second = scan(root, cache)
    assert cache.misses == 7  # six at first, then only the edited file
    assert view(second) == view(scan(root, None))
    kept = [a is b for a, b in zip(first.skills, second.skills, strict=True)]
    assert kept == [True, True, True, False, True, True]
    assert scan(root, cache).skills == second.skills  # the patched record is remembered


def test_an_edit_that_breaks_a_skill_falls_back_to_a_full_scan(root: Path) -> None:
    cache = ParseCache()
    scan(root, cache)
    (root / "s2" / "SKILL.md").write_text("---\nname: s2\n---\nno description now\n")
    assert view(scan(root, cache)) == view(scan(root, None))
    assert cache.roots == {}  # no longer plain: not remembered
