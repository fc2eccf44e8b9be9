"""Values kept per skill object between builds (skillbook.pipeline.cache.skill_memo).

The property: whatever happens between two calls (edits in place, additions,
removals, reorderings, more edits than a patch takes), a memo answers what calling
the function on every item answers, and after an edit in place it calls the function
only for the positions that hold a new object.
"""

from __future__ import annotations

import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from skillbook.model import Skill
from skillbook.pipeline.cache.skill_memo import PATCH_LIMIT, PositionalMap, SkillMemo, moved


def skill(name: str) -> Skill:
    return Skill.create(name, f"{name} skill", base_dir=Path("/ws/skills") / name)


class Counted:
    """A function of a skill that counts its calls."""

    def __init__(self) -> None:
        self.calls: list[Skill] = []

    def __call__(self, s: Skill) -> tuple[str, int]:
        self.calls.append(s)
        return (s.name, id(s))


# One change between two calls: (kind, position seed, how many).
CHANGES = st.lists(
    st.tuples(
        st.sampled_from(["edit", "edit", "edit", "many", "add", "remove", "shuffle", "none"]),
        st.integers(0, 10_000),
        st.integers(1, PATCH_LIMIT + 8),
    ),
    min_size=1,
    max_size=8,
)


def change(items: list[Skill], kind: str, seed: int, count: int, made: list[int]) -> list[Skill]:
    out = list(items)
    rng = random.Random(seed)

    def fresh() -> Skill:
        made[0] += 1
        return skill(f"s{made[0]}")

    if kind == "edit" and out:
        out[seed % len(out)] = fresh()
    elif kind == "many":
        for _ in range(count):
            if out:
                out[rng.randrange(len(out))] = fresh()
    elif kind == "add":
        out.insert(seed % (len(out) + 1), fresh())
    elif kind == "remove" and out:
        del out[seed % len(out)]
    elif kind == "shuffle":
        rng.shuffle(out)
    return out


@settings(max_examples=150, deadline=None)
@given(start=st.integers(0, PATCH_LIMIT * 3), changes=CHANGES)
def test_a_positional_map_answers_what_a_fresh_map_answers(
    start: int, changes: list[tuple[str, int, int]]
) -> None:
    made = [start]
    items = [skill(f"s{i}") for i in range(start)]
    memo = PositionalMap[Skill, tuple[str, int]]()
    fn = Counted()
    assert memo(items, fn) == tuple(map(fn, items))
    for kind, seed, count in changes:
        before = list(items)
        items = change(items, kind, seed, count, made)
        fn.calls.clear()
        got = memo(items, fn)
        assert got == tuple((s.name, id(s)) for s in items)
        if len(before) == len(items) and len(moved(before, items)) <= PATCH_LIMIT:
            # Patched: only the positions that hold another object were computed.
            assert fn.calls == [items[i] for i in moved(before, items)]


@settings(max_examples=150, deadline=None)
@given(start=st.integers(0, PATCH_LIMIT * 3), changes=CHANGES)
def test_a_skill_memo_answers_what_a_fresh_evaluation_answers(
    start: int, changes: list[tuple[str, int, int]]
) -> None:
    made = [start]
    items = [skill(f"s{i}") for i in range(start)]
    memo = SkillMemo[tuple[str, int]]()
    fn = Counted()
    memo.get_all(items, fn)
    for kind, seed, count in changes:
        items = change(items, kind, seed, count, made)
        fn.calls.clear()
        got = memo.get_all(items, fn)
        assert got == tuple((s.name, id(s)) for s in items)
        # Whichever way the memo found them, no object it had seen was computed again.
        assert len(fn.calls) == len({id(s) for s in fn.calls})
        memo.prune(items)


def test_an_edit_computes_one_value_and_a_new_key_computes_all() -> None:
    items = [skill(f"s{i}") for i in range(500)]
    memo = SkillMemo[tuple[str, int]]()
    fn = Counted()
    memo.key_on(("config-a",))
    first = memo.get_all(items, fn)
    assert len(fn.calls) == 500
    fn.calls.clear()
    assert memo.get_all(items, fn) is first  # nothing changed: the same tuple
    assert fn.calls == []
    items[123] = skill("edited")
    memo.get_all(items, fn)
    assert fn.calls == [items[123]]
    fn.calls.clear()
    memo.key_on(("config-b",))
    memo.get_all(items, fn)
    assert fn.calls == items


def test_the_callers_list_changing_later_does_not_change_the_memo() -> None:
    items = [skill(f"s{i}") for i in range(5)]
    memo = PositionalMap[Skill, tuple[str, int]]()
    fn = Counted()
    memo(items, fn)
    kept = items[2]
    items[2] = skill("swapped-in-place")  # the caller reuses its list
    fn.calls.clear()
    got = memo(items, fn)
    assert fn.calls == [items[2]] and got[2] == ("swapped-in-place", id(items[2]))
    assert kept.name == "s2"


def test_more_changes_than_a_patch_takes_are_looked_up_by_identity() -> None:
    items = [skill(f"s{i}") for i in range(PATCH_LIMIT * 2)]
    memo = SkillMemo[tuple[str, int]]()
    fn = Counted()
    memo.get_all(items, fn)
    items.reverse()  # every position moved, no object new
    fn.calls.clear()
    assert memo.get_all(items, fn) == tuple((s.name, id(s)) for s in items)
    assert fn.calls == []
