"""Differential: after any sequence of changes to the inputs of a build, the prompt the
fast path prints (when it answers at all) is byte for byte the prompt of a build that
reuses nothing (``--no-cache``), and so is the next ordinary run's."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from factories import skill_text, stub_bins, write_file, write_skill
from fuzz_budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from result_world import BINS_META, ENV_META, World, fake_module

from skillbook.pipeline.cache import footprint

NAMES = ("alpha", "beta", "gamma", "delta", "eps")
Mutation = Callable[[World], None]


def _edit(name: str, text: str) -> Mutation:
    def apply(w: World) -> None:
        raw = BINS_META if name == "beta" else ENV_META if name == "gamma" else ""
        folder = w.skills / name
        existed = folder.exists()
        w.bump(write_skill(folder, description=f"{name} {text}.", raw=raw) / "SKILL.md")
        if not existed:
            w.bump(folder)

    return apply


def _in_place(name: str) -> Mutation:
    """An edit that changes the file alone (its folder keeps its mtime)."""

    def apply(w: World) -> None:
        md = w.skills / name / "SKILL.md"
        if md.exists():
            md.write_text(md.read_text().replace("description: ", "description: Edited, "))
            w.bump_alone(md)

    return apply


def _remove(name: str) -> Mutation:
    def apply(w: World) -> None:
        md = w.skills / name / "SKILL.md"
        if md.exists():
            md.unlink()
            (w.skills / name).rmdir()
            w.bump(w.skills)

    return apply


def _chmod(name: str) -> Mutation:
    def apply(w: World) -> None:
        md = w.skills / name / "SKILL.md"
        if md.exists():
            md.chmod(0o600 if md.stat().st_mode & 0o044 else 0o644)

    return apply


def _project_root(w: World) -> None:
    root = w.ws / ".agents" / "skills"
    if root.exists():
        (root / "zeta" / "SKILL.md").unlink()
        (root / "zeta").rmdir()
        root.rmdir()
        w.bump(root.parent)
    else:
        write_skill(root / "zeta")
        w.bump(root / "zeta" / "SKILL.md", root, root.parent)


def _config(disabled: str, limit: int) -> Mutation:
    def apply(w: World) -> None:
        skills = {
            "entries": {disabled: {"enabled": False}},
            "limits": {"maxSkillsInPrompt": limit},
            "load": {"allowSymlinkTargets": [str(w.base / "elsewhere")]},
        }
        w.bump(write_file(w.config, json.dumps({"skills": skills})))

    return apply


def _candidate(w: World) -> None:
    candidate = w.base / "state" / "skillbook.json"
    if candidate.exists():
        candidate.unlink()
        w.bump(candidate.parent)
    else:
        w.bump(
            write_file(
                candidate, json.dumps({"skills": {"entries": {"alpha": {"enabled": False}}}})
            )
        )


def _env(name: str, value: str | None) -> Mutation:
    def apply(w: World) -> None:
        if value is None:
            w.env.pop(name, None)
        else:
            w.env[name] = value

    return apply


def _tool(mode: str) -> Mutation:
    def apply(w: World) -> None:
        tool = w.bin / "tool"
        if mode == "absent":
            tool.unlink(missing_ok=True)
            w.bump(w.bin)
        else:
            stub_bins(w.bin, ["tool"])
            tool.chmod(0o755 if mode == "exec" else 0o644)
            w.bump(tool)

    return apply


def _link(w: World) -> None:
    link = w.skills / "linked"
    if link.is_symlink():
        link.unlink()
    else:
        link.symlink_to(w.skills / "alpha")
    w.bump(w.skills)


def _bundled(w: World) -> None:
    bundled = w.base / "bundled-skills"
    if w.env["SKILLBOOK_BUNDLED_SKILLS_DIR"] == str(bundled):
        w.env["SKILLBOOK_BUNDLED_SKILLS_DIR"] = str(w.base / "no-bundled")
    else:
        write_skill(bundled / "bundled-one")
        w.bump(bundled / "bundled-one" / "SKILL.md", bundled / "bundled-one", bundled)
        w.env["SKILLBOOK_BUNDLED_SKILLS_DIR"] = str(bundled)


def _outside_link(target: str) -> Mutation:
    """The managed root's ``far`` linked to a folder outside it (``allowSymlinkTargets``
    lets 2026.4 follow it), retargeted, or made dangling."""

    def apply(w: World) -> None:
        elsewhere = w.base / "elsewhere"
        for name in ("x", "y"):
            if not (elsewhere / name).exists():
                folder = write_skill(elsewhere / name, description=f"Far {name}.")
                w.bump(folder / "SKILL.md", folder, elsewhere)
        managed = w.base / "state" / "skills"
        managed.mkdir(parents=True, exist_ok=True)
        link = managed / "far"
        if link.is_symlink():
            link.unlink()
        link.symlink_to(elsewhere / target)
        w.bump(managed, managed.parent)

    return apply


def _outside_edit(text: str) -> Mutation:
    def apply(w: World) -> None:
        folder = w.base / "elsewhere" / "x"
        if folder.exists():
            w.bump(write_skill(folder, description=f"Far x {text}.") / "SKILL.md")

    return apply


def _inner_link(w: World) -> None:
    """A link inside the root to another skill folder, flipped between two targets."""
    link = w.skills / "alias"
    target = "beta" if link.is_symlink() and os.readlink(link).endswith("alpha") else "alpha"
    if link.is_symlink():
        link.unlink()
    link.symlink_to(w.skills / target)
    w.bump(w.skills)


def _linked_md(w: World) -> None:
    """A SKILL.md that is a link to a file beside it (2026.9 reads it, 2026.4 refuses it)."""
    folder = w.skills / "pointer"
    md = folder / "SKILL.md"
    if md.is_symlink():
        md.unlink()
        md.symlink_to("other.md")
    else:
        for name, text in (("real.md", "one"), ("other.md", "two, longer")):
            w.bump(write_file(folder / name, skill_text("pointer", f"P {text}.", body="")))
        md.symlink_to("real.md")
    w.bump(folder, w.skills)


def _nested(text: str) -> Mutation:
    """A nested ``skills/skills`` root, its skill edited."""

    def apply(w: World) -> None:
        folder = w.skills / "skills" / "inner"
        existed = folder.exists()
        w.bump(write_skill(folder, description=f"Inner {text}.") / "SKILL.md")
        if not existed:
            w.bump(folder, folder.parent, w.skills)

    return apply


def _broken(w: World) -> None:
    """A skill whose frontmatter is broken, then fixed, then broken again."""
    folder = w.skills / "broken"
    md = folder / "SKILL.md"
    if md.exists() and "unclosed" not in md.read_text():
        w.bump(write_file(md, "---\nname: broken\ndescription: [unclosed\n---\n"))
    else:
        existed = folder.exists()
        w.bump(write_skill(folder, description="Fixed now.") / "SKILL.md")
        if not existed:
            w.bump(folder, w.skills)


def _deep(w: World) -> None:
    """A skill folder appearing (or going) five levels down a tree of plain folders."""
    parent = w.skills / "tree" / "a" / "b" / "c"
    leaf = parent / "d"
    if leaf.exists():
        (leaf / "SKILL.md").unlink()
        leaf.rmdir()
        w.bump(parent)
    else:
        existed = parent.exists()
        w.bump(write_skill(leaf, description="Deep one.") / "SKILL.md", leaf)
        if not existed:
            w.bump(parent, parent.parent, parent.parent.parent, w.skills / "tree", w.skills)


def _touch_module(w: World) -> None:
    w.bump(w.base / "fake_module.py")


MUTATIONS = st.one_of(
    st.builds(_edit, st.sampled_from(NAMES), st.sampled_from(("one", "two", "three"))),
    st.builds(_in_place, st.sampled_from(NAMES)),
    st.builds(_remove, st.sampled_from(NAMES)),
    st.builds(_chmod, st.sampled_from(NAMES)),
    st.just(_project_root),
    st.builds(_config, st.sampled_from(NAMES), st.integers(0, 4)),
    st.just(_candidate),
    st.builds(
        _env,
        st.sampled_from(("FOO", "UNRELATED", "SKILLBOOK_CACHE")),
        st.sampled_from(("1", "0", None)),
    ),
    st.builds(_tool, st.sampled_from(("exec", "plain", "absent"))),
    st.just(_link),
    st.just(_touch_module),
    st.just(_bundled),
    st.builds(_outside_link, st.sampled_from(("x", "y", "gone"))),
    st.builds(_outside_edit, st.sampled_from(("one", "two"))),
    st.just(_inner_link),
    st.just(_linked_md),
    st.builds(_nested, st.sampled_from(("one", "two"))),
    st.just(_broken),
    st.just(_deep),
)


@settings(
    max_examples=examples(12, floor=6),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(MUTATIONS, min_size=1, max_size=6), dangling=st.booleans())
@pytest.mark.parametrize("compat", [None, "openclaw-2026.9"], ids=["2026.4", "2026.9"])
def test_fast_path_equals_a_fresh_build(
    compat: str | None, steps: list[Mutation], dangling: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(footprint, "RACY_NS", -(10**18))
    with tempfile.TemporaryDirectory() as tmp:
        world = World.make(Path(tmp), compat=compat)
        if dangling:  # the workspace root is then not plain from the start
            (world.skills / "dangling").symlink_to(world.base / "nowhere")
            world.bump(world.skills)
        allowed = {"skills": {"load": {"allowSymlinkTargets": [str(world.base / "elsewhere")]}}}
        world.bump(write_file(world.config, json.dumps(allowed)))
        module = write_file(world.base / "fake_module.py", "x = 1\n")
        world.bump(module)
        invocations = (world.args(), ["-w", str(world.ws), "prompt"], world.args("--section"))
        with fake_module(module):
            for args in invocations:
                world.run(*args)
            for step in steps:
                step(world)
                for args in invocations:
                    fast = _cached(world, args)
                    fresh = world.run(*[*args, "--no-cache"])
                    if fast is not None:
                        assert fast == fresh
                    assert world.run(*args) == fresh
                    if world.env.get("SKILLBOOK_CACHE") != "0":
                        # Every state these steps make is one the record covers.
                        assert _cached(world, args) == fresh


def _cached(world: World, args: list[str]) -> str | None:
    from skillbook.cli import entry
    from skillbook.pipeline.cache import result_store

    with world.active():
        folder = result_store.results_folder(os.environ)
        if folder is None:
            return None
        key = result_store.invocation_key(args, os.getcwd())
        return entry.cached_output(folder, key, os.environ)
