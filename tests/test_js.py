"""JavaScript semantics helpers (skillbook._js)."""

from __future__ import annotations

from skillbook._js import js_key_order


def test_js_key_order_puts_array_index_keys_first_ascending() -> None:
    ordered = js_key_order({"b": 1, "10": 2, "a": 3, "2": 4, "01": 5, "4294967295": 6})
    # "01" is not an array index, nor is 2**32 - 1; they keep their insertion place.
    assert list(ordered) == ["2", "10", "b", "a", "01", "4294967295"]


def test_js_key_order_returns_the_same_dict_without_index_keys() -> None:
    d = {"name": 1, "description": 2}
    assert js_key_order(d) is d
