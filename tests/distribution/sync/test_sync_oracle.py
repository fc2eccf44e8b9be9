"""Differential tests: our sync against OpenClaw's own ``syncSkillsToWorkspace``.

Each scenario lays out the same folders for both sides; the oracle's ``sync`` op
copies into one target, :func:`skillbook.distribution.sync.workspace.sync_book` into another, and the two
``skills`` trees must list identically (path, type, size, sha256, link target), with
the same per-skill warnings in the same order. The scenarios are hostile on purpose:
names with ``..``, ``@`` and ``~``, links of every kind inside skills, ``.git`` and
``node_modules`` at any depth, one folder name in six sources, a skill filter; and
every source of the public corpus. The few places where skillbook deliberately
differs (``docs/oracle-differences.md``) are pinned in :func:`test_deliberate_differences`.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from factories import write_skill
from oracle_cases import CORPUS, materialise, sources
from oracle_support import Oracle

from distribution.sync.sync_world import World, listing, make_fifo, oracle_warnings
from skillbook.config.file import Config
from skillbook.distribution.sync.result import SyncResult
from skillbook.distribution.sync.workspace import sync_book
from skillbook.pipeline.book import Loader, SkillBook

pytestmark = pytest.mark.oracle

Layout = Callable[[World], dict[str, Any]]


def run_oracle(oracle: Oracle, request: dict[str, Any]) -> dict[str, Any]:
    out = oracle.run(request)
    assert out["ok"], out.get("error")
    result: dict[str, Any] = out
    return result


def our_warnings(result: SyncResult) -> list[str]:
    return [d.message for d in result.diagnostics if d.message.startswith("Failed to ")]


def same_target(messages: list[str], ours: Path, theirs: Path, home: Path) -> list[str]:
    """Messages name the target; write ours with the oracle's target to compare."""
    out = []
    for m in messages:
        for folder in (ours, ours.relative_to(home) if ours.is_relative_to(home) else None):
            if folder is not None:
                other = theirs if folder == ours else theirs.relative_to(home)
                m = m.replace(f"{folder}/", f"{other}/").replace(f"{folder})", f"{other})")
        out.append(m)
    return out


def compare(oracle: Oracle, world: World, spec: dict[str, Any]) -> SyncResult:
    config = spec.get("config")
    skill_filter = spec.get("skill_filter")
    agent = spec.get("agent")
    # Targets under HOME, so OpenClaw's messages shorten them to ~/…
    their_target, our_target = world.home / "t-oracle", world.home / "t-ours"
    theirs = run_oracle(
        oracle,
        world.oracle_request(their_target, config, skill_filter=skill_filter, agent=agent),
    )
    book = world.book(config, skill_filter=skill_filter, agent=agent)
    ours = sync_book(book, our_target)
    assert listing(our_target / "skills") == theirs["result"]["files"]
    mine = same_target(our_warnings(ours), our_target, their_target, world.home)
    assert mine == oracle_warnings(theirs)
    return ours


# -- scenarios ------------------------------------------------------------------------


def names_layout(w: World) -> dict[str, Any]:
    for i, folder in enumerate(
        ["a..b", "foo..", "@..", "@..x", "~", "@~", " y ", "y", "  ", "x\\y", "café", "日本", "🙂s"]
    ):
        write_skill(w.skills / folder, name=f"n{i}")
    for folder in ["plain", "plain-2", "~"]:
        write_skill(w.skills / folder, name=f"ws-{folder}")
    extra = w.outside / "extra"
    write_skill(extra / "plain", name="extra-plain")
    write_skill(extra / "~", name="extra-tilde")
    write_skill(extra / "y", name="extra-y")
    return {"config": {"skills": {"load": {"extraDirs": [str(extra)]}}}}


