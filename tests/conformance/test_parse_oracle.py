"""Differential test: skillbook's parser against OpenClaw's own (the oracle's `frontmatter` op).

Every SKILL.md of ``../shared/corpus`` and a set of tricky hand-written texts go to the
oracle in one batch each; the frontmatter string view, the resolved ``metadata`` and
the invocation policy must be equal (frontmatter key order included).

Known, deliberate differences (skillbook's choice, not a bug):
- a file that starts with a UTF-8 BOM: OpenClaw sees no frontmatter, we strip the BOM;
- a manifest under a legacy key (``clawdbot``, ``clawdis``, ``moltbot``): OpenClaw's
  baseline reads only ``openclaw``; we keep it and record ``manifest_key``;
- frontmatter nested deeper than ``_yaml.DEFAULT_MAX_DEPTH``: we fall back to the
  line parser where OpenClaw's YAML would still cope.

Known remaining differences on malformed YAML (found by fuzzing, never seen in the
corpus): collection-valued mapping keys (the JS package prints them as YAML), implicit
keys spread over two lines (``key\n  : value``, multi-line quoted keys in flow maps),
``[ : x ]`` empty-key pairs, a ``#`` glued to ``{``/``[``/``,``, and the explicit
``!!timestamp``/``!!binary``/``!!set``/``!!omap`` tags (kept as plain values here).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillbook.base.js import json_stringify
from skillbook.pipeline.parse.skill_file import parse_skill_text

pytestmark = pytest.mark.oracle


def run_frontmatter(oracle: Any, texts: list[str]) -> list[dict[str, Any]]:
    """One batch of `frontmatter` requests to the oracle (the `oracle` fixture)."""
    requests = [{"op": "frontmatter", "text": t, "omitMeta": True} for t in texts]
    document = oracle.run(requests, timeout=600)
    results = document["results"]
    assert len(results) == len(texts)
    assert all(r["ok"] for r in results), [r.get("error") for r in results if not r["ok"]]
    return [r["result"] for r in results]


def ours(text: str) -> dict[str, Any]:
    parsed = parse_skill_text(text)
    meta = parsed.metadata
    return {
        "frontmatter": dict(parsed.frontmatter.values),
        # Through JSON.stringify so that numbers compare as JavaScript prints them.
        "metadata": json.loads(json_stringify(meta.to_json())) if meta is not None else None,
        "invocation": parsed.invocation.to_json(),
        "_known": _known_difference(text, parsed),
    }


def _known_difference(text: str, parsed: Any) -> str | None:
    if parsed.had_bom:
        return "bom"
    if parsed.metadata is not None and parsed.metadata.manifest_key != "openclaw":
        return "legacy-key"
    if any(d.code == "parse.yaml-too-deep" for d in parsed.diagnostics):
        return "too-deep"
    return None


def differences(label: str, mine: dict[str, Any], theirs: dict[str, Any]) -> list[str]:
    out: list[str] = []
    known = mine["_known"]
    for key in ("frontmatter", "metadata", "invocation"):
        a, b = mine[key], theirs.get(key)
        if known == "legacy-key" and key == "metadata" and b is None:
            continue
        if a != b:
            out.append(f"{label}: {key}\n  ours:   {a!r}\n  oracle: {b!r}")
    if not out and list(mine["frontmatter"]) != list(theirs.get("frontmatter", {})):
        out.append(f"{label}: frontmatter key order {list(mine['frontmatter'])}")
    if known in ("bom", "too-deep"):
        return []
    return out


@pytest.mark.corpus
def test_every_corpus_skill_matches_openclaw(oracle: Any, corpus_dir: Path) -> None:
    files = sorted(corpus_dir.rglob("SKILL.md"))
    texts = [f.read_bytes().decode("utf-8", errors="replace") for f in files]
    results = run_frontmatter(oracle, texts)
    diffs: list[str] = []
    for path, text, theirs in zip(files, texts, results, strict=True):
        diffs.extend(differences(str(path.relative_to(corpus_dir)), ours(text), theirs))
    print(f"compared {len(files)} corpus SKILL.md files with the oracle")
    assert len(files) > 0
    assert diffs == [], "\n".join(diffs)


def fm(block: str, body: str = "Body\n") -> str:
    return f"---\n{block}\n---\n{body}"


TRICKY: dict[str, str] = {
    # colons and quotes
    "colon-in-value": fm("name: x\ndescription: Use anime style IMPORTANT: Must be kawaii"),
    "colon-quoted": fm('name: x\ndescription: "a: b"'),
    "single-quote-escape": fm("name: 'it''s'\ndescription: 'd'"),
    "comment-after-value": fm("name: x # a comment\ndescription: d"),
    "url-value": fm("name: x\ndescription: see http://example.com:8080/a"),
    "quoted-padded": fm('name: "  padded  "\ndescription: "  d  "'),
    "mismatched-quotes": fm("name: \"x'\ndescription: 'd\""),
    "lone-quote": fm('name: "\ndescription: ok'),
    "key-trim": fm('"  name  ": x\ndescription: d'),
    "empty-values": fm("name:\ndescription: \"\"\nother: ''"),
    # block scalars
    "literal": fm("name: x\ndescription: |\n  line one\n  line two"),
    "literal-strip": fm("name: x\ndescription: |-\n  {json-like text}\nother: y"),
    "literal-keep-eof": fm("name: x\ndescription: |+\n  keep\n\n"),
    "literal-clip-eof": fm("name: x\ndescription: |\n  clip"),
    "folded": fm("name: x\ndescription: >\n  folded\n  text\n\n  para\nz: 1"),
    "folded-strip": fm("description: >-\n  a\n  b\nname: n"),
    "indent-indicator": fm("description: |2\n   indented\nname: n"),
    "block-after-blank": fm("description: |\n\n  after blank\nname: n"),
    "multiline-invalid-yaml": fm("name: x\ndescription:\n  first: line\n  second\nbad: a: b"),
    "plain-multiline": fm("name: x\ndescription: one\n  two\n  three"),
    # JSON one-liners and structured values
    "json-inline": fm('name: x\ndescription: d\nmetadata: {"openclaw": {"events": ["test"]}}'),
    "json5-flow": fm("name: x\ndescription: d\nmetadata: {openclaw: {emoji: x, always: true}}"),
    "flow-list": fm("name: x\ndescription: d\ntags: [a, b, 3]"),
    "flow-list-colon": fm('name: x\ndescription: d\ntags: ["a:b", c]'),
    "nested-map": fm("name: x\ndescription: d\nmetadata:\n  openclaw: true"),
    "nested-json5-block": fm(
        "name: x\ndescription: d\nmetadata:\n  {\n    openclaw: { emoji: 'disk', requires: { bins: ['a'] } },\n  }"
    ),
    "block-list": fm("name: x\ndescription: d\nitems:\n  - 1.0\n  - 1e3\n  - {a: b}\n  - null"),
    "metadata-block-scalar-json": fm(
        'name: x\ndescription: d\nmetadata: |\n  {"openclaw": {"os": ["linux"]}}'
    ),
    # numbers, booleans, nulls
    "numbers": fm(
        "name: x\ndescription: d\na: 1.0\nb: 1e3\nc: 0x10\nd: 0o17\ne: .inf\nf: -.Inf\ng: .nan\n"
        "h: 1e21\ni: 0.000001\nj: 1e-7\nk: -0\nl: +5\nm: 007\nn: 9007199254740993\n"
        "o: 0x1F\np: 1_000\nq: 0b101\nr: 1.\ns: .5\nt: -.5e3\nu: 123456789012345678901234567890"
    ),
    "nested-numbers": fm("name: x\ndescription: d\nlist: [1.0, 1e21, 1e-7, .inf, 0x10, -0]"),
    "booleans": fm(
        "name: x\ndescription: d\na: yes\nb: no\nc: on\nd: off\ne: True\nf: TRUE\ng: tRUE\n"
        "h: y\ni: false"
    ),
    "nulls": fm("name: x\ndescription: d\na: null\nb: Null\nc: NULL\nd: nULL\ne: ~\nf:"),
    "dates": fm("name: x\ndescription: d\ndate: 2024-01-01\nts: 2001-12-14t21:59:43.10-05:00"),
    # duplicate keys
    "dup-top": fm("name: x\ndescription: first\ndescription: second"),
    "dup-number": fm("name: x\ndescription: d\n1: a\n1.0: b"),
    "dup-bool": fm("name: x\ndescription: d\ntrue: a\nTrue: b"),
    "dup-nested": fm("name: x\ndescription: d\nm:\n  a: 1\n  a: 2"),
    "dup-quoted-vs-plain": fm('name: x\ndescription: d\n"1": a\n1: b'),
    "dup-null": fm("name: x\ndescription: d\n~: a\nnull: b"),
    # unicode and odd characters
    "unicode-keys": fm("name: x\ndescription: café ☕\n名前: 値\nemoji: 🎨"),
    "line-separator": fm("name: x\ndescription: a\u2028b\nother: c\u2029d"),
    "nel": fm("name: x\ndescription: a\x85b"),
    "control-char": fm("name: x\ndescription: bell\x07here"),
    "bom-in-value": fm("name: x\ndescription: \ufeffd\ufeff"),
    "nbsp-trim": fm("name: x\ndescription: \u00a0d\u3000"),
    "zero-width": fm("name: x\u200b\ndescription: d"),
    "tab-after-colon": fm("name:\tx\ndescription:\td"),
    "tab-indent": fm("name: x\ndescription: d\nm:\n\ta: 1"),
    # key order of JS objects
    "integer-keys": fm("name: x\ndescription: d\nb: 1\n2: two\n1: one\n01: zero-one"),
    "integer-keys-line": fm("name: x\ndescription: a: b\n10: ten\n2: two"),
    "proto-keys-yaml": fm("name: x\ndescription: d\n__proto__: p\nconstructor: c"),
    "proto-keys-line": fm("name: x\ndescription: a: b\n__proto__: p\nconstructor: c\ntoString: t"),
    "proto-only-in-lines": fm("name: x\ndescription: d\nm: |\n  x\nconstructor: c"),
    # aliases
    "alias-ok": fm("name: &n x\ndescription: *n\nlist: &l [1, 2]\nother: *l"),
    "merge-key": fm("name: x\ndescription: d\nbase: &b {a: 1}\nderived:\n  <<: *b\n  c: 2"),
    "alias-scalar-99": fm("name: x\ndescription: d\na: &a v\nl: [" + ", ".join(["*a"] * 99) + "]"),
    "alias-scalar-100": fm(
        "name: x\ndescription: d\na: &a v\nl: [" + ", ".join(["*a"] * 100) + "]"
    ),
    "billion-laughs": fm(
        "name: x\ndescription: d\n"
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
        + "".join(
            f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n"
            for p, c in zip("abcdefgh", "bcdefghi", strict=True)
        ).rstrip("\n")
    ),
    "undefined-alias": fm("name: x\ndescription: *nope"),
    "anchor-redefined": fm("name: &a x\ndescription: &a d\nother: *a"),
    # tags
    "tags": fm(
        "name: x\ndescription: d\na: !!str 123\nb: !foo bar\nc: ! 12\nd: !!int 7\ne: !!float 1.5"
    ),
    "complex-key": fm("name: x\ndescription: d\n? [a, b]\n: c\n[q]: r"),
    # document structure
    "document-end": fm("name: x\ndescription: d\n...\nmore: y"),
    "scalar-document": fm("just some text"),
    "list-document": fm("- a\n- b"),
    "comments-only": fm("# name: x\n# description: d"),
    "empty-block": "---\n---\nBody",
    "dash-dash-dash-dash": "----\nname: x\ndescription: d\n---\n",
    "opening-with-text": "---x\nname: y\ndescription: d\n---\n",
    "closing-with-text": "---\nname: x\ndescription: d\n---- trailing\nbody",
    "unterminated": "---\nname: x\ndescription: d\n",
    "no-frontmatter": "# Title\n\nname: x\n",
    "leading-space": " ---\nname: x\ndescription: d\n---\n",
    "crlf": "---\r\nname: x\r\ndescription: |\r\n  a\r\n  b\r\n---\r\nbody",
    "lone-cr": "---\rname: x\rdescription: d\r---\rbody",
    # invocation and dispatch fields
    "invocation-words": fm(
        'name: x\ndescription: d\nuser-invocable: "no"\ndisable-model-invocation: YES'
    ),
    "invocation-bools": fm(
        "name: x\ndescription: d\nuser-invocable: false\ndisable-model-invocation: 1"
    ),
    "invocation-padded": fm("name: x\ndescription: d\nuser-invocable: ' off '"),
    "invocation-underscore": fm("name: x\ndescription: d\nuser_invocable: no"),
    "invocation-maybe": fm("name: x\ndescription: d\nuser-invocable: maybe"),
}

_INSTALL_CASES: list[Any] = [
    {"kind": "brew", "formula": "python@3.12"},
    {"kind": "brew", "formula": "wget --HEAD"},
    {"kind": "brew", "cask": "firefox"},
    {"kind": "brew", "formula": "../evil"},
    {"kind": "brew", "formula": "-x"},
    {"kind": "brew", "formula": " ", "cask": "ok"},
    {"kind": "node", "package": "@scope/pkg@1.2.3"},
    {"kind": "node", "package": "file:../malicious"},
    {"kind": "node", "package": "pkg@latest"},
    {"kind": "node", "package": "pkg@^1.0.0"},
    {"kind": "node", "package": "Pkg"},
    {"kind": "node", "package": "pkg@v1.2.3-beta.1+build.5"},
    {"kind": "node", "package": "pkg@"},
    {"kind": "node", "package": "@scope/pkg"},
    {"kind": "node", "package": "pkg@1.2"},
    {"kind": "node", "package": "pkg@a/b"},
    {"kind": "go", "module": "example.com/tool/cmd@v1.2.3"},
    {"kind": "go", "module": "https://evil.example/mod"},
    {"kind": "uv", "package": "uvicorn[standard]==0.31.0"},
    {"kind": "uv", "package": "a b"},
    {"kind": "download", "url": "https://example.com/tool.tar.gz"},
    {"kind": "download", "url": "file:///tmp/payload.tgz"},
    {"kind": "download", "url": "HTTPS://Example.COM"},
    {"kind": "download", "url": "https://example.com:443/a/../b/./c"},
    {"kind": "download", "url": "http://example.com:80"},
    {"kind": "download", "url": "http://example.com:8080/x?q=a b"},
    {"kind": "download", "url": "https://例え.jp/パス?q=ü#frag ment"},
    {"kind": "download", "url": "http:example.com/x"},
    {"kind": "download", "url": "https://user:pa ss@host/"},
    {"kind": "download", "url": "https://user:pass@host/"},
    {"kind": "download", "url": "https://0x7f.1/"},
    {"kind": "download", "url": "https://[::1]:8080/"},
    {"kind": "download", "url": "https://host:99999/"},
    {"kind": "download", "url": "ftp://example.com/x"},
    {"kind": "download", "url": "https://example.com/a%2fb/%2e%2E/c"},
    {"kind": "download", "url": "https://example.com/{x}`y`"},
    {"kind": "download", "url": "https:\\\\example.com\\a\\b"},
    {"kind": "download", "url": "https://exa_mple.com/"},
    {"kind": "download", "url": "https://256.1.1.1/"},
    {"kind": "download", "url": "https://1.2.3/"},
    {
        "kind": "download",
        "url": "https://e.com/t.zip",
        "archive": "zip",
        "extract": True,
        "stripComponents": 1.0,
        "targetDir": "tools",
    },
    {"kind": "download", "url": "https://e.com/t.zip", "extract": "true", "stripComponents": "2"},
    {"type": " Brew ", "formula": "jq"},
    {"kind": "node", "type": "brew", "package": "x", "formula": "jq"},
    {"kind": "brew", "formula": "jq", "id": 5, "label": ["x"], "bins": [" ", ""]},
    {"kind": "brew", "formula": "jq", "id": "", "label": "", "bins": "a, b", "os": " linux , "},
    {"kind": "apt", "package": "x"},
    {"kind": "  ", "type": "brew", "formula": "jq"},
    "brew",
    None,
    ["kind", "brew"],
    {"kind": "uv", "package": "x", "module": "example.com/m", "formula": "f"},
]

TRICKY_METADATA: dict[str, str] = {
    "json5-comments": "{ // c\n openclaw: { emoji: 'a', }, /* x */ }",
    "invalid-json5": "{ openclaw: ",
    "number": "42",
    "array": '["openclaw"]',
    "no-manifest": '{"other": {}}',
    "openclaw-true": '{"openclaw": true}',
    "openclaw-array": '{"openclaw": []}',
    "openclaw-empty": '{"openclaw": {}}',
    "requires-list": '{"openclaw": {"requires": ["a"]}}',
    "requires-null-lists": (
        '{"openclaw": {"requires": {"bins": "bun, node", "config": null, "env": [" A ", 1, null]}}}'
    ),
    "typed-fields": (
        '{"openclaw": {"always": "true", "emoji": 1, "homepage": "h", "skillKey": " k ",'
        ' "primaryEnv": ["X"], "os": [" darwin ", ""]}}'
    ),
    "always-true": '{"openclaw": {"always": true, "os": "linux, darwin"}}',
    "install-not-list": '{"openclaw": {"install": {"kind": "brew", "formula": "jq"}}}',
    "install-all-dropped": '{"openclaw": {"install": [{"kind": "apt"}]}}',
    "install-cases": json.dumps({"openclaw": {"install": _INSTALL_CASES}}, ensure_ascii=False),
    "nan-infinity": '{"openclaw": {"install": [{"kind": "brew", "formula": "a", "stripComponents": NaN},'
    ' {"kind": "brew", "formula": "b", "stripComponents": -Infinity}]}}',
    "big-number": '{"openclaw": {"install": [{"kind": "brew", "formula": "a", "stripComponents": 1e400}]}}',
    "duplicate-json-keys": '{"openclaw": {"emoji": "a"}, "openclaw": {"emoji": "b"}}',
    "hex-json5": "{openclaw: {install: [{kind: 'brew', formula: 'a', stripComponents: 0x10}]}}",
}


def _metadata_text(value: str) -> str:
    # A block scalar keeps the JSON5 text verbatim whatever quotes it holds.
    indented = "\n".join("  " + line for line in value.split("\n"))
    return fm(f"name: x\ndescription: d\nmetadata: |\n{indented}")


def test_tricky_texts_match_openclaw(oracle: Any) -> None:
    cases = dict(TRICKY)
    cases.update({f"metadata/{k}": _metadata_text(v) for k, v in TRICKY_METADATA.items()})
    results = run_frontmatter(oracle, list(cases.values()))
    diffs: list[str] = []
    for (label, text), theirs in zip(cases.items(), results, strict=True):
        diffs.extend(differences(label, ours(text), theirs))
    assert diffs == [], "\n".join(diffs)


def test_huge_integers_print_like_javascript(oracle: Any) -> None:
    text = fm("name: x\ndescription: d\nn: 12345678901234567890\nm: 2e20")
    (theirs,) = run_frontmatter(oracle, [text])
    assert theirs["frontmatter"]["n"] == "12345678901234567000"
    assert ours(text)["frontmatter"] == theirs["frontmatter"]


def test_integers_beyond_a_double_are_infinity_as_in_javascript(oracle: Any) -> None:
    # Past Python's digit limit for int() (4,300) and past a double's range: OpenClaw
    # prints Infinity; they were a `parse.internal-error` here.
    big = "9" * 5000
    texts = [
        fm(f"name: x\ndescription: d\nn: {body}")
        for body in (
            big,
            f"-{big}",
            "0x" + "f" * 5000,
            "0o" + "7" * 5000,
            f"[{big}]",
            f"{{a: {big}}}",
        )
    ]
    for text, theirs in zip(texts, run_frontmatter(oracle, texts), strict=True):
        mine = ours(text)
        assert "parse.internal-error" not in [d.code for d in parse_skill_text(text).diagnostics]
        assert mine["frontmatter"] == theirs["frontmatter"]
        assert mine["metadata"] == theirs["metadata"]
