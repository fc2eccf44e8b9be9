"""Unit tests for skillbook.pipeline.parse.skill_file and skillbook.pipeline.parse.yaml_core (spec §2.2-2.4, §12 "Frontmatter")."""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType
from typing import Any

import json5
import pytest

from skillbook.diagnostics import Severity
from skillbook.model import CommandDispatch, InvocationPolicy, ParsedSkillFile
from skillbook.pipeline.parse.frontmatter import parse_frontmatter_block
from skillbook.pipeline.parse.invocation_policy import parse_bool, resolve_dispatch
from skillbook.pipeline.parse.skill_file import parse_skill_text
from skillbook.pipeline.parse.text import split_frontmatter
from skillbook.pipeline.parse.yaml_core import (
    DEFAULT_MAX_DEPTH,
    YamlError,
    _new_parser,
    load_core_with_lines,
)


def load_yaml(text: str) -> Any:
    """The value the frontmatter parser reads from ``text`` (its key lines dropped)."""
    return load_core_with_lines(text)[0]


def fm(block: str, body: str = "Body\n") -> str:
    return f"---\n{block}\n---\n{body}"


def values(text: str | bytes) -> dict[str, str]:
    return dict(parse_skill_text(text).frontmatter.values)


def codes(parsed: ParsedSkillFile) -> list[str]:
    return [d.code for d in parsed.diagnostics]


def diag(parsed: ParsedSkillFile, code: str):  # type: ignore[no-untyped-def]
    found = [d for d in parsed.diagnostics if d.code == code]
    assert found, f"no {code} in {codes(parsed)}"
    return found[0]


# --- §12 Frontmatter checklist --------------------------------------------------


def test_checklist_block_scalar_description_yields_two_lines() -> None:
    """§12: YAML block scalar `description: |` yields "line one\\nline two"."""
    text = fm("name: x\ndescription: |\n  line one\n  line two")
    assert values(text)["description"] == "line one\nline two"


def test_checklist_multiline_json5_metadata_block_parses() -> None:
    """§12: multi-line JSON5 `metadata:` block parses; JSON5.parse(...).openclaw.emoji == "disk"."""
    text = fm(
        "name: x\ndescription: d\nmetadata:\n  {\n    openclaw: {\n      emoji: 'disk',\n"
        "      requires: { bins: ['a'] },\n    },\n  }"
    )
    parsed = parse_skill_text(text)
    assert json5.loads(parsed.frontmatter.values["metadata"])["openclaw"]["emoji"] == "disk"
    assert parsed.metadata is not None
    assert parsed.metadata.emoji == "disk"


def test_checklist_inline_json_metadata_is_preserved_verbatim() -> None:
    """§12: inline JSON `metadata: {"openclaw": {"events": ["test"]}}` is preserved verbatim."""
    raw = '{"openclaw": {"events": ["test"]}}'
    parsed = parse_skill_text(fm(f"name: x\ndescription: d\nmetadata: {raw}"))
    assert parsed.frontmatter.values["metadata"] == raw
    assert parsed.frontmatter.yaml_ok
    assert parsed.frontmatter.data["metadata"] == {"openclaw": {"events": ["test"]}}


def test_checklist_yaml_scalars_lists_and_maps_become_strings() -> None:
    """§12: `enabled: true` → "true", `retries: 3` → "3", list → JSON array, map → JSON object."""
    text = fm(
        "name: x\ndescription: d\nenabled: true\nretries: 3\ntags:\n  - a\n  - b\n"
        "nested:\n  k: v\n  n: 1.5"
    )
    v = values(text)
    assert v["enabled"] == "true"
    assert v["retries"] == "3"
    assert v["tags"] == '["a","b"]'
    assert v["nested"] == '{"k":"v","n":1.5}'


def test_checklist_colon_in_unquoted_value_returns_full_string() -> None:
    """§12: `description: Use anime style IMPORTANT: Must be kawaii` returns the full string."""
    parsed = parse_skill_text(fm("name: x\ndescription: Use anime style IMPORTANT: Must be kawaii"))
    assert parsed.description == "Use anime style IMPORTANT: Must be kawaii"
    assert not parsed.frontmatter.yaml_ok
    d = diag(parsed, "parse.yaml-invalid")
    assert d.severity is Severity.INFO
    assert d.line == 3  # the `description:` line of the file