def links_layout(w: World) -> dict[str, Any]:
    skill = write_skill(w.skills / "linky")
    (skill / "sub").mkdir()
    (skill / "sub" / "f.txt").write_text("data\n")
    (skill / "rel").symlink_to("sub/f.txt")
    (skill / "up").symlink_to("../other/SKILL.md")
    (skill / "abs").symlink_to("/etc/hostname")
    (skill / "broken").symlink_to("nowhere")
    (skill / "loop").symlink_to("loop")
    (skill / "dirlink").symlink_to("sub")
    (skill / "sub" / "deep").symlink_to("../rel")
    (skill / "trailing").symlink_to("sub/")
    write_skill(w.skills / "other")
    # A symlinked skill folder whose target (a hidden folder) is not loaded by itself.
    write_skill(w.skills / ".store" / "hidden", name="aliased")
    (w.skills / "aliased").symlink_to(".store/hidden")
    # One that escapes the root: not loaded by either side, so never synced.
    write_skill(w.outside / "escapee")
    (w.skills / "escapee").symlink_to(w.outside / "escapee")
    return {}


def excluded_layout(w: World) -> dict[str, Any]:
    skill = write_skill(w.skills / "busy")
    for rel in [
        ".git/HEAD",
        "node_modules/pkg/index.js",
        "sub/deeper/node_modules/x",
        "a/b/c/.git",
    ]:
        (skill / rel).parent.mkdir(parents=True, exist_ok=True)
        (skill / rel).write_text("x\n")
    for rel in [".gitignore", "node_modules_x/keep", ".github/workflow.yml", "sub/.gitkeep"]:
        (skill / rel).parent.mkdir(parents=True, exist_ok=True)
        (skill / rel).write_text("keep\n")
    (skill / "empty").mkdir()
    (skill / "big.bin").write_bytes(os.urandom(300_000))
    # A root that is itself a skill, in a folder named node_modules.
    write_skill(w.outside / "node_modules", name="in-node-modules")
    return {"config": {"skills": {"load": {"extraDirs": [str(w.outside / "node_modules")]}}}}


def sources_layout(w: World) -> dict[str, Any]:
    extras = [w.outside / "e1", w.outside / "e2"]
    roots = [*extras, w.bundled, w.managed, w.personal, w.project, w.skills]
    for i, root in enumerate(roots):
        write_skill(root / "dup", name=f"dup-from-{i}")
        write_skill(root / "shared", name="shared", description=f"copy {i}")
    write_skill(w.skills / "dup-2", name="real-dup-2")
    write_skill(w.skills / "needs-bin", metadata={"openclaw": {"requires": {"bins": ["nope"]}}})
    return {"config": {"skills": {"load": {"extraDirs": [str(e) for e in extras]}}}}


def filter_layout(w: World) -> dict[str, Any]:
    gate = {"openclaw": {"requires": {"bins": ["definitely-missing"]}}}
    write_skill(w.skills / "ready-one", name="ready")
    write_skill(w.skills / "gated", metadata=gate)
    write_skill(w.skills / "not-listed")
    write_skill(w.bundled / "from-bundled", name="bundled-one")
    return {"skill_filter": ["ready", "gated", "bundled-one", "missing-skill"]}


def agent_layout(w: World) -> dict[str, Any]:
    write_skill(w.skills / "foo_bar")
    write_skill(w.skills / "foo.dot")
    write_skill(w.skills / "other")
    config = {"agents": {"list": [{"id": "Main Agent", "skills": ["foo_bar", "nope"]}]}}
    return {"config": config, "agent": "main agent"}


