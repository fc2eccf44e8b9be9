"""A generated table of malformed SKILL.md frontmatters, for differential tests.

Each case is ``(id, text)``: a whole SKILL.md whose frontmatter is broken in one or two
ways (unclosed brackets, braces and quotes, stray colons, bad indentation, tabs,
duplicate keys, anchors and aliases, tags, indicators a plain scalar may not start
with, block scalars gone wrong), the fault placed in each field OpenClaw treats
differently (the free-text ``description``/``read_when``/``summary``, ``name``,
``metadata``, an unknown key) and at the first, a middle and the last line of the
block. The table is deterministic, so a failure names its case.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["MALFORMED", "RECORDED", "answers", "load_recorded", "malformed_cases", "requests"]

#: Values that are not valid YAML (or not what they look like) on a ``key: <value>`` line.
BAD_VALUES: dict[str, str] = {
    "open-bracket": "[unclosed bracket",
    "open-bracket-words": "[see docs for more",
    "open-brace": "{unclosed brace",
    "open-brace-pair": "{a: 1, b: 2",
    "close-bracket": "closed] bracket",
    "extra-close": "{a: 1}}",
    "lone-close": "]",
    "open-double": '"unclosed double quote',
    "open-single": "'unclosed single quote",
    "quoted-then-text": '"quoted" then text',
    "single-then-text": "'single' then text",
    "stray-colon": "Use when: the user asks",
    "two-colons": "a: b: c",
    "colon-end": "ends with colon:",
    "url-colon": "see https://example.com: now",
    "alias-undefined": "*nowhere",
    "alias-text": "*ref and more",
    "anchor-open": "&a [x",
    "tag-bad": "!!int abc",
    "tag-local": "!custom value",
    "at-start": "@mention the bot",
    "backtick-start": "`code` first",
    "percent-start": "%directive like",
    "dash-start": "- looks like a list",
    "question-start": "? looks like a key",
    "pipe-text": "| not a block scalar",
    "gt-text": "> not folded",
    "comma-start": ", leading comma",
    "flow-in-text": "text [with bracket",
    "brace-in-text": "text {with brace",
    "hash-glued": "text#not-a-comment",
    "double-quoted-escape": '"bad \\q escape"',
    "quote-inside": 'say "hi": loudly',
    "tab-inside": "tab\there: x",
    "mixed-flow": "[a, {b: c]",
    "json-like": '{"openclaw": {"emoji": "x"}',
}

#: The keys a bad value is put under.
FIELDS = ("description", "name", "read_when", "summary", "metadata", "homepage")

#: Whole blocks broken in their structure rather than in one value.
STRUCTURAL: dict[str, str] = {
    "indented-first": "  name: a\ndescription: d",
    "indented-second": "name: a\n  description: d",
    "indented-after-scalar": "name: a\ndescription: d\n   summary: s",
    "dedent-in-map": "name: a\nmetadata:\n    x: 1\n  y: 2\ndescription: d",
    "tab-indent": "name: a\ndescription: d\nmetadata:\n\tx: 1",
    "tab-before-key": "\tname: a\ndescription: d",
    "tab-after-colon": "name:\ta\ndescription:\td",
    "tab-continuation": "name: a\ndescription:\n\tline one\n\tline two",
    "dup-name": "name: a\nname: b\ndescription: d",
    "dup-description": "name: a\ndescription: one\ndescription: two",
    "dup-description-bad": "name: a\ndescription: one\ndescription: two: three",
    "dup-metadata": 'name: a\ndescription: d\nmetadata: {"a": 1}\nmetadata: {"b": 2}',
    "dup-nested": "name: a\ndescription: d\nmetadata:\n  x: 1\n  x: 2",
    "dup-quoted-key": 'name: a\n"description": one\ndescription: two',
    "anchor-alias-description": "x: &d hello\nname: a\ndescription: *d",
    "alias-before-anchor": "name: a\ndescription: *d\nx: &d hello",
    "anchor-reuse": "name: &n a\ndescription: &n d",
    "alias-in-metadata": "name: a\ndescription: d\nmetadata: *m",
    "alias-key": "name: a\n*k : v\ndescription: d",
    "merge-key": "base: &b {x: 1}\nname: a\ndescription: d\nmore:\n  <<: *b",
    "key-no-space": "name:a\ndescription: d",
    "key-no-colon": "name a\ndescription: d",
    "only-colon": ":\nname: a\ndescription: d",
    "colon-key": ": value\nname: a\ndescription: d",
    "list-root": "- name: a\n- description: d",
    "scalar-root": "just some text",
    "scalar-then-map": "text first\nname: a\ndescription: d",
    "doc-end": "name: a\n...\ndescription: d",
    "doc-start": "name: a\n--- \ndescription: d",
    "directive": "%YAML 1.2\nname: a\ndescription: d",
    "block-scalar-bad-indicator": "name: a\ndescription: |x\n  text",
    "block-scalar-at-key-column": "name: a\ndescription: |\ntext at column zero",
    "block-scalar-less-indented": "name: a\ndescription: |\n    first\n  second",
    "folded-then-key": "name: a\ndescription: >\n  folded\n text",
    "multiline-bracket": "name: a\ndescription:\n  [unclosed\n  continues",
    "multiline-colon": "name: a\ndescription:\n  Use when: asked\n  more",
    "multiline-plain-then-bad": "name: a\ndescription: first\n  second: x",
    "flow-multiline-open": 'name: a\ndescription: d\nmetadata: {"openclaw":\n  {"emoji": "x"}',
    "flow-multiline-dedent": 'name: a\ndescription: d\nmetadata: {\n"openclaw": {}}',
    "two-bad-description-summary": "name: a\ndescription: a: b\nsummary: c: d",
    "two-bad-summary-first": "name: a\nsummary: [x\ndescription: y: z",
    "two-bad-read-when-description": "read_when: when: now\nname: a\ndescription: [x",
    "bad-then-bad-name": "name: [n\ndescription: [d",
    "bad-description-then-bad-other": "name: a\ndescription: [d\nother: {o",
    "bad-other-then-description": "name: a\nother: {o\ndescription: [d",
    "four-free-text": "description: a: b\nread_when: c: d\nsummary: e: f\nname: n",
    "quoted-description-bad": "name: a\n'description': [x",
    "double-quoted-key-bad": 'name: a\n"description": Use when: x',
    "description-pipe-indicator": "name: a\ndescription: |2-\n  text",
    "description-gt-keep": "name: a\ndescription: >+\n  text",
    "unicode-key": "name: a\ndescription: d\nnäme: [x",
    "crlf-bad": "name: a\r\ndescription: Use when: x\r\n",
    "trailing-blank-bad": "name: a\ndescription: [x\n",
    "trailing-blanks-bad": "name: a\ndescription: [x\n\n",
    "comment-after-bad": "name: a\ndescription: [x\n# comment",
    "bad-after-comment": "# comment\ndescription: [x\nname: a",
    "empty-description-bad": "name: a\ndescription:\nsummary: [x",
    "description-only-bad": "description: [x",
    "description-empty-quotes": "name: a\ndescription: ''\nsummary: s: t",
    "complex-key": "? name\n: a\ndescription: d",
    "complex-key-bad": "? [name\n: a\ndescription: d",
    "nested-description-bad": "name: a\nmetadata:\n  description: [x\ndescription: d",
    "nested-summary-bad": "name: a\nsummary:\n  inner: a: b\ndescription: d",
}


#: Two faults at once, or one where the error could be placed on another line than the
#: fault (the line that decides 2026.9.6's re-quoting): ids ``combo/NN``.
COMBINATIONS: list[str] = [
    "name: a\ndescription: [x\nsummary: a: b",
    "name: a\nsummary: [x\ndescription: d",
    "name: [x\ndescription: d",
    "name: 'x\ndescription: d",
    'name: a\nmetadata: {"a": 1\ndescription: d',
    "name: a\nmetadata: [1, 2\ndescription: hello",
    'name: a\nother: "open\ndescription: hello',
    'name: a\ndescription: "open\nsummary: x',
    "name: a\ndescription: 'open\n  continued",
    "name: a\ndescription: [x\n  y",
    "name: a\ndescription: {x\n# c",
    "description: d\nname: a\nsummary: [x",
    'description: d\nname: a\nread_when: "x: y',
    "description: d\nname: a\nread_when: [x: y",
    "description: d\nname: a\nsummary: x: [y",
    "name: a\ndescription: x: [y",
    'name: a\ndescription: "a" b: c',
    "name: a\ndescription: |\n  ok\nsummary: [x",
    "name: a\ndescription: >\n  text: [\nsummary: s",
    "- a\ndescription: [x",
    "name: a\n  description: [x",
    "name: a\ndescription: [x]]",
    "name: a\ndescription: [x]: y",
    "name: a\ndescription: {a: b}: c",
    "name: a\ndescription: - x: y",
    "name: a\ndescription: ? x",
    "name: a\ndescription: &a\nsummary: *a",
    "name: a\ndescription: !!str [x",
    "name: a\ndescription: !!map x",
    'name: a\ndescription: "x""y"',
    "name: a\ndescription: 'x'y'",
    "name: a\ndescription: `x: y`",
    "name: a\ndescription: %x: y",
    "name: a\ndescription: @x: y",
    "name: a\ndescription: x #: y",
    "name: a\ndescription: x\n\ty",
    "name: a\ndescription:\n  - [x",
    "name: a\ndescription:\n  a: [x",
    'name: a\nsummary: "x": y\ndescription: d',
    "name: a\nread_when: x:y: z\ndescription: d",
    "name: a\nread_when: 'x': y\ndescription: d",
    "name: a\nread_when: [a]: y\ndescription: d",
    "name: a\nread_when: - a: y\ndescription: d",
    "name: a\nread_when: a: b\nsummary: c: d\ndescription: e: f\n",
    "name: a\nread_when: a: b\nread_when: c: d\ndescription: e",
]


def _block(lines: list[str]) -> str:
    return "---\n" + "\n".join(lines) + "\n---\nBody text.\n"


def malformed_cases() -> Iterator[tuple[str, str]]:
    """Every case, in a fixed order."""
    for field in FIELDS:
        for label, value in BAD_VALUES.items():
            others = [
                f"{k}: {v}"
                for k, v in (("name", "demo-skill"), ("description", "Does a thing"))
                if k != field
            ]
            bad = f"{field}: {value}"
            # The fault on the last line for the free-text fields (the end of the block is
            # where an unclosed value's error lands), first for the rest.
            lines = [*others, bad] if field in ("description", "read_when") else [bad, *others]
            yield f"{field}/{label}", _block(lines)
    for label, value in BAD_VALUES.items():
        # The same faults in the middle of the block, followed by a valid line.
        yield (
            f"middle/{label}",
            _block(["name: demo-skill", f"description: {value}", "homepage: https://x.test"]),
        )
    for label, value in BAD_VALUES.items():
        # First, before a valid line; and last with blank lines before the closing `---`.
        yield f"first/{label}", _block([f"description: {value}", "name: demo-skill"])
        yield f"blank-after/{label}", _block(["name: demo-skill", f"summary: {value}", ""])
    for label, block in STRUCTURAL.items():
        yield f"structural/{label}", _block(block.split("\n"))
    for number, block in enumerate(COMBINATIONS):
        yield f"combo/{number:02d}", _block(block.split("\n"))


#: The table as a list (its size is part of the test's promise: at least 200 cases).
MALFORMED: list[tuple[str, str]] = list(malformed_cases())


#: What OpenClaw itself made of every case, recorded from the oracle (``python
#: tests/malformed_frontmatter.py`` with the oracle installed writes it again):
#: ``{id: {"2026.4.12": frontmatter, "2026.9.6": {"loaded": bool, "frontmatter": ...}}}``.
#: A 2026.9.6 case is loaded when ``parseFrontmatterBlockResult`` reports no issue
#: (its skill loader throws on the first one).
RECORDED = Path(__file__).with_name("malformed_frontmatter_recorded.json")


def requests() -> list[dict[str, Any]]:
    return [{"op": "frontmatter", "text": text, "omitMeta": True} for _, text in MALFORMED]


def answers(baseline: list[dict[str, Any]], latest: list[dict[str, Any]]) -> dict[str, Any]:
    """The recorded shape, from the two oracles' results (one per case, in order)."""
    out: dict[str, Any] = {}
    for (case_id, _), old, new in zip(MALFORMED, baseline, latest, strict=True):
        out[case_id] = {
            "2026.4.12": old["frontmatter"],
            "2026.9.6": {"loaded": not new["issues"], "frontmatter": new["frontmatter"]},
        }
    return out


def load_recorded() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(RECORDED.read_text(encoding="utf-8"))
    return data


if __name__ == "__main__":  # pragma: no cover - a maintenance script
    from oracle_support import run_batch

    found = answers(
        [r["result"] for r in run_batch(requests(), timeout=600)],
        [r["result"] for r in run_batch(requests(), timeout=600, version="latest")],
    )
    RECORDED.write_text(json.dumps(found, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(found)} cases written to {RECORDED}")