def test_checklist_block_indicator_is_not_replaced_by_line_text() -> None:
    """§12: `description: |-` with `{json-like text}` yields "{json-like text}"."""
    text = fm("name: x\ndescription: |-\n  {json-like text}")
    assert values(text)["description"] == "{json-like text}"


def test_checklist_nested_mapping_becomes_json_object_string() -> None:
    """§12: `metadata:\\n  openclaw: true` → '{"openclaw":true}'."""
    parsed = parse_skill_text(fm("name: x\ndescription: d\nmetadata:\n  openclaw: true"))
    assert parsed.frontmatter.values["metadata"] == '{"openclaw":true}'
    assert parsed.metadata is None  # `openclaw` must be an object


def test_checklist_no_frontmatter_gives_empty_values() -> None:
    """§12: no frontmatter → {}."""
    parsed = parse_skill_text("# Title\n\nname: x\n")
    assert dict(parsed.frontmatter.values) == {}
    assert not parsed.has_frontmatter
    assert "parse.no-frontmatter" in codes(parsed)
    assert diag(parsed, "parse.missing-description").severity is Severity.ERROR
    assert parsed.body == "# Title\n\nname: x\n"


def test_checklist_frontmatter_values_are_only_strings() -> None:
    """§12: getFrontmatterString returns only strings (every value of the string view is a str)."""
    text = fm("name: x\ndescription: d\na: 1\nb: [1]\nc: {d: e}\nf: false\ng: .nan\nh: ~\ni:")
    v = values(text)
    assert all(isinstance(x, str) for x in v.values())
    assert "i" not in v  # null is dropped, and the line parser has nothing for it
    assert v["h"] == "~"  # YAML drops it, the line parser's text comes back
    assert v["g"] == "NaN"


def test_checklist_parse_bool_fallbacks() -> None:
    """§12: parseFrontmatterBool("maybe", false) → false; undefined → fallback."""
    assert parse_bool("maybe", False) is False
    assert parse_bool("maybe", True) is True
    assert parse_bool(None, True) is True
    assert parse_bool(None, False) is False
    for word in ("true", "1", "yes", "on", " YES ", "On"):
        assert parse_bool(word, False) is True
    for word in ("false", "0", "no", "off", "\tNo\n"):
        assert parse_bool(word, True) is False


def test_checklist_invocation_policy_defaults_and_words() -> None:
    """§12: invocation defaults {userInvocable: true, disableModelInvocation: false}; "no"/"yes"."""
    assert parse_skill_text(fm("name: x\ndescription: d")).invocation == InvocationPolicy()
    parsed = parse_skill_text(
        fm("name: x\ndescription: d\nuser-invocable: no\ndisable-model-invocation: yes")
    )
    assert parsed.invocation == InvocationPolicy(
        user_invocable=False, disable_model_invocation=True
    )
    # Only the hyphenated spellings count.
    parsed = parse_skill_text(fm("name: x\ndescription: d\nuser_invocable: no"))
    assert parsed.invocation.user_invocable is True


# --- frontmatter detection (§2.2) -------------------------------------------------


def test_split_frontmatter_positions() -> None:
    block, body, block_line, body_line = split_frontmatter("---\na: 1\n---\nbody\nmore")
    assert (block, body, block_line, body_line) == ("a: 1", "body\nmore", 2, 4)


def test_any_line_starting_with_three_dashes_ends_the_block() -> None:
    text = "---\nname: x\ndescription: d\n---- trailing\nbody"
    parsed = parse_skill_text(text)
    assert parsed.name == "x"
    assert parsed.body == "body"


def test_block_is_taken_from_index_four() -> None:
    # `---x` still opens a block; the parser starts reading at index 4, as OpenClaw does.
    assert values("---x\nname: y\ndescription: d\n---\n") == {"name": "y", "description": "d"}
    assert values(" ---\nname: x\ndescription: d\n---\n") == {}


