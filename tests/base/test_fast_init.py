"""skillbook.base.fast_init: the swapped-in ``__init__`` builds what dataclasses' own builds.

Differential: for every class the cold path decorates, random field values (given by
position, by keyword, or left to their defaults) go through both the fast ``__init__``
and the one dataclasses generated; every slot must hold the same object, and the
instances must stay frozen, equal, hashable alike and replaceable.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillbook import model
from skillbook.base import verified_read as _verified_read
from skillbook.base.fast_init import ORIGINAL_INITS, fast_init
from skillbook.pipeline.gating import gate, status

DECORATED = [
    model.InstallSpec,
    model.Requires,
    model.SkillMetadata,
    model.CommandDispatch,
    model.InvocationPolicy,
    model.Frontmatter,
    model.ParsedSkillFile,
    model.Skill,
    _verified_read.Verified,
    gate.Requirements,
    gate.Eligibility,
    status.StatusEntry,
    status.Visibility,
]

# Field values are opaque to __init__; hashable ones let the hash be compared too.
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.text(max_size=5),
    st.tuples(st.text(max_size=3)),
)


def _slots(obj: Any) -> list[Any]:
    return [getattr(obj, f.name) for f in dataclasses.fields(obj)]


def _build_original(cls: type[Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    obj = object.__new__(cls)
    ORIGINAL_INITS[cls](obj, *args, **kwargs)
    return obj


@pytest.mark.parametrize("cls", DECORATED, ids=lambda c: c.__name__)
def test_every_decorated_class_has_the_fast_init(cls: type[Any]) -> None:
    assert cls in ORIGINAL_INITS
    assert cls.__init__ is not ORIGINAL_INITS[cls]


@pytest.mark.parametrize("cls", DECORATED, ids=lambda c: c.__name__)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_fast_init_matches_the_generated_init(cls: type[Any], data: st.DataObject) -> None:
    fields = dataclasses.fields(cls)
    required = [
        f
        for f in fields
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    # Every required field, then any optional ones, positionally or by keyword.
    given_fields = required + [
        f for f in fields if f not in required and data.draw(st.booleans(), label=f.name)
    ]
    given_fields.sort(key=fields.index)
    values = {f.name: data.draw(VALUES, label=f.name) for f in given_fields}
    split = data.draw(st.integers(0, len(given_fields)), label="positional")
    prefix = [f.name for f in fields[:split]]
    if [f.name for f in given_fields[:split]] == prefix:
        args = tuple(values[n] for n in prefix)
        kwargs = {k: v for k, v in values.items() if k not in prefix}
    else:
        args, kwargs = (), values
    fast = cls(*args, **kwargs)
    slow = _build_original(cls, args, kwargs)
    assert type(fast) is cls
    assert all(a is b for a, b in zip(_slots(fast), _slots(slow), strict=True))
    assert fast == slow and repr(fast) == repr(slow)
    try:
        assert hash(fast) == hash(slow)
    except TypeError:
        with pytest.raises(TypeError):
            hash(slow)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(fast, fields[0].name, "changed")
    assert dataclasses.replace(fast) == fast


def test_default_factories_run_per_instance() -> None:
    @fast_init
    @dataclasses.dataclass(frozen=True, slots=True)
    class Box:
        items: list[int] = dataclasses.field(default_factory=list)
        label: str = "x"

    first, second = Box(), Box()
    assert first.items == [] and first.items is not second.items
    assert Box([1], label="y") == Box(items=[1], label="y")
    with pytest.raises(TypeError):
        Box([1], "y", "extra")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Box(nope=1)  # type: ignore[call-arg]


def test_missing_required_field_is_a_type_error() -> None:
    too_many: tuple[Any, ...] = ((), (), (), (), ())
    with pytest.raises(TypeError):
        model.Requires(*too_many)
    with pytest.raises(TypeError):
        model.CommandDispatch()  # type: ignore[call-arg]


def test_only_plain_frozen_slotted_dataclasses_qualify() -> None:
    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclasses.dataclass(slots=True)
    class NotFrozen:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class PostInit:
        a: int

        def __post_init__(self) -> None:
            pass

    @dataclasses.dataclass(frozen=True, slots=True)
    class NotInInit:
        a: int
        b: int = dataclasses.field(default=0, init=False)

    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class KeywordOnly:
        a: int

    for cls in (NoSlots, NotFrozen, PostInit, NotInInit, KeywordOnly):
        with pytest.raises(TypeError):
            fast_init(cls)
