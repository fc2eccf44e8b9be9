"""Malformed frontmatter read as OpenClaw reads it, under both compat profiles.

The table (:mod:`malformed_frontmatter`, several hundred generated cases) was run
through OpenClaw 2026.4.12 and 2026.9.6 (the oracle's ``frontmatter`` op) and their
answers are checked in (``malformed_frontmatter_recorded.json``); the oracle test
``test_frontmatter_malformed_oracle.py`` holds that record to the live packages. Here,
without Node: skillbook's ``openclaw-2026.9`` profile loads exactly the cases 2026.9.6
loads, with the same frontmatter; ``openclaw-2026.4`` gives 2026.4.12's frontmatter;
and no degraded parse is silent.

The rule found (2026.9.6's ``normalizeFreeformFieldAtError``): the YAML package's first
error is located, and when its line is a top-level ``description`` (any error) or
``read_when``/``summary`` (only a ``: `` inside a plain value) the value is quoted
and the block parsed again, at most once per field. An error at the end of the block
(an unclosed ``[``, ``{`` or quote) is on the block's *last* line, so an unclosed
``description`` there loads; with a blank line after it, it does not.
"""

from __future__ import annotations

from typing import Any

import pytest
from malformed_frontmatter import MALFORMED, load_recorded

from skillbook.config.profile import OPENCLAW_2026_4, OPENCLAW_2026_9
from skillbook.pipeline.parse.frontmatter_rules import split_frontmatter_exact
from skillbook.pipeline.parse.skill_file import parse_skill_text
from skillbook.pipeline.parse.yaml_core import YamlError, load_core_with_lines

RECORDED = load_recorded()

#: Codes that say the YAML reading was degraded (line parser, re-quoting, or refused).
DEGRADED = {
    "parse.yaml-invalid",
    "parse.yaml-recovered",
    "parse.yaml-duplicate-key",
    "parse.yaml-alias-bomb",
    "parse.yaml-too-deep",
    "parse.yaml-not-mapping",
    "parse.empty-frontmatter",
    "parse.frontmatter-invalid",
}


def test_the_table_is_large_and_recorded() -> None:
    assert len(MALFORMED) >= 200
    assert len({case_id for case_id, _ in MALFORMED}) == len(MALFORMED)
    assert list(RECORDED) == [case_id for case_id, _ in MALFORMED]
    loaded = sum(r["2026.9.6"]["loaded"] for r in RECORDED.values())
    # Both outcomes are well represented: the table finds the rule's edges.
    assert 100 <= loaded <= len(MALFORMED) - 100


def _ours_2026_9(text: str) -> dict[str, Any]:
    parsed = parse_skill_text(text, rules=OPENCLAW_2026_9.frontmatter)
    return {"loaded": not parsed.invalid, "frontmatter": dict(parsed.frontmatter.values)}


def test_2026_9_loads_what_2026_9_6_loads() -> None:
    """Before: 14 cases that 2026.9.6 loads were dropped (an unclosed ``description`` on
    the last line, a ``: value`` line) and 7 it refuses were loaded (``read_when``/
    ``summary`` with ``{a: 1}}`` or ``[a, {b: c]``)."""
    wrong: list[str] = []
    for case_id, text in MALFORMED:
        theirs = RECORDED[case_id]["2026.9.6"]
        mine = _ours_2026_9(text)
        if mine["loaded"] != theirs["loaded"] or (
            theirs["loaded"] and mine["frontmatter"] != theirs["frontmatter"]
        ):
            wrong.append(f"{case_id}: ours={mine} 2026.9.6={theirs}")
    assert wrong == []


def test_2026_4_reads_what_2026_4_12_reads() -> None:
    wrong = []
    for case_id, text in MALFORMED:
        mine = dict(parse_skill_text(text, rules=OPENCLAW_2026_4.frontmatter).frontmatter.values)
        if mine != RECORDED[case_id]["2026.4.12"]:
            wrong.append(f"{case_id}: ours={mine} 2026.4.12={RECORDED[case_id]['2026.4.12']}")
    assert wrong == []


def _yaml_fails(text: str) -> bool:
    block = split_frontmatter_exact(text.replace("\r\n", "\n"))[0]
    if not block:
        return False
    try:
        parsed, _ = load_core_with_lines(block)
    except YamlError:
        return True
    return not isinstance(parsed, dict)


@pytest.mark.parametrize("profile", [OPENCLAW_2026_4, OPENCLAW_2026_9], ids=str)
def test_no_degraded_parse_is_silent(profile: Any) -> None:
    """Whenever the YAML as written is refused, the parse says so: the line parser
    was used, a field was re-quoted (``parse.yaml-recovered``, 2026.9), or the skill is
    refused (``parse.frontmatter-invalid``)."""
    silent = []
    for case_id, text in MALFORMED:
        if not _yaml_fails(text):
            continue
        parsed = parse_skill_text(text, rules=profile.frontmatter)
        if not DEGRADED & {d.code for d in parsed.diagnostics}:
            silent.append(case_id)
    assert silent == []


def test_a_requoted_description_keeps_an_info_diagnostic() -> None:
    text = "---\nname: a\ndescription: [see the docs\n---\nBody\n"
    parsed = parse_skill_text(text, rules=OPENCLAW_2026_9.frontmatter)
    assert not parsed.invalid
    assert parsed.frontmatter.values["description"] == "[see the docs"
    (diag,) = [d for d in parsed.diagnostics if d.code == "parse.yaml-recovered"]
    assert diag.severity == "info" and diag.line == 3
    assert "`description`" in diag.message and 'description: "...' in diag.message


@pytest.mark.parametrize(
    ("block", "loaded"),
    [
        ("name: a\ndescription: [x", True),  # the error is on the last line: re-quoted
        ("name: a\ndescription: [x\n", False),  # on the blank line after it: refused
        ("name: a\nread_when: {a: 1}}\ndescription: d", False),  # not a ': ' error
        ("name: a\nread_when: use when: asked\ndescription: d", True),
        (": value\nname: a\ndescription: d", True),  # an empty key is YAML
        ("name: a\ndescription: *nowhere", True),  # an alias as description: quoted too
        ("name: a\nsummary: *nowhere\ndescription: d", False),  # but not as summary
    ],
)
def test_edges_of_the_rule(block: str, loaded: bool) -> None:
    parsed = parse_skill_text(f"---\n{block}\n---\n", rules=OPENCLAW_2026_9.frontmatter)
    assert parsed.invalid is not loaded
    assert parsed.frontmatter.values["name"] == "a"