def test_unterminated_frontmatter() -> None:
    parsed = parse_skill_text("---\nname: x\ndescription: d\n")
    assert dict(parsed.frontmatter.values) == {}
    assert not parsed.has_frontmatter
    assert "parse.unterminated-frontmatter" in codes(parsed)


def test_empty_frontmatter() -> None:
    parsed = parse_skill_text("---\n---\nBody")
    assert parsed.has_frontmatter
    assert dict(parsed.frontmatter.values) == {}
    assert "parse.empty-frontmatter" in codes(parsed)
    assert "parse.missing-description" in codes(parsed)


def test_crlf_and_lone_cr_are_normalised() -> None:
    lf = parse_skill_text("---\nname: x\ndescription: |\n  a\n  b\n---\nbody\n")
    crlf = parse_skill_text("---\r\nname: x\r\ndescription: |\r\n  a\r\n  b\r\n---\r\nbody\r\n")
    cr = parse_skill_text("---\rname: x\rdescription: |\r  a\r  b\r---\rbody\r")
    assert lf == crlf == cr
    assert lf.description == "a\nb"
    assert crlf.body == "body\n"


def test_bom_is_stripped_with_a_warning() -> None:
    parsed = parse_skill_text(b"\xef\xbb\xbf" + fm("name: x\ndescription: d").encode())
    assert parsed.had_bom
    assert parsed.name == "x"
    assert diag(parsed, "parse.bom").severity is Severity.WARNING
    # The same for text that already holds the BOM character.
    assert parse_skill_text("\ufeff" + fm("name: x\ndescription: d")).had_bom


def test_invalid_utf8_is_replaced_with_a_warning() -> None:
    data = fm("name: x\ndescription: caf\xe9").encode("latin-1")
    parsed = parse_skill_text(data, path=Path("/s/SKILL.md"))
    assert parsed.description == "caf\ufffd"
    d = diag(parsed, "parse.invalid-utf8")
    assert d.line == 3
    assert d.path == Path("/s/SKILL.md")


def test_nul_bytes_are_reported_as_binary() -> None:
    parsed = parse_skill_text(b"\x00\x01\x02" * 10)
    assert "parse.binary" in codes(parsed)
    assert parsed.frontmatter.values == {}


def test_control_characters_in_frontmatter_are_reported() -> None:
    parsed = parse_skill_text(fm("name: x\ndescription: bell\x07here"))
    d = diag(parsed, "parse.control-chars")
    assert d.line == 3
    assert "U+0007" in d.message
    # The JS YAML package reads them as content; so do we (libyaml alone would refuse).
    assert parsed.frontmatter.yaml_ok
    assert parsed.description == "bell\x07here"


def test_body_line_and_key_lines() -> None:
    parsed = parse_skill_text(fm("name: x\n\ndescription: |\n  a\nmetadata: '{}'", "B"))
    assert parsed.frontmatter.lines == {"name": 2, "description": 4, "metadata": 6}
    assert parsed.frontmatter.line_of("description") == 4
    assert parsed.body == "B"
    assert parsed.body_line == 8


# --- the two parsers and their merge (§2.3) ---------------------------------------


def test_views_are_read_only_mappings() -> None:
    parsed = parse_skill_text(fm("name: x\ndescription: d\nm:\n  k: [1, 2]"))
    assert isinstance(parsed.frontmatter.values, MappingProxyType)
    assert isinstance(parsed.frontmatter.data, MappingProxyType)
    assert parsed.frontmatter.data["m"] == {"k": [1, 2]}
    with pytest.raises(TypeError):
        parsed.frontmatter.values["name"] = "y"  # type: ignore[index]


def test_data_holds_line_parser_strings_when_yaml_fails() -> None:
    parsed = parse_skill_text(fm("name: x\ndescription: a: b"))
    assert not parsed.frontmatter.yaml_ok
    assert dict(parsed.frontmatter.data) == {"name": "x", "description": "a: b"}


def test_line_parser_multiline_and_quotes() -> None:
    block = "name: 'quoted'\ndescription:\n  first: line\n  second\n\nbad: a: b\nempty: ''"
    assert values(fm(block)) == {
        "name": "quoted",
        "description": "first: line\n  second",
        "bad": "a: b",
    }


