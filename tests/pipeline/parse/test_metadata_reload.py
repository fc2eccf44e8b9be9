"""The parser's manifest shortcuts: the C encoder writes the string view, and
resolve_metadata is handed the value it stringified instead of a re-parse.

Differential: wherever ``_json_readback.reloads_as_itself`` lets a stringified value through,
parsing the text must give back the very same value (types, key order, floats, big
integers, NaN, surrogates and nesting included), and a whole SKILL.md must parse to
the same file, manifest and diagnostics with the shortcut and without it.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from fuzz_budget import examples
from hypothesis import example, given, settings
from hypothesis import strategies as st

from skillbook.base.js import json_stringify, json_stringify_plain, load_json5
from skillbook.pipeline.parse import frontmatter as _frontmatter_block
from skillbook.pipeline.parse import json_readback as _json_readback
from skillbook.pipeline.parse import skill_file as parse
from skillbook.pipeline.parse.manifest import resolve_metadata
from skillbook.pipeline.parse.yaml_simple import simple_block

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([2**53, 2**53 + 1, -(2**53) - 1, 10**21]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1.0, 1e21, 1e-7, math.nan, math.inf]),
    st.text(max_size=8),
    st.sampled_from(["\ud83d\ude00", "\ud800", "a\udfffb", "\\ud800", "a:1", "[1", "\x00\x1f"]),
)
KEYS = st.one_of(st.text(max_size=6), st.sampled_from(["__proto__", "1", "01", "openclaw"]))
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=25,
)


def _same(a: Any, b: Any) -> bool:
    """Equal with the same types and the same key order, all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        )
    return bool(a == b)


@settings(max_examples=examples(500), deadline=None)
@given(JSON_VALUES)
@example({"a": 1.0})
@example({"a": [2**53 + 1]})
@example({"a": "\ud83d\ude00"})
@example({"a": "\ud83d" + "\ude00"})
@example({"a": math.nan})
@example({"a": -0.0})
@example([[[[[[[[]]]]]]]])
def test_a_value_let_through_reads_back_as_itself(value: Any) -> None:
    text = json_stringify(value)
    if _json_readback.reloads_as_itself(text):
        assert _same(load_json5(text), value)


@pytest.mark.parametrize(
    "value",
    [
        {"a": 1},
        {"a": 1.5},
        [2**60],
        {"s": "\ud800"},
        {"s": "x\ud83d\ude00"},
        {"a": -3},
        {"a": math.nan},
        [math.inf],
    ],
)
def test_numbers_and_surrogates_take_the_slow_path(value: Any) -> None:
    assert not _json_readback.reloads_as_itself(json_stringify(value))


def test_deep_nesting_takes_the_slow_path() -> None:
    deep: Any = []
    for _ in range(_json_readback.MAX_RELOAD_DEPTH + 1):
        deep = [deep]
    assert not _json_readback.reloads_as_itself(json_stringify(deep))
    assert _json_readback.reloads_as_itself(
        json_stringify({"openclaw": {"requires": {"bins": ["x"]}}})
    )


def _skill_text(meta: Any) -> str:
    # A multi-line flow under `metadata:`, as most manifests are written.
    flow = json.dumps(meta, indent=2, ensure_ascii=False).replace("\n", "\n  ")
    return f"---\nname: x\ndescription: d\nmetadata:\n  {flow}\n---\nbody\n"


MANIFEST = st.fixed_dictionaries(
    {"openclaw": st.dictionaries(KEYS, JSON_VALUES, max_size=5)},
    optional={"other": JSON_VALUES},
)


def _parse_both(text: str) -> tuple[Any, Any]:
    fast = parse.parse_skill_text(text)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_frontmatter_block, "reloads_as_itself", lambda _text: False)
        m.setattr(_frontmatter_block, "reads_as_flow", lambda _raw: False)
        m.setattr(_frontmatter_block, "json_stringify_plain", lambda _value: None)
        slow = parse.parse_skill_text(text)
    return fast, slow


@settings(max_examples=300, deadline=None)
@given(meta=MANIFEST)
@example(meta={"openclaw": {"requires": {"bins": ["jq"]}, "install": [{"kind": "brew"}]}})
@example(meta={"openclaw": {"always": True, "emoji": "🧪", "os": ["linux"]}})
@example(
    meta={
        "openclaw": {
            "install": [{"kind": "download", "url": "https://x/y", "stripComponents": 1.0}]
        }
    }
)
def test_a_skill_parses_alike_with_and_without_the_shortcut(meta: Any) -> None:
    fast, slow = _parse_both(_skill_text(meta))
    assert fast == slow
    assert fast.diagnostics == slow.diagnostics
    assert (fast.metadata is None) == (slow.metadata is None)
    if fast.metadata is not None:
        assert fast.metadata == slow.metadata
        assert _same(dict(fast.metadata.raw), dict(slow.metadata.raw))
        assert fast.metadata.manifest_key == slow.metadata.manifest_key


