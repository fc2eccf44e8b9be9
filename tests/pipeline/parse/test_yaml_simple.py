"""The YAML fast path (skillbook.pipeline.parse.yaml_simple) answers exactly as the full parser does.

Differential: random blocks built from the characters that make YAML tricky; wherever
the fast path answers, the full event-stream path must give the same mapping, the
same types and the same key lines, and parse_frontmatter_block must give the same
Frontmatter with and without it.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from fuzz_budget import examples
from hypothesis import example, given, settings
from hypothesis import strategies as st

from skillbook.pipeline.parse import frontmatter as _frontmatter_block
from skillbook.pipeline.parse import yaml_core as _yaml
from skillbook.pipeline.parse.skill_file import parse_skill_text
from skillbook.pipeline.parse.yaml_core import YamlError, _load_full
from skillbook.pipeline.parse.yaml_simple import simple_mapping

KEYS = st.sampled_from(
    [
        "name",
        "description",
        "version",
        "homepage",
        "user-invocable",
        "disable-model-invocation",
        "_x",
        "true",
        "null",
        "nan",
        "Yes",
        "on",
        "__proto__",
        "toString",
        "a-b_c9",
        "metadata",
    ]
)
PIECES = st.sampled_from(
    [
        *list("abcXYZ019 .,:;#-?[]{}&*!|>'\"%@`~+=/\\()<>^$\t"),
        "é",
        "😀",
        "\xa0",
        "\u2028",
        "\x85",
        "\ufeff",
        "\x07",
        ": ",
        " #",
        "''",
        "---",
        "...",
    ]
)
#: Double-quoted scalars whose escapes the fast path takes (``\\"``, ``\\\\``) or leaves.
DOUBLE_QUOTED = st.lists(
    st.sampled_from(["a", " ", "'", "é", ": ", " #", '"', "\\", '\\"', "\\\\", "\\n", "\\/"]),
    max_size=8,
).map(lambda pieces: '"' + "".join(pieces) + '"')
VALUES = st.one_of(
    st.lists(PIECES, max_size=10).map("".join),
    DOUBLE_QUOTED,
    st.sampled_from(
        [
            "true",
            "False",
            "null",
            "~",
            "12",
            "-7",
            "+3",
            "0x1F",
            "0o17",
            "1.5",
            ".5",
            "1e3",
            "-.inf",
            ".NaN",
            "0.0",
            "-0.0",
            "'it''s'",
            "'",
            "''",
            '""',
            '"plain"',
            '"a\\nb"',
            "https://example.com/a#b",
            "a: b",
            "a:",
            "C#",
            "x #y",
            "[1, 2]",
            "{a: 1}",
            "|",
            ">-",
            "&anchor x",
            "*alias",
            "!tag x",
        ]
    ),
)
JSON_TEXT = st.lists(
    st.sampled_from([*"abc #:'{}[],-", "é", "\u2028", '"', "\\", "\\n"]), max_size=6
).map("".join)
JSON_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=False),
        JSON_TEXT,
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.sampled_from(["a", "10", "2", "", "b c", "__proto__"]), inner, max_size=4
        ),
    ),
    max_leaves=12,
)


def _json_line(value: object, separators: tuple[str, str]) -> str:
    return json.dumps(value, separators=separators, ensure_ascii=False)


FLOWS = st.builds(
    _json_line,
    st.one_of(
        st.lists(JSON_VALUES, max_size=4), st.dictionaries(JSON_TEXT, JSON_VALUES, max_size=4)
    ),
    st.sampled_from([(",", ":"), (", ", ": "), (" , ", " : ")]),
).map(lambda text: text.replace("Infinity", "1e999"))
BLOCK_BODY = st.lists(
    st.sampled_from(["word", "two words", "a: b", "# not a comment", "x ", "", "  deeper", "é"]),
    min_size=0,
    max_size=4,
)
BLOCKS = st.builds(
    lambda key, head, indent, body: "\n".join(
        [f"{key}: {head}", *(" " * indent + b if b else b for b in body)]
    ),
    KEYS,
    st.sampled_from([">", ">-", "|", "|-", ">+", "|2"]),
    st.sampled_from([1, 2, 4]),
    BLOCK_BODY,
)
SCALAR_TEXT = st.sampled_from(
    ["x", "'q'", '"dq"', "two words", "1.5", "null", "a: b", "", "- x", "{}", "[1, 2]", "é", "#c"]
)


def _block_yaml(value: object, indent: int, step: int, compact: bool) -> list[str]:
    pad = " " * indent
    out: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, (dict, list)) and v:
                out.append(f"{pad}{k}:")
                out.extend(
                    _block_yaml(
                        v,
                        indent if compact and isinstance(v, list) else indent + step,
                        step,
                        compact,
                    )
                )
            else:
                out.append(f"{pad}{k}: {v if isinstance(v, str) else json.dumps(v)}")
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict) and item:
                lines = _block_yaml(item, indent + 2, step, compact)
                out.append(f"{pad}- {lines[0][indent + 2 :]}")
                out.extend(lines[1:])
            else:
                out.append(f"{pad}- {item if isinstance(item, str) else json.dumps(item)}")
    return out


NESTED_VALUES = st.recursive(
    st.one_of(SCALAR_TEXT, st.integers(-5, 5), st.booleans()),
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3),
        st.dictionaries(
            st.sampled_from(["a", "bins", "id", "k-2", "true", "__proto__"]),
            inner,
            min_size=1,
            max_size=3,
        ),
    ),
    max_leaves=8,
)
NESTED = st.builds(
    lambda key, value, step, compact, noise: "\n".join(
        [f"{key}:", *_block_yaml(value, step, step, compact)]
        + ([noise] if noise is not None else [])
    ),
    KEYS,
    st.one_of(
        st.lists(NESTED_VALUES, min_size=1, max_size=3),
        st.dictionaries(
            st.sampled_from(["openclaw", "x", "b"]), NESTED_VALUES, min_size=1, max_size=3
        ),
    ),
    st.sampled_from([1, 2, 4]),
    st.booleans(),
    st.sampled_from([None, "", "# note", "   ", "  stray: 1", " - item"]),
)


def _flow_rows(value: object, indent: int, closing_out: bool, trailing: bool) -> str:
    text = json.dumps(value, indent=2, ensure_ascii=False)
    if trailing:
        text = text.replace("\n}", ",\n}").replace("\n]", ",\n]")
    rows = text.split("\n")
    pad = " " * indent
    body = [pad + r for r in rows]
    if closing_out:
        body[-1] = rows[-1]
    return "\n".join(body)


FLOW_BLOCKS = st.builds(
    lambda key, value, indent, closing_out, trailing: (
        f"{key}:\n" + _flow_rows(value, indent, closing_out, trailing)
    ),
    KEYS,
    st.one_of(
        st.dictionaries(JSON_TEXT, JSON_VALUES, max_size=3), st.lists(JSON_VALUES, max_size=3)
    ),
    st.sampled_from([0, 1, 2]),
    st.booleans(),
    st.booleans(),
)
#: A value over the rows below its key: wrapped words, and what may not stand there.
PLAIN_ROWS = st.builds(
    lambda key, rows, indent: "\n".join(
        [f"{key}:", *(" " * indent + r if r and r[0] != "#" else r for r in rows)]
    ),
    KEYS,
    st.lists(
        st.one_of(
            st.lists(PIECES, min_size=1, max_size=6).map("".join),
            st.sampled_from(["Sets up auth", "and more.", "12", "true", "~", "x:y", "C# too"]),
            st.sampled_from(["", "# note", "- item", "k: v", "k:", "a #b", "[x]", "'q'"]),
        ),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from([1, 2, 3]),
)
LINES = st.one_of(
    PLAIN_ROWS,
    st.tuples(KEYS, st.sampled_from([": ", ":  ", ":", ": \t", " : "]), VALUES).map("".join),
    st.tuples(KEYS, st.just(": "), FLOWS).map("".join),
    BLOCKS,
    NESTED,
    FLOW_BLOCKS,
    st.sampled_from(["", "# comment", "  indented: x", "- item", "---", "\t", " "]),
)


def canon(value: Any) -> Any:
    """A comparable form with exact types (NaN equal to NaN, -0.0 apart from 0.0)."""
    if isinstance(value, float):
        return ("f", "nan" if math.isnan(value) else repr(value))
    if isinstance(value, dict):
        return ("d", [(k, canon(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("l", [canon(v) for v in value])
    return (type(value).__name__, value)


def full(text: str) -> tuple[Any, dict[str, int]] | str:
    try:
        return _load_full(text, max_alias_count=100, max_depth=100)
    except YamlError as exc:
        return f"error: {exc.kind}"


@settings(max_examples=examples(3000), deadline=None)
@given(st.lists(LINES, min_size=1, max_size=6).map("\n".join))
@example("name: x\ndescription: 'it''s fine'\nversion: 1.0")
@example('name: x\ndescription: "quoted"\nurl: https://a.b/c?d=e#f')
@example("name: x\ndescription: ...")
@example('name: x\ndescription: "say \\"hi\\" to C:\\\\temp"')
@example('name: x\ndescription: "odd \\\\"quote"')
@example("name: x\ndescription: a [b] {c}, d")
@example("name: x\ndescription: 😀 é")
@example('name: x\ndescription: >-\n  one\n  two\nmetadata: {"openclaw": {"a": [1, 2.5]}}')
@example('metadata: {"10": 1, "2": 2, "b": {"1": 0}}')
@example("description: |\n  line one\n  line two\n\nname: x")
@example('tags: ["a", "b"]\nmore: []\nempty: {}')
@example(
    "metadata:\n  openclaw:\n    requires:\n      bins:\n        - git\n    install:\n      - id: a\n        kind: brew"
)
@example(
    'metadata:\n  {\n    "openclaw":\n      {\n        "emoji": "x",\n        "requires": { "bins": ["curl"] },\n      },\n  }'
)
@example("list:\n  [,]")
# A flow below a top-level key whose extent ends at a comment, a key or blank rows.
@example('metadata:\n\n  {"a":\n  ["b"]}\n# c\nname: x')
@example('metadata:\n  ["a",\n\n  "b"]\n\nname: x')
@example('metadata:\n  {"a": 1}\n   \nname: x')
@example('metadata:\n  {"a": [\n "b"]}\nx: y')
@example("metadata:\n # c\n  [1]")
@example("name: x\ndescription:\n  Sets up auth, identity\n  and roles.\nversion: 1")
@example("description:\n  a\n   b\n\n  c")
@example("description:\n  12")
def test_fast_path_agrees_with_the_parser(text: str) -> None:
    fast = simple_mapping(text)
    if fast is None:
        return
    slow = full(text)
    assert not isinstance(slow, str), f"the parser refuses {text!r} ({slow})"
    assert canon(fast[0]) == canon(slow[0])
    assert fast[1] == slow[1]


@settings(max_examples=examples(500), deadline=None)
@given(st.lists(LINES, min_size=1, max_size=6).map("\n".join))
def test_frontmatter_is_the_same_with_and_without_the_fast_path(text: str) -> None:
    fast = _frontmatter_block.parse_frontmatter_block(text, block_line=2)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_frontmatter_block, "simple_block", lambda _text: None)
        mp.setattr(_yaml, "simple_mapping", lambda _text: None)
        slow = _frontmatter_block.parse_frontmatter_block(text, block_line=2)
    assert repr(fast) == repr(slow)
    assert list(fast[0].lines) == list(slow[0].lines)


@pytest.mark.parametrize(
    "text",
    [
        "name: x\ndescription: ''",  # the line parser skips an empty value
        "name: x\ndescription: null",
        "name: x\nname: y",
        "name: x\n  more",
        "name: x\ndescription: a: b",
        "true: x",
        "__proto__: x",
        "name: x\r\ndescription: y",
        "# only a comment",
        "",
    ],
)
def test_blocks_left_to_the_parser(text: str) -> None:
    assert simple_mapping(text) is None


def test_common_blocks_take_the_fast_path() -> None:
    got = simple_mapping(
        "name: pdf-tools\ndescription: 'Reads PDFs: text, tables & forms.'\n"
        "homepage: https://example.com\nuser-invocable: false\nversion: 2.1\n# note\n"
    )
    assert got is not None
    values, lines = got
    assert values == {
        "name": "pdf-tools",
        "description": "Reads PDFs: text, tables & forms.",
        "homepage": "https://example.com",
        "user-invocable": False,
        "version": 2.1,
    }
    assert lines == {"name": 1, "description": 2, "homepage": 3, "user-invocable": 4, "version": 5}


@pytest.mark.parametrize(
    "text",
    [
        # Trailing commas outside the strings go; the same characters inside stay.
        'metadata:\n  {\n    "a": ["x, ]", "[,", "{ , }"],\n    "b": "y",\n  }',
        'metadata:\n  [\n    "a",\n    {"k": ", }"},\n  ]',
        # A bracket and a comma either side of a string are no empty entry.
        'tags:\n  [\n    "a", "b"\n  ]',
    ],
)
def test_multi_line_flow_strings_are_kept_as_written(text: str) -> None:
    fast = simple_mapping(text)
    assert fast is not None
    slow = full(text)
    assert not isinstance(slow, str)
    assert canon(fast[0]) == canon(slow[0])
    assert fast[1] == slow[1]


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ('"say \\"hi\\""', 'say "hi"'),
        ('"C:\\\\temp\\\\"', "C:\\temp\\"),
        ('"\\\\\\""', '\\"'),
    ],
)
def test_double_quoted_escapes_of_quote_and_backslash_take_the_fast_path(
    raw: str, value: str
) -> None:
    text = f"name: x\ndescription: {raw}"
    fast = simple_mapping(text)
    assert fast is not None
    assert fast[0]["description"] == value
    assert full(text) == (fast[0], fast[1])


@pytest.mark.parametrize("raw", ['"a\\nb"', '"a\\/b"', '"a\\\\"b"', '"a\\"'])
def test_other_double_quoted_escapes_are_left_to_the_parser(raw: str) -> None:
    assert simple_mapping(f"description: {raw}") is None


@settings(max_examples=examples(2000), deadline=None)
@given(st.lists(LINES, min_size=1, max_size=6).map("\n".join))
@example("name: x\ndescription: a\x07b")
@example("name: x\n# a\x07 note\ndescription: y")
@example("metadata:\n  openclaw:\n    emoji: \x85")
def test_the_fast_path_reads_every_row_but_comments_as_printable(text: str) -> None:
    """What lets parse skip its control-character search for a block the fast path
    read with no comment row in it: such a block holds no control character."""
    if simple_mapping(text) is None:
        return
    if not any(row[:1] == "#" for row in text.split("\n")):
        assert _frontmatter_block._CONTROL.search(text) is None


def test_a_description_wrapped_below_its_key_takes_the_fast_path() -> None:
    text = "name: x\ndescription:\n  Sets up Convex auth, identity mapping,\n    and roles.\nv: 1"
    fast = simple_mapping(text)
    assert fast is not None
    assert fast[0]["description"] == "Sets up Convex auth, identity mapping, and roles."
    assert full(text) == (fast[0], fast[1])


FLOW_PIECES = st.sampled_from(
    [
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        " ",
        '"a"',
        '"1"',
        '"b c"',
        "1",
        "-2.5",
        "true",
        "null",
        "NaN",
        "Infinity",
        "x",
        '"',
        "{}",
        "[]",
        '"a":1',
        '"a":"b"',
        '"a":1,"a":2',
        "é",
    ]
)


@settings(max_examples=examples(2000), deadline=None)
@given(st.lists(FLOW_PIECES, min_size=1, max_size=14).map("".join))
@example('{"a":1} {"b":2}')
@example("[1] x")
@example('{"a":1,"a":2}')
@example('{"1":1,"b":2}')
@example("[NaN]")
def test_flow_decoders_made_once_answer_as_json_loads(raw: str) -> None:
    """The flow reader's decoders are made once (issue 22) and read to the text's end
    themselves: the same answers as ``json.loads`` with the same hooks, built per call."""
    from skillbook.pipeline.parse import yaml_flow

    if raw[:1] not in ("{", "[") or "\\" in raw or not raw.isprintable():
        return
    got = yaml_flow.json_printable(raw)
    if raw[-1] != ("}" if raw[0] == "{" else "]"):
        assert got is None
        return
    hook = (
        yaml_flow._js_object if yaml_flow._DIGIT_STRING.search(raw) else yaml_flow._checked_object
    )
    try:
        want = json.loads(raw, object_pairs_hook=hook, parse_constant=yaml_flow._no_constant)
    except (ValueError, RecursionError):
        want = None
    assert json.dumps(got) == json.dumps(want)
    if isinstance(want, dict):
        assert list(got) == list(want)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("9" * 5000, "Infinity"),  # past int()'s digit limit
        ("-" + "9" * 5000, "-Infinity"),
        ("0x" + "f" * 5000, "Infinity"),  # an int, but beyond a double
        ("0o" + "7" * 5000, "Infinity"),
    ],
)
def test_integers_beyond_a_double_read_as_javascript_reads_them(value: str, shown: str) -> None:
    parsed = parse_skill_text(f"---\nname: x\ndescription: d\nn: {value}\n---\nbody\n")
    assert [d.code for d in parsed.diagnostics] == []
    assert parsed.frontmatter.values["n"] == shown