def test_yaml_wins_except_structured_values_written_inline_with_a_colon() -> None:
    text = fm("name: x\ndescription: d\nflow: {openclaw: {emoji: x}}\nlist: [a, b]")
    v = values(text)
    assert v["flow"] == "{openclaw: {emoji: x}}"  # line text kept: it holds `:`
    assert v["list"] == '["a","b"]'  # no `:`: the JSON of the YAML value


def test_line_parser_keys_missing_from_yaml_are_appended() -> None:
    # `k2` is a line-parser entry inside a block scalar; YAML does not see it.
    text = fm("name: x\ndescription: |\n  text\nk2: v")
    assert list(values(text)) == ["name", "description", "k2"]


def test_js_object_key_order_integer_keys_first() -> None:
    assert list(values(fm("name: x\ndescription: d\nb: 1\n2: two\n1: one\n01: z"))) == [
        "1",
        "2",
        "name",
        "description",
        "b",
        "01",
    ]


def test_object_prototype_keys_behave_as_in_javascript() -> None:
    # `__proto__` never becomes a key; `constructor` from the line parser is not
    # appended when YAML succeeded (`key in merged` is true for it in JavaScript).
    ok = values(fm("name: x\ndescription: d\n__proto__: p\nm: |\n  x\nconstructor: c"))
    assert "__proto__" not in ok
    assert ok["constructor"] == "c"  # YAML has it
    failed = values(fm("name: x\ndescription: a: b\n__proto__: p\nconstructor: c"))
    assert failed == {"name": "x", "description": "a: b", "constructor": "c"}


def test_keys_and_strings_are_trimmed_like_javascript() -> None:
    v = values(fm('"  name  ": "  x  "\ndescription: "\u00a0d\ufeff"'))
    assert v == {"name": "x", "description": "d"}


@pytest.mark.parametrize(
    ("literal", "expected"),
    [
        ("1.0", "1"),
        ("1e3", "1000"),
        ("0x10", "16"),
        ("0o17", "15"),
        (".inf", "Infinity"),
        ("-.Inf", "-Infinity"),
        (".nan", "NaN"),
        ("1e21", "1e+21"),
        ("0.000001", "0.000001"),
        ("1e-7", "1e-7"),
        ("-0", "0"),
        ("+5", "5"),
        ("007", "7"),
        ("0.1", "0.1"),
        ("9007199254740993", "9007199254740992"),
        ("1_000", "1_000"),
        ("0b101", "0b101"),
        ("true", "true"),
        ("True", "true"),
        ("FALSE", "false"),
        ("yes", "yes"),
        ("off", "off"),
        ("2024-01-01", "2024-01-01"),
    ],
)
def test_yaml_scalars_print_like_javascript(literal: str, expected: str) -> None:
    assert values(fm(f"name: x\ndescription: d\nv: {literal}"))["v"] == expected


def test_nested_numbers_use_json_stringify() -> None:
    v = values(fm("name: x\ndescription: d\nl: [1.0, 1e21, 1e-7, .inf, 0x10]"))
    assert v["l"] == "[1,1e+21,1e-7,null,16]"


# --- YAML safety -------------------------------------------------------------------


def test_duplicate_keys_fall_back_to_line_parser() -> None:
    parsed = parse_skill_text(fm("name: x\ndescription: first\ndescription: second"))
    assert not parsed.frontmatter.yaml_ok
    assert parsed.description == "second"
    d = diag(parsed, "parse.yaml-duplicate-key")
    assert d.line == 4
    assert d.severity is Severity.WARNING


@pytest.mark.parametrize(
    "block",
    ["a: 1\na: 2", "1: a\n1.0: b", "true: a\nTrue: b", "~: a\nnull: b", "m:\n  a: 1\n  a: 2"],
)
def test_load_core_refuses_duplicate_keys(block: str) -> None:
    with pytest.raises(YamlError) as info:
        load_yaml(block)
    assert info.value.kind == "duplicate-key"


def test_quoted_and_plain_keys_are_distinct() -> None:
    assert load_yaml('"1": a\n1: b') == {"1": "b"}


