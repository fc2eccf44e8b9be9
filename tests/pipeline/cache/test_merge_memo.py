"""The last merge of local skills, reused after an edit (skillbook.pipeline.cache.merge_memo).

The differential property: through random edits (new objects with the same or another
name or real folder), additions, removals and reorderings, a merge answered by the
memo gives what the full merge gives: the same skills in the same order, the same
hidden ones and the same findings, with and without de-duplication and the name sort.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillbook.diagnostics import Diagnostic
from skillbook.model import Skill
from skillbook.pipeline.cache.merge_memo import MergeMemo
from skillbook.pipeline.discovery import discover

NAMES = [f"n{i}" for i in range(12)]
REALS = [None, *(Path(f"/real/r{i}") for i in range(12))]


def skill(name: str, real: Path | None, folder: int) -> Skill:
    made = Skill.create(name, f"{name} skill", base_dir=Path(f"/ws/skills/f{folder}"))
    return replace(made, real_dir=real)


def merged(
    local: list[Skill], memo: MergeMemo | None, *, dedupe: bool, sort: bool
) -> tuple[list[int], list[tuple[str, int, int]], list[tuple[str, str]]]:
    diags: list[Diagnostic] = []
    skills, shadowed = discover._merge_local(
        local, diags, dedupe_realpath=dedupe, sort_by_name=sort, memo=memo
    )
    return (
        [id(s) for s in skills],
        [(h.name, id(h.winner), id(h.hidden)) for h in shadowed],
        [(d.code, d.message) for d in diags],
    )


STEPS = st.lists(
    st.tuples(
        st.sampled_from(["same", "same", "same", "rename", "reroot", "add", "remove", "swap"]),
        st.integers(0, 10_000),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=200, deadline=None)
@given(
    size=st.integers(0, 14),
    steps=STEPS,
    dedupe=st.booleans(),
    sort=st.booleans(),
    unique=st.booleans(),
)
def test_a_remembered_merge_is_the_full_merge(
    size: int, steps: list[tuple[str, int]], dedupe: bool, sort: bool, unique: bool
) -> None:
    rng = random.Random(size)
    names = NAMES if unique else NAMES[:4]  # few names: collisions come and go
    reals = REALS if unique else REALS[:4]
    folder = [0]

    def fresh(name: str, real: Path | None) -> Skill:
        folder[0] += 1
        return skill(name, real, folder[0])

    local = [
        fresh(names[i % len(names)] if unique else rng.choice(names), rng.choice(reals))
        for i in range(size)
    ]
    memo = MergeMemo()
    assert merged(local, memo, dedupe=dedupe, sort=sort) == merged(
        local, None, dedupe=dedupe, sort=sort
    )
    for kind, seed in steps:
        local = list(local)
        at = seed % len(local) if local else 0
        if kind == "same" and local:
            old = local[at]
            local[at] = fresh(old.name, old.real_dir)  # an edit: same name, same folder
        elif kind == "rename" and local:
            local[at] = fresh(NAMES[seed % len(NAMES)], local[at].real_dir)
        elif kind == "reroot" and local:
            local[at] = fresh(local[at].name, REALS[seed % len(REALS)])
        elif kind == "add":
            local.insert(at, fresh(NAMES[seed % len(NAMES)], REALS[seed % len(REALS)]))
        elif kind == "remove" and local:
            del local[at]
        elif kind == "swap" and len(local) > 1:
            other = (at + 1 + seed) % len(local)
            local[at], local[other] = local[other], local[at]
        assert merged(local, memo, dedupe=dedupe, sort=sort) == merged(
            local, None, dedupe=dedupe, sort=sort
        )


def _no_full_merge(*_: object, **__: object) -> object:
    raise AssertionError("the full merge ran")


@pytest.mark.parametrize("sort", [False, True])
def test_an_edit_in_place_is_answered_without_the_full_merge(
    monkeypatch: pytest.MonkeyPatch, sort: bool
) -> None:
    local = [skill(f"z{9 - i}", Path(f"/real/{i}"), i) for i in range(10)]
    memo = MergeMemo()
    merged(local, memo, dedupe=True, sort=sort)
    local[4] = skill(local[4].name, local[4].real_dir, 99)
    monkeypatch.setattr(discover, "_merge", _no_full_merge)
    again = merged(local, memo, dedupe=True, sort=sort)
    order = sorted(local, key=lambda s: s.name) if sort else local
    assert again[0] == [id(s) for s in order]


def test_a_folder_turned_into_another_skills_folder_runs_the_full_merge() -> None:
    local = [skill("a", Path("/real/a"), 1), skill("b", Path("/real/b"), 2)]
    memo = MergeMemo()
    merged(local, memo, dedupe=True, sort=False)
    # Same name, but now the same real folder as "b": de-duplication must see it.
    local[0] = skill("a", Path("/real/b"), 3)
    assert merged(local, memo, dedupe=True, sort=False) == merged(
        local, None, dedupe=True, sort=False
    )
    assert len(merged(local, memo, dedupe=True, sort=False)[0]) == 1


def test_a_merge_that_hid_a_skill_is_not_remembered() -> None:
    local = [skill("a", None, 1), skill("a", None, 2)]
    memo = MergeMemo()
    ids, hidden, found = merged(local, memo, dedupe=True, sort=False)
    assert ids == [id(local[1])] and hidden and [c for c, _ in found] == ["discover.shadowed"]
    assert memo.reuse(local, dedupe_realpath=True, sort_by_name=False) is None
