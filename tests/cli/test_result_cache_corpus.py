"""The result cache on a copy of the public corpus: every repository as an extra dir
(nested ``skills/`` roots, grouped and deep trees, skills that fail to load) and a
workspace skill linked into it. The fast path answers, byte for byte what a build
that reuses nothing prints, and steps aside after an edit of a nested or linked skill."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from factories import write_file, write_skill
from result_world import World

from skillbook.pipeline.cache import footprint

BIG = 100_000


def _linked(tree: Path) -> Path:
    return tree / "openai-skills" / "skills" / ".curated" / "gh-address-comments"


@pytest.fixture(scope="module")
def corpus_copy(corpus_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("corpus") / "corpus"
    shutil.copytree(corpus_dir, copy, symlinks=True)
    return copy


@pytest.fixture(params=(None, "openclaw-2026.9"), ids=("2026.4", "2026.9"))
def world(
    request: pytest.FixtureRequest,
    corpus_copy: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[World]:
    monkeypatch.setattr(footprint, "RACY_NS", -(10**18))  # see test_result_cache.py
    world = World.make(tmp_path, compat=request.param)
    tree = tmp_path / "corpus"
    shutil.copytree(corpus_copy, tree, symlinks=True)
    repos = sorted(p for p in tree.iterdir() if p.is_dir())
    limits = {
        "maxCandidatesPerRoot": BIG,
        "maxSkillsLoadedPerSource": BIG,
        "maxSkillsInPrompt": BIG,
        "maxSkillsPromptChars": BIG * 100,
    }
    load = {"extraDirs": [str(p) for p in repos], "allowSymlinkTargets": [str(tree)]}
    world.bump(write_file(world.config, json.dumps({"skills": {"limits": limits, "load": load}})))
    # A skill under a hidden folder (never discovered there), linked into the workspace.
    (world.skills / "linked").symlink_to(_linked(tree))
    world.bump(world.skills)
    yield world


def _edit(world: World, folder: Path, description: str) -> None:
    world.bump(write_skill(folder, name=folder.name, description=description) / "SKILL.md")


def test_the_fast_path_answers_on_the_corpus_and_sees_edits(world: World) -> None:
    first = world.prompt()
    assert first.count("<skill>") > 50
    assert world.cached() == first == world.fresh()
    tree = world.base / "corpus"
    for folder, text in (
        (_linked(tree), "Linked one, edited."),
        (tree / "anthropics-skills" / "skills" / "canvas-design", "Nested one, edited."),
    ):
        assert (folder / "SKILL.md").is_file()
        _edit(world, folder, text)
        assert world.cached() is None
        after = world.prompt()
        assert text in after
        assert after == world.fresh()
        assert world.cached() == after