def test_billion_laughs_is_refused() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, cur in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{cur}: &{cur} [{', '.join([f'*{prev}'] * 9)}]")
    block = "name: x\ndescription: d\n" + "\n".join(lines)
    with pytest.raises(YamlError) as info:
        load_yaml(block)
    assert info.value.kind == "alias-bomb"
    parsed = parse_skill_text(fm(block))
    assert "parse.yaml-alias-bomb" in codes(parsed)
    assert parsed.description == "d"  # the line parser still gives the fields
    assert len(parsed.frontmatter.values["i"]) < 100


def test_alias_budget_matches_the_js_package() -> None:
    # A scalar anchor may be used 99 times (count starts at 1; the bound is 100).
    ok = "a: &a v\nl: [" + ", ".join(["*a"] * 99) + "]"
    assert load_yaml(ok)["l"] == ["v"] * 99
    with pytest.raises(YamlError):
        load_yaml("a: &a v\nl: [" + ", ".join(["*a"] * 100) + "]")


def test_aliases_resolve_and_merge_keys_are_plain_keys() -> None:
    data = load_yaml("base: &b {a: 1}\nother: *b\nderived:\n  <<: *b\n  c: 2")
    assert data["other"] == {"a": 1}
    assert data["derived"] == {"<<": {"a": 1}, "c": 2}


def test_undefined_and_recursive_aliases_are_errors() -> None:
    for block in ("a: *nope", "a: &a [*a]"):
        with pytest.raises(YamlError):
            load_yaml(block)


def test_deep_nesting_is_refused() -> None:
    deep = "k: " + "[" * (DEFAULT_MAX_DEPTH + 5) + "]" * (DEFAULT_MAX_DEPTH + 5)
    with pytest.raises(YamlError) as info:
        load_yaml(deep)
    assert info.value.kind == "too-deep"
    parsed = parse_skill_text(fm("name: x\ndescription: d\n" + deep))
    assert "parse.yaml-too-deep" in codes(parsed)
    assert load_yaml("k: " + "[" * 50 + "]" * 50) is not None


def test_core_schema_has_no_timestamps_sets_or_yaml11_booleans() -> None:
    data = load_yaml("d: 2001-12-14\ny: yes\nn: No\no: on\nb: !!binary aGk=\ns: !!str 12")
    assert data == {"d": "2001-12-14", "y": "yes", "n": "No", "o": "on", "b": "aGk=", "s": "12"}


def test_not_a_mapping_and_comments_only() -> None:
    parsed = parse_skill_text(fm("- a\n- b"))
    assert "parse.yaml-not-mapping" in codes(parsed)
    parsed = parse_skill_text(fm("# only a comment"))
    assert "parse.empty-frontmatter" in codes(parsed)


def test_js_yaml_strictness_that_libyaml_lacks() -> None:
    # Each is valid for libyaml but refused by the JS package, so OpenClaw (and we)
    # use the line parser.
    for block in (
        'description: "a\nb"',  # quoted continuation not indented
        "m:\n  k: [a,\n  b]",  # flow continuation not indented past its key
        "k:\n|\n  text",  # block scalar at the key's column
        'k: "a"#comment',  # comment glued to a value
    ):
        with pytest.raises(YamlError):
            load_yaml(block)
    # ...and what the JS package accepts although libyaml does not.
    assert load_yaml("l:\n-\tRead\n-\tx") == {"l": ["Read", "x"]}
    assert load_yaml('m: {\n  "a": 1\n}') == {"m": {"a": 1}}


def test_line_separators_are_content_not_line_breaks() -> None:
    v = values(fm("name: x\ndescription: a\u2028b\nnel: c\x85d"))
    assert v["description"] == "a\u2028b"
    assert v["nel"] == "c\x85d"


# --- dispatch (§2.4, §6.1) -----------------------------------------------------------


def test_tool_dispatch() -> None:
    parsed = parse_skill_text(
        fm("name: x\ndescription: d\ncommand-dispatch: Tool\ncommand-tool: ' Read '")
    )
    assert parsed.dispatch == CommandDispatch(tool_name="Read")
    assert parsed.dispatch.to_json() == {"kind": "tool", "toolName": "Read", "argMode": "raw"}


