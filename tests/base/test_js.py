"""JavaScript semantics helpers (skillbook.base.js)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from skillbook.base.js import js_key_order, utf16_len


def test_js_key_order_puts_array_index_keys_first_ascending() -> None:
    ordered = js_key_order({"b": 1, "10": 2, "a": 3, "2": 4, "01": 5, "4294967295": 6})
    # "01" is not an array index, nor is 2**32 - 1; they keep their insertion place.
    assert list(ordered) == ["2", "10", "b", "a", "01", "4294967295"]


def test_js_key_order_returns_the_same_dict_without_index_keys() -> None:
    d = {"name": 1, "description": 2}
    assert js_key_order(d) is d


@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF)))
def test_utf16_len_counts_javascript_code_units(text: str) -> None:
    # JavaScript's length: two units per astral character, one for anything else,
    # a lone surrogate included.
    assert utf16_len(text) == sum(2 if ord(ch) > 0xFFFF else 1 for ch in text)


def test_utf16_len_of_lone_surrogates_and_pairs() -> None:
    assert utf16_len("a\ud800b") == 3
    assert utf16_len("😀é") == 3


_JSON_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
)
_JSON_VALUES = st.recursive(
    _JSON_LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.one_of(st.text(max_size=4), st.integers(), st.booleans()), inner),
    ),
    max_leaves=12,
)


def _encoded(encode: object, value: object) -> tuple[str, str]:
    try:
        return "ok", encode(value)  # type: ignore[operator]
    except (ValueError, TypeError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


@settings(max_examples=100, deadline=None)
@given(_JSON_VALUES)
def test_the_compact_encoder_made_once_is_json_encoders_encode(value: object) -> None:
    """issue 22: ``_ENCODE_COMPACT`` is one C encoder made once, without circular-value
    markers; it answers (and fails) as ``JSONEncoder.encode`` does, and a circular value
    still gives ``json_stringify_plain`` None (RecursionError instead of ValueError)."""
    import json

    from skillbook.base import js

    reference = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    assert _encoded(js._ENCODE_COMPACT, value) == _encoded(reference.encode, value)
    loop: list[object] = [value]
    loop.append(loop)
    assert _encoded(js._ENCODE_COMPACT, loop)[0] in ("ValueError", "RecursionError")
    assert js.json_stringify_plain(loop) is None
    # A failed call leaves nothing behind for the next one.
    assert _encoded(js._ENCODE_COMPACT, [value]) == _encoded(reference.encode, [value])
