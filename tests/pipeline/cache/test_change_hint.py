"""A rebuild hinted with a watcher's changed paths equals a full build (skillbook.pipeline.cache.change_hint).

The differential property: after random edits, additions, deletions and renames
(and a few ways to make a root not plain), ``Loader.load(hint=...)`` with the paths
a watcher would report gives the prompt, status and diagnostics of a fresh full
build. The other tests pin down what the hint narrows and when it is ignored.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from factories import isolated_env, write_skill
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillbook.config.file import Config
from skillbook.pipeline.book import Loader, SkillBook
from skillbook.pipeline.cache import root_memo as _root_memo
from skillbook.pipeline.cache.change_hint import ChangeHint
from skillbook.runtime._watch_parts import IGNORED_SEGMENTS

NAMES = ("alpha", "beta", "gamma", "delta", "eps", "zeta")

# One step: (operation, skill name, other skill name).
Op = tuple[str, str, str]
OPS = st.tuples(
    st.sampled_from(
        ["edit", "edit", "edit", "add", "delete", "rename", "rm-md", "bad-yaml", "link", "gated"]
    ),
    st.sampled_from(NAMES),
    st.sampled_from(NAMES),
)


def make_loader(tmp: Path, ws: Path, compat: str | None = None) -> Loader:
    env = isolated_env(tmp)
    return Loader(ws, config=Config.from_mapping({}), env=env, cwd=tmp, cache=False, compat=compat)


def observed(book: SkillBook) -> tuple[object, ...]:
    return (
        book.prompt,
        [(e.name, e.status, e.file_path, e.description) for e in book.status.skills],
        [(d.code, d.path, d.line, d.message) for d in book.diagnostics],
    )


class Tree:
    """A workspace's ``skills`` root and the paths a watcher would report for each change."""

    def __init__(self, tmp: Path) -> None:
        self.root = tmp / "ws" / "skills"
        self.step = 0
        for name in NAMES[:3]:
            self.write(name, "first")

    def write(
        self, name: str, text: str, *, raw: str | None = None, metadata: object = None
    ) -> Path:
        self.step += 1
        folder = self.root / name
        write_skill(folder, description=f"{name} {text} {self.step}", text=raw, metadata=metadata)
        md = folder / "SKILL.md"
        # A distinct mtime per write: two same-size writes within one clock tick look
        # unchanged to any stat-based cache, hinted or not.
        stamp = 1_700_000_000_000_000_000 + self.step * 1_000_000_000
        os.utime(md, ns=(stamp, stamp))
        return md

    def apply(self, op: Op) -> list[str]:
        kind, name, other = op
        folder, md = self.root / name, self.root / name / "SKILL.md"
        if kind == "edit" and md.is_file():
            return [str(self.write(name, "edited"))]
        if kind == "add" and not os.path.lexists(folder):
            self.write(name, "added")
            return [str(folder), str(md)]
        if kind == "delete" and os.path.lexists(folder):
            shutil.rmtree(folder) if not folder.is_symlink() else folder.unlink()
            return [str(folder)]
        if kind == "rename" and folder.is_dir() and not os.path.lexists(self.root / other):
            folder.rename(self.root / other)
            return [str(folder), str(self.root / other), str(self.root / other / "SKILL.md")]
        if kind == "rm-md" and md.is_file() and not md.is_symlink():
            md.unlink()
            return [str(md)]
        if kind == "bad-yaml" and md.is_file():
            return [str(self.write(name, "", raw="---\nname: [unclosed\ndescription: x\n---\n"))]
        if kind == "link" and folder.is_dir() and not os.path.lexists(self.root / other):
            (self.root / other).symlink_to(folder, target_is_directory=True)
            return [str(self.root / other)]
        if kind == "gated" and md.is_file():
            return [
                str(
                    self.write(
                        name, "gated", metadata={"openclaw": {"requires": {"bins": ["nope"]}}}
                    )
                )
            ]
        return []


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    steps=st.lists(st.lists(OPS, min_size=1, max_size=3), min_size=1, max_size=5),
    compat=st.sampled_from(["openclaw-2026.4", "openclaw-2026.9"]),
)
def test_hinted_rebuild_equals_a_full_build(
    tmp_path_factory: pytest.TempPathFactory, steps: list[list[Op]], compat: str
) -> None:
    # The loader's memos (merge, gate, status, catalog) patch the last build where an
    # edit left the skills in place; the fresh loader has none.
    tmp = tmp_path_factory.mktemp("hint")
    tree = Tree(tmp)
    loader = make_loader(tmp, tree.root.parent, compat)
    loader.load()
    for batch in steps:
        changed = [path for op in batch for path in tree.apply(op)]
        hint = ChangeHint.of(changed, [str(tree.root)], IGNORED_SEGMENTS)
        hinted = loader.load(hint=hint)
        fresh = make_loader(tmp, tree.root.parent, compat).load()
        assert observed(hinted) == observed(fresh)
        assert [s.name for s in hinted.eligible] == [s.name for s in fresh.eligible]


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    return Tree(tmp_path)