def test_the_shortcut_is_taken_for_a_plain_manifest(monkeypatch: pytest.MonkeyPatch) -> None:
    text = _skill_text({"openclaw": {"requires": {"bins": ["jq"]}}})
    calls: list[str] = []
    monkeypatch.setattr(parse, "resolve_metadata", _spy(resolve_metadata, calls))
    parsed = parse.parse_skill_text(text)
    assert calls == ["loaded"]
    assert parsed.metadata is not None and parsed.metadata.requires is not None
    assert parsed.metadata.requires.bins == ("jq",)


def _spy(real: Any, calls: list[str]) -> Any:
    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append("loaded" if kwargs.get("loaded") is not None else "parsed")
        return real(*args, **kwargs)

    return spy


@pytest.mark.parametrize(
    "block",
    [
        "openclaw:\n    requires:\n      bins:\n        - jq\n    emoji: x",
        "openclaw:\n    x: .nan\n    requires:\n      env:\n        - A",
        "openclaw:\n    always: true\n    os:\n      - linux\n    n: 0x10",
        'openclaw: {"requires": {"bins": ["a:b"]}}',
    ],
)
def test_block_style_manifests_parse_alike(block: str) -> None:
    text = f"---\nname: x\ndescription: d\nmetadata:\n  {block}\n---\n"
    fast, slow = _parse_both(text)
    assert fast == slow and fast.diagnostics == slow.diagnostics
    assert fast.metadata is not None and slow.metadata is not None
    assert _same(dict(fast.metadata.raw), dict(slow.metadata.raw))


@settings(max_examples=examples(500), deadline=None)
@given(st.one_of(st.lists(JSON_VALUES, max_size=4), st.dictionaries(KEYS, JSON_VALUES, max_size=4)))
@example({"a": '\x00\x1f\x7f\u2028\ufeff\U0001f600"\\/'})
@example({"a": [None, True, False, {}, []]})
@example({"a": 1.0})
@example({"a": math.nan})
@example({"a": "\ud800"})
def test_the_c_encoder_writes_what_json_stringify_writes(value: Any) -> None:
    """The parser's fast stringify (string keys only) is JSON.stringify or declines."""
    plain = json_stringify_plain(value)
    if plain is not None:
        assert plain == json_stringify(value)


def test_the_c_encoder_declines_what_it_would_write_differently() -> None:
    for value in ({"a": 1.0}, {"a": 2**60}, {"a": math.inf}, {"a": "\udc00"}, {"a": {1, 2}}):
        assert json_stringify_plain(value) is None
    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    assert json_stringify_plain(deep) is None


def _one_line(value: Any, spaced: bool) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": ") if spaced else (",", ":"))


@settings(max_examples=examples(500), deadline=None)
@given(
    st.one_of(st.lists(JSON_VALUES, max_size=4), st.dictionaries(KEYS, JSON_VALUES, max_size=4)),
    st.booleans(),
)
@example({"10": 1, "2": {"b": 0, "1": 0}, "a": 3}, True)
@example({"openclaw": {"requires": {"bins": ["a:b"]}, "n": 1.0}}, True)
@example({"a": 1e400}, False)
def test_a_one_line_flow_let_through_reads_back_as_the_fast_paths_value(
    value: Any, spaced: bool
) -> None:
    raw = _one_line(value, spaced)
    got = simple_block(f"metadata: {raw}")
    if got is None or not _json_readback.reads_as_flow(raw):
        return
    assert _same(load_json5(raw), got[0]["metadata"])


@settings(max_examples=300, deadline=None)
@given(meta=MANIFEST, spaced=st.booleans())
@example(
    meta={"openclaw": {"requires": {"bins": ["jq"]}, "install": [{"kind": "brew"}]}}, spaced=True
)
@example(meta={"openclaw": {"2": "x", "1": {"b": 1, "0": 2}}}, spaced=False)
def test_a_one_line_manifest_parses_alike_with_and_without_the_shortcut(
    meta: Any, spaced: bool
) -> None:
    fast, slow = _parse_both(
        f"---\nname: x\ndescription: d\nmetadata: {_one_line(meta, spaced)}\n---\n"
    )
    assert fast == slow
    assert fast.diagnostics == slow.diagnostics
    assert repr(fast.frontmatter) == repr(slow.frontmatter)
    if fast.metadata is not None and slow.metadata is not None:
        assert _same(dict(fast.metadata.raw), dict(slow.metadata.raw))


def test_the_shortcut_is_taken_for_a_one_line_manifest(monkeypatch: pytest.MonkeyPatch) -> None:
    text = '---\nname: x\ndescription: d\nmetadata: {"openclaw": {"os": ["linux"]}}\n---\n'
    calls: list[str] = []
    monkeypatch.setattr(parse, "resolve_metadata", _spy(resolve_metadata, calls))
    parsed = parse.parse_skill_text(text)
    assert calls == ["loaded"]
    assert parsed.metadata is not None and parsed.metadata.os == ("linux",)
    # A key JavaScript moves to the front is left to the parse.
    assert not _json_readback.reads_as_flow('{"openclaw": {"10": 1, "2": 2}}')
