"""What a skill author is told when a required key looks missing but the file shows a
slip (a capital letter, a typo, an indent, an empty value), and what a YAML error
advises: the message must name the slip and its line, not ask for a key already there."""

from __future__ import annotations

import pytest

from skillbook.diagnostics import Diagnostic
from skillbook.pipeline.parse.skill_file import parse_skill_text


def only(text: str, code: str) -> Diagnostic:
    found = [d for d in parse_skill_text(text).diagnostics if d.code == code]
    assert len(found) == 1, [d.code for d in parse_skill_text(text).diagnostics]
    return found[0]


@pytest.mark.parametrize(
    ("block", "said", "line"),
    [
        ("name: x\nDescription: Does y.", "found `Description:`; keys are case-sensitive", 3),
        ("name: x\ndescripton: Does y.", "found `descripton:`; did you mean `description:`?", 3),
        ("name: x\n\tdescription: Does y.", "line 3 `description:` is indented with a tab", 3),
        ("name: x\n  description: Does y.", "line 3 `description:` is indented with spaces", 3),
        ("name: x\ndescription:", "`description:` has no value: say what the skill does", 3),
    ],
)
def test_missing_description_names_the_slip_and_its_line(block: str, said: str, line: int) -> None:
    d = only(f"---\n{block}\n---\nBody\n", "parse.missing-description")
    assert said in d.message
    assert "add `description:" not in d.message
    assert d.line == line


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("---\nname: x\ndescription: Does y.\n\n# Body\n", 3),  # never closed
        ("name: x\ndescription: Does y.\n\n# Body\n", 2),  # no fences at all
    ],
)
def test_a_description_outside_a_frontmatter_block_is_named(text: str, line: int) -> None:
    d = only(text, "parse.missing-description")
    assert f"(line {line} `description:` is not inside a frontmatter block: the file needs" in (
        d.message
    )
    assert d.line == line


def test_missing_description_without_a_slip_keeps_the_plain_advice() -> None:
    d = only("---\nname: x\n---\nBody\n", "parse.missing-description")
    assert d.message.endswith("(add `description: <when to use this skill>`)")
    assert d.line == 2


def test_missing_name_names_a_misspelt_key() -> None:
    d = only("---\nnmae: x\ndescription: Does y.\n---\nBody\n", "parse.missing-name")
    assert "found `nmae:`; did you mean `name:`?" in d.message
    assert d.line == 2


def test_an_unrelated_key_is_not_taken_for_a_misspelling() -> None:
    d = only("---\nname: x\nhomepage: https://x.example\n---\nBody\n", "parse.missing-description")
    assert "homepage" not in d.message


@pytest.mark.parametrize(
    ("block", "advice"),
    [
        ("name: x\n\tdescription: y", "indent with spaces, not tabs"),
        ('name: x\ndescription: "unclosed', "close the quote or bracket left open"),
        (
            "name: x\ndescription: y\nmetadata: [1\n",
            "close the bracket, and separate its items with commas",
        ),
        ("name: x\ndescription: Use when: asked", "quote values that contain ': '"),
    ],
)
def test_yaml_invalid_advice_fits_the_error(block: str, advice: str) -> None:
    d = only(f"---\n{block}\n---\nBody\n", "parse.yaml-invalid")
    assert d.message.endswith(f"({advice})")


@pytest.mark.parametrize(
    ("metadata", "said"),
    [
        (
            "{openclaw: {requires: {bins: [gh}}}",
            'unexpected "g" at column 31 of its value; a text value needs quotes',
        ),
        ('{"openclaw": {"emoji": "x"}', "unexpected end of input at column 28 of its value; a {"),
        (
            '\n  {\n    "openclaw": {"emoji": "x"}\n    "other": 1\n  }',
            'unexpected """ at line 3, column 5 of its value; is a comma missing at the end of '
            "line 2?",
        ),
    ],
)
def test_invalid_metadata_says_where_in_the_value_and_the_likely_slip(
    metadata: str, said: str
) -> None:
    """It said `(<string>:1 Unexpected "g" at column 31)`."""
    text = f"---\nname: x\ndescription: Does y.\nmetadata: {metadata}\n---\nBody\n"
    d = only(text, "parse.metadata-invalid")
    assert f"`metadata` is not valid JSON5 ({said}" in d.message
    assert "<string>" not in d.message and d.line == 4


@pytest.mark.parametrize(
    ("block", "said", "line"),
    [
        (
            "name: [x, y]\ndescription: D.",
            '`name` is a list in the YAML, read as the text \'["x","y"]\'',
            2,
        ),
        ("name: 42\ndescription: D.", "`name` is a number in the YAML, read as the text '42'", 2),
        ("name: {k: v}\ndescription: D.", "`name` is a mapping in the YAML", 2),
        ("name: x\ndescription: true", "`description` is a boolean in the YAML", 3),
    ],
)
def test_a_name_or_description_that_yaml_reads_as_no_text_is_named(
    block: str, said: str, line: int
) -> None:
    """OpenClaw turns such a value into text and loads the skill; so does skillbook, but
    the author hears what became of it (the skill loaded under '["x","y"]' unremarked)."""
    text = f"---\n{block}\n---\nBody\n"
    d = only(text, "parse.field-type")
    assert d.message.startswith(said) and d.line == line
    assert "write it as plain text" in d.message
    parsed = parse_skill_text(text)
    assert not [x for x in parsed.diagnostics if x.severity.name == "ERROR"]
    # Plain text, quoted numbers and empty values are not named.
    for fine in ('name: "42"\ndescription: D.', "name: x\ndescription: D.", "description: D."):
        codes = [x.code for x in parse_skill_text(f"---\n{fine}\n---\n").diagnostics]
        assert "parse.field-type" not in codes, fine