def test_hint_looks_only_at_the_reported_paths(tmp_path: Path, tree: Tree) -> None:
    """The narrowing is real: a change the hint leaves out is not seen, one it lists is."""
    loader = make_loader(tmp_path, tree.root.parent)
    loader.load()
    tree.write("beta", "unreported")
    alpha = tree.write("alpha", "reported")
    book = loader.load(hint=ChangeHint.of([str(alpha)], [str(tree.root)]))
    assert "reported" in book.get("alpha").description
    assert "unreported" not in book.get("beta").description
    assert "unreported" in loader.load().get("beta").description


def test_root_outside_the_watched_roots_is_walked_in_full(tmp_path: Path, tree: Tree) -> None:
    loader = make_loader(tmp_path, tree.root.parent)
    loader.load()
    tree.write("beta", "edited")
    book = loader.load(hint=ChangeHint.of([], [str(tmp_path / "elsewhere")]))
    assert "edited" in book.get("beta").description


def test_a_reported_root_is_walked_in_full(tmp_path: Path, tree: Tree) -> None:
    loader = make_loader(tmp_path, tree.root.parent)
    loader.load()
    tree.write("beta", "edited")
    book = loader.load(hint=ChangeHint.of([str(tree.root)], [str(tree.root)]))
    assert "edited" in book.get("beta").description


def test_a_skill_folder_the_watcher_ignores_disables_the_hint(tmp_path: Path, tree: Tree) -> None:
    """``build`` is a valid skill folder, but the watcher drops its events."""
    tree.write("build", "first")
    loader = make_loader(tmp_path, tree.root.parent)
    loader.load()
    tree.write("build", "edited")
    book = loader.load(hint=ChangeHint.of([], [str(tree.root)], IGNORED_SEGMENTS))
    assert "edited" in book.get("build").description


def test_covers_and_below() -> None:
    hint = ChangeHint.of(["/w/skills/a/SKILL.md", "/w/other"], ["/w/skills"], ["build"])
    assert hint.covers("/w/skills") and hint.covers("/w/skills/nested")
    assert not hint.covers("/w/skillsx") and not hint.covers("/elsewhere")
    assert not hint.covers("/w/skills/build/x")
    assert not ChangeHint.of(["/w/skills"], ["/w/skills"]).covers("/w/skills")
    assert not ChangeHint.of(["/w"], ["/w/skills"]).covers("/w/skills")
    assert hint.below("/w/skills") == ["/w/skills/a/SKILL.md"]


def test_record_places_hinted_paths(tmp_path: Path, tree: Tree) -> None:
    loader = make_loader(tmp_path, tree.root.parent)
    loader.load()
    base = str(tree.root)
    (record,) = [r for (_, folder), r in loader.cache.roots.items() if folder == base]
    md = str(tree.root / "beta" / "SKILL.md")
    assert record.hinted(record.key, base, [md]) == [record.files.index(md)]
    # Deeper files are never read by a plain scan; a direct entry means a new listing.
    assert record.hinted(record.key, base, [str(tree.root / "beta" / "sub" / "SKILL.md")]) == []
    assert record.hinted(record.key, base, [str(tree.root / "new")]) is None
    assert record.hinted(record.key, base, [str(tree.root / "new" / "SKILL.md")]) is None
    assert record.hinted(("other",), base, [md]) is None
    assert isinstance(record, _root_memo.RootRecord)