SCENARIOS: dict[str, Layout] = {
    "names": names_layout,
    "links": links_layout,
    "excluded": excluded_layout,
    "sources": sources_layout,
    "filter": filter_layout,
    "agent": agent_layout,
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_sync_matches_openclaw(scenario: str, oracle: Oracle, tmp_path: Path) -> None:
    world = World(tmp_path)
    spec = SCENARIOS[scenario](world)
    ours = compare(oracle, world, spec)
    assert ours.synced or scenario == "empty"


def test_scenarios_hit_what_they_claim(oracle: Oracle, tmp_path: Path) -> None:
    """The scenarios really exercise refusals, renames, links and exclusions."""
    world = World(tmp_path)
    names = compare(oracle, world, names_layout(world))
    assert any("Path escapes sandbox root (~/" in d.message for d in names.diagnostics)
    assert any(d.code == "sync.invalid-destination" for d in names.diagnostics)
    assert {s.folder for s in names.synced} >= {"plain", "plain-2", "plain-2-2", "y", "y-2", "~-2"}

    world = World(tmp_path / "links")
    links = compare(oracle, world, links_layout(world))
    assert {d.code for d in links.diagnostics} >= {"sync.symlink-host-path"}
    assert (world.home / "t-ours" / "skills" / "aliased").is_symlink()

    world = World(tmp_path / "excluded")
    excluded = compare(oracle, world, excluded_layout(world))
    assert any(d.code == "sync.skill-excluded" for d in excluded.diagnostics)


def test_deliberate_differences(oracle: Oracle, tmp_path: Path) -> None:
    """Where OpenClaw merges two skills, copies one into the skills folder itself, or
    leaves half a skill behind, skillbook keeps them apart, refuses, or copies nothing."""
    world = World(tmp_path)
    write_skill(world.skills / "@x", name="at-x")
    write_skill(world.skills / "x", name="plain-x")
    write_skill(world.skills / "a\u00a0b", name="nbsp")
    write_skill(world.skills / "a b", name="space")
    write_skill(world.skills / "@", name="at")
    piped = write_skill(world.skills / "piped")
    make_fifo(piped / "fifo")
    theirs = run_oracle(oracle, world.oracle_request(world.home / "t-oracle"))
    their_paths = [f["path"] for f in theirs["result"]["files"]]
    # OpenClaw: "@" lands in the skills folder itself, "@x"/"x" and the two "a b" merge.
    assert "SKILL.md" in their_paths and "x-2" not in their_paths and "a b-2" not in their_paths
    ours = sync_book(world.book(), world.home / "t-ours")
    our_paths = [e["path"] for e in listing(world.home / "t-ours" / "skills")]
    assert "SKILL.md" not in our_paths
    assert {"x", "x-2", "a b", "a b-2"} <= set(our_paths)
    assert not any(p.startswith("piped") for p in our_paths)
    # The FIFO failure has OpenClaw's text on both sides.
    fifo = [m for m in oracle_warnings(theirs) if "FIFO" in m]
    mine = same_target(
        our_warnings(ours), world.home / "t-ours", world.home / "t-oracle", world.home
    )
    assert fifo and fifo == [m for m in mine if "FIFO" in m]


# -- the public corpus ----------------------------------------------------------------


@pytest.mark.corpus
@pytest.mark.parametrize("source", sources(CORPUS) if CORPUS.is_dir() else [])
def test_corpus_sync_matches_openclaw(
    source: str, oracle: Oracle, corpus_dir: Path, tmp_path: Path
) -> None:
    sandbox = materialise(corpus_dir / source, tmp_path)
    config = sandbox.base_config()
    target = sandbox.home / "t-oracle"
    theirs = run_oracle(
        oracle,
        {
            **sandbox.oracle_fields(),
            "op": "sync",
            "workspace": str(sandbox.workspace),
            "targetWorkspace": str(target),
            "config": config,
        },
    )
    book = Loader(
        sandbox.workspace,
        config=Config.from_mapping(config),
        env=sandbox.skillbook_env(),
        cwd=sandbox.root,
    ).load()
    ours = sync_book(_without_bom_skills(book), sandbox.home / "t-ours")
    assert listing(sandbox.home / "t-ours" / "skills") == theirs["result"]["files"]
    mine = same_target(our_warnings(ours), sandbox.home / "t-ours", target, sandbox.home)
    assert mine == oracle_warnings(theirs)
    assert len(ours.synced) == len(book.skills) - _bom_count(book)


def _bom_count(book: SkillBook) -> int:
    return sum(1 for s in book.skills if s.parsed.had_bom)


def _without_bom_skills(book: SkillBook) -> SkillBook:
    """A SKILL.md with a UTF-8 BOM loads only in skillbook (deliberate): leave it out."""
    kept = tuple(s for s in book.skills if not s.parsed.had_bom)
    return dataclasses.replace(book, discovery=dataclasses.replace(book.discovery, skills=kept))