def test_dispatch_underscore_aliases_and_hyphen_precedence() -> None:
    v = {"command_dispatch": "tool", "command_tool": "t1", "command-tool": "t2"}
    dispatch, diags = resolve_dispatch(v)
    assert dispatch == CommandDispatch(tool_name="t2")
    assert diags == ()
    # A blank hyphenated value still wins over the underscore one (JavaScript `??`).
    dispatch, _ = resolve_dispatch({"command-dispatch": "", "command_dispatch": "tool"})
    assert dispatch is None


def test_dispatch_without_tool_and_unknown_arg_mode() -> None:
    parsed = parse_skill_text(fm("name: x\ndescription: d\ncommand-dispatch: tool"))
    assert parsed.dispatch is None
    assert diag(parsed, "parse.dispatch-no-tool").line == 4
    parsed = parse_skill_text(
        fm(
            "name: x\ndescription: d\ncommand-dispatch: tool\ncommand-tool: t\ncommand-arg-mode: json"
        )
    )
    assert parsed.dispatch == CommandDispatch(tool_name="t", arg_mode="raw")
    assert "parse.arg-mode" in codes(parsed)
    assert resolve_dispatch({"command-dispatch": "model"}) == (None, ())


# --- robustness ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "---\n" + "a: b: c\n" * 50_000 + "---\n",
        "---\nk: " + "[" * 200_000 + "\n---\n",
        "---\n" + "- " * 100_000 + "x\n---\n",
        "---\nk: " + "x" * 1_000_000 + "\n---\n",
        "---\n" + "k" * 5000 + ": v\n---\n",
        "---\n" + "\x00\x85\u2028\ud800" * 1000 + "\n---\n",
    ],
    ids=["colons", "open-brackets", "nested-dashes", "long-line", "long-key", "odd-chars"],
)
def test_megabytes_of_junk_do_not_break_the_parser(text: str) -> None:
    parsed = parse_skill_text(text)
    assert isinstance(parsed, ParsedSkillFile)
    assert all(isinstance(v, str) for v in parsed.frontmatter.values.values())


def test_frontmatter_block_alone() -> None:
    frontmatter, diags = parse_frontmatter_block("name: x\ndescription: d", block_line=2)
    assert frontmatter.values == {"name": "x", "description": "d"}
    assert frontmatter.lines == {"name": 2, "description": 3}
    assert diags == ()


def test_diagnostics_serialise() -> None:
    parsed = parse_skill_text(fm("name: x\ndescription: a: b"), path=Path("/s/SKILL.md"))
    assert json.dumps([d.to_dict() for d in parsed.diagnostics])
    assert all(d.path == Path("/s/SKILL.md") for d in parsed.diagnostics)


def test_pure_python_parser_gives_the_same_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without libyaml (a PyYAML built without it) the pure-Python parser is used."""
    import sys

    block = 'name: x\ndescription: "d"\nl: [1, {a: b}]\nc: bell\x07\ndup: &a v\nref: *a'
    fast = load_yaml(block)
    monkeypatch.setitem(sys.modules, "yaml._yaml", None)
    assert type(_new_parser("a: 1")).__name__ == "_PyParser"
    assert load_yaml(block) == fast
    with pytest.raises(YamlError):
        load_yaml("a: 1\na: 2")


def test_a_parser_bug_is_an_internal_error_with_a_logged_traceback(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import skillbook.pipeline.parse.skill_file as parse_module

    def broken(text: str | bytes, path: Path | None, rules: object = None) -> ParsedSkillFile:
        raise KeyError("a bug")

    monkeypatch.setattr(parse_module, "_parse", broken)
    with caplog.at_level("ERROR", logger="skillbook.pipeline.parse.skill_file"):
        parsed = parse_skill_text("---\nname: x\ndescription: y\n---\n", path=Path("/s/SKILL.md"))
    assert codes(parsed) == ["parse.internal-error"]
    assert "KeyError: 'a bug'" in parsed.diagnostics[0].message
    (record,) = caplog.records
    assert record.exc_info is not None and record.exc_info[0] is KeyError
    assert "/s/SKILL.md" in record.getMessage()
