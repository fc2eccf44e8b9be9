"""Unit tests for skillbook.pipeline.parse.manifest (spec §2.5-2.6, §12 "Frontmatter")."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillbook.base.js import js_string, js_trim
from skillbook.diagnostics import Severity
from skillbook.model import InstallSpec, Requires, SkillMetadata
from skillbook.pipeline.parse.manifest import (
    normalize_string_list,
    parse_install_spec,
    resolve_metadata,
)
from skillbook.pipeline.parse.url import normalize_http_url


def meta(raw: str, **kw: Any) -> SkillMetadata | None:
    return resolve_metadata({"metadata": raw}, {}, **kw)[0]


def meta_codes(raw: str) -> list[str]:
    return [d.code for d in resolve_metadata({"metadata": raw}, {})[1]]


# --- §12 checklist -----------------------------------------------------------------


def test_checklist_normalize_string_list() -> None:
    """§12: normalizeStringList("a, b,,c") → [a,b,c]; [" a ","","b",42] → [a,b,42]; null → []."""
    assert normalize_string_list("a, b,,c") == ["a", "b", "c"]
    assert normalize_string_list([" a ", "", "b", 42]) == ["a", "b", "42"]
    assert normalize_string_list(None) == []
    # JavaScript String(): null → "null", nested lists joined, objects opaque.
    assert normalize_string_list([None, [1, [2, 3]], {"a": 1}, True, 1.0]) == [
        "null",
        "1,2,3",
        "[object Object]",
        "true",
        "1",
    ]
    assert normalize_string_list(42) == []


def test_checklist_manifest_accepts_json5_and_custom_key_names() -> None:
    """§12: manifest block accepts JSON5 (`{ openclaw: { foo: 1, bar: 'baz' } }`) and custom keys."""
    m = meta("{ openclaw: { foo: 1, bar: 'baz' } }")
    assert m is not None
    assert dict(m.raw) == {"foo": 1, "bar": "baz"}
    assert m.to_json() == {}
    custom = resolve_metadata({"manifest": "{openclaw: {emoji: 'x'}}"}, {}, key="manifest")[0]
    assert custom is not None
    assert custom.emoji == "x"


@pytest.mark.parametrize("raw", ["{ openclaw: ", "42", '["openclaw"]', '{"other": {}}', ""])
def test_checklist_invalid_number_array_or_missing_manifest_is_undefined(raw: str) -> None:
    """§12: invalid JSON5, numbers, arrays, or missing `openclaw` → undefined."""
    assert meta(raw) is None


def test_checklist_requires_lists_are_normalised() -> None:
    """§12: `bins: "bun, node"` → ["bun","node"], `config: null` → []; missing requires → undefined."""
    m = meta('{"openclaw": {"requires": {"bins": "bun, node", "config": null}}}')
    assert m is not None
    assert m.requires == Requires(bins=("bun", "node"))
    assert m.requires.to_json() == {"bins": ["bun", "node"], "anyBins": [], "env": [], "config": []}
    m = meta('{"openclaw": {"emoji": "x"}}')
    assert m is not None
    assert m.requires is None


def test_checklist_os_is_trimmed_and_blanks_dropped() -> None:
    """§12: `os` trimmed, blanks dropped (and omitted when empty)."""
    m = meta('{"openclaw": {"os": [" darwin ", "", "linux"]}}')
    assert m is not None
    assert m.os == ("darwin", "linux")
    m = meta('{"openclaw": {"os": [" ", ""]}}')
    assert m is not None
    assert m.os is None


def test_checklist_install_base_fields() -> None:
    """§12: `type: " Brew "` → brew; kind over type; non-string id/label ignored; blank bins dropped."""
    assert parse_install_spec({"type": " Brew ", "formula": "jq"}) == InstallSpec(
        kind="brew", formula="jq"
    )
    spec = parse_install_spec({"kind": "node", "type": "brew", "package": "x", "formula": "jq"})
    assert spec is not None
    assert spec.kind == "node"
    spec = parse_install_spec(
        {"kind": "brew", "formula": "jq", "id": 5, "label": ["x"], "bins": [" ", ""]}
    )
    assert spec == InstallSpec(kind="brew", formula="jq")
    assert parse_install_spec({"kind": "apt", "package": "x"}) is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"kind": "brew", "formula": "python@3.12"}, {"kind": "brew", "formula": "python@3.12"}),
        (
            {"kind": "node", "package": "@scope/pkg@1.2.3"},
            {"kind": "node", "package": "@scope/pkg@1.2.3"},
        ),
        (
            {"kind": "go", "module": "example.com/tool/cmd@v1.2.3"},
            {"kind": "go", "module": "example.com/tool/cmd@v1.2.3"},
        ),
        (
            {"kind": "uv", "package": "uvicorn[standard]==0.31.0"},
            {"kind": "uv", "package": "uvicorn[standard]==0.31.0"},
        ),
        (
            {"kind": "download", "url": "https://example.com/tool.tar.gz"},
            {"kind": "download", "url": "https://example.com/tool.tar.gz"},
        ),
    ],
)
def test_checklist_safe_install_specs_are_accepted(raw: dict[str, Any], expected: Any) -> None:
    """§12: safe install specs accepted (output holds only `kind` and the one field)."""
    spec = parse_install_spec(raw)
    assert spec is not None
    assert spec.to_json() == expected


@pytest.mark.parametrize(
    "raw",
    [
        {"kind": "brew", "formula": "wget --HEAD"},
        {"kind": "node", "package": "file:../malicious"},
        {"kind": "go", "module": "https://evil.example/mod"},
        {"kind": "download", "url": "file:///tmp/payload.tgz"},
    ],
)
def test_checklist_unsafe_install_specs_are_dropped(raw: dict[str, Any]) -> None:
    """§12: unsafe brew/node/go/download values dropped (all 4 cases)."""
    assert parse_install_spec(raw) is None


# --- field typing (§2.5) -------------------------------------------------------------


def test_field_types_follow_openclaw() -> None:
    m, diags = resolve_metadata(
        {
            "metadata": '{"openclaw": {"always": "true", "emoji": 1, "homepage": "h",'
            ' "skillKey": " k ", "primaryEnv": ["X"]}}'
        },
        {},
        lines={"metadata": 7},
    )
    assert m is not None
    assert (m.always, m.emoji, m.homepage, m.skill_key, m.primary_env) == (
        None,
        None,
        "h",
        " k ",  # not trimmed at parse time
        None,
    )
    assert [d.code for d in diags] == ["parse.field-type"] * 3
    assert all(d.line == 7 for d in diags)
    m = meta('{"openclaw": {"always": true}}')
    assert m is not None
    assert m.always is True


@pytest.mark.parametrize(
    ("manifest", "field"),
    [
        ('{"requires": "git"}', "requires"),
        ('{"requires": {"bins": 5}}', "requires.bins"),
        ('{"requires": {"anyBins": {"a": 1}}}', "requires.anyBins"),
        ('{"requires": {"env": true}}', "requires.env"),
        ('{"requires": {"config": 0}}', "requires.config"),
        ('{"os": 7}', "os"),
        ('{"install": {"kind": "brew", "formula": "jq"}}', "install"),
        ('{"install": "brew install jq"}', "install"),
    ],
)
def test_a_gate_of_the_wrong_type_is_ignored_with_a_diagnostic(manifest: str, field: str) -> None:
    """OpenClaw ignores these (the skill looks ready, or has no installer); they were
    ignored without a word (found by the crash hunt)."""
    m, diags = resolve_metadata(
        {"metadata": f'{{"openclaw": {manifest}}}'}, {}, lines={"metadata": 3}
    )
    assert m is not None
    assert (m.requires or Requires()) == Requires() and m.os is None and m.install is None
    assert [(d.code, d.severity, d.line) for d in diags] == [
        ("parse.field-type", Severity.WARNING, 3)
    ]
    assert f"`metadata.openclaw.{field}` must be" in diags[0].message


def test_string_lists_and_arrays_for_an_object_are_not_reported() -> None:
    # OpenClaw reads a comma-separated string as a list, and an array as an empty object.
    raw = '{"openclaw": {"requires": {"bins": "git, jq", "env": []}, "os": "linux"}}'
    m, diags = resolve_metadata({"metadata": raw}, {})
    assert m is not None and m.requires is not None
    assert (m.requires.bins, m.os, diags) == (("git", "jq"), ("linux",), ())
    assert meta_codes('{"openclaw": {"requires": ["a"]}}') == []


def test_manifest_array_counts_as_an_object() -> None:
    # JavaScript: `[]` is a truthy object, so the manifest exists but has no fields.
    m = meta('{"openclaw": []}')
    assert m is not None
    assert m.to_json() == {}
    m = meta('{"openclaw": {"requires": ["a"]}}')
    assert m is not None
    assert m.requires == Requires()


def test_install_list_rules_and_dropped_diagnostics() -> None:
    raw = (
        '{"openclaw": {"install": [{"kind": "apt"}, "brew", {"kind": "brew", "formula": "jq"},'
        ' {"kind": "node", "package": "a b"}]}}'
    )
    m, diags = resolve_metadata({"metadata": raw}, {}, lines={"metadata": 4})
    assert m is not None
    assert m.install == (InstallSpec(kind="brew", formula="jq"),)
    messages = [d.message for d in diags]
    assert [d.code for d in diags] == ["parse.install-dropped"] * 3
    assert all(d.severity is Severity.WARNING and d.line == 4 for d in diags)
    assert "install[0]" in messages[0] and "'apt'" in messages[0]
    assert "install[1]" in messages[1] and "object" in messages[1]
    assert "install[3]" in messages[2] and "package" in messages[2]
    assert meta('{"openclaw": {"install": [{"kind": "apt"}]}}').install is None  # type: ignore[union-attr]
    assert meta('{"openclaw": {"install": {"kind": "brew", "formula": "jq"}}}').install is None  # type: ignore[union-attr]


def test_metadata_diagnostics() -> None:
    _, diags = resolve_metadata({"metadata": "{ openclaw: "}, {}, lines={"metadata": 5})
    assert [(d.code, d.severity, d.line) for d in diags] == [
        ("parse.metadata-invalid", Severity.WARNING, 5)
    ]
    assert meta_codes("42") == ["parse.metadata-invalid"]
    assert meta_codes('{"other": 1}') == ["parse.metadata-no-manifest"]
    assert meta_codes('{"openclaw": true}') == ["parse.metadata-no-manifest"]
    assert resolve_metadata({}, {}) == (None, ())


def test_legacy_manifest_keys_are_read_and_flagged() -> None:
    m, diags = resolve_metadata({"metadata": '{"clawdbot": {"emoji": "c"}}'}, {})
    assert m is not None
    assert (m.manifest_key, m.emoji) == ("clawdbot", "c")
    assert [(d.code, d.severity) for d in diags] == [("parse.metadata-legacy-key", Severity.INFO)]
    m = meta('{"moltbot": {"emoji": "m"}, "openclaw": {"emoji": "o"}}')
    assert m is not None
    assert (m.manifest_key, m.emoji) == ("openclaw", "o")


def test_raw_keeps_the_manifest_as_parsed() -> None:
    m = meta('{"openclaw": {"custom": {"deep": [1, {"x": null}]}, "emoji": "e"}}')
    assert m is not None
    assert m.raw["custom"] == {"deep": [1, {"x": None}]}


def test_json_fast_path_and_json5_agree() -> None:
    plain = meta('{"openclaw": {"emoji": "x", "os": ["linux"]}}')
    five = meta("{openclaw: {emoji: 'x', os: ['linux',],},}")
    assert plain == five


# --- install spec validation (§2.6) ---------------------------------------------------


@pytest.mark.parametrize(
    ("package", "ok"),
    [
        ("pkg", True),
        ("@scope/pkg", True),
        ("pkg@latest", True),
        ("pkg@v1.2.3-beta.1+build.5", True),
        ("pkg@1.2.3", True),
        ("pkg@^1.0.0", False),
        ("pkg@1.2", True),  # a dist-tag, oddly: `1.2` matches the tag pattern
        ("pkg@", False),
        ("pkg@a/b", False),
        ("Pkg", False),
        ("-pkg", False),
        ("pkg name", False),
        ("git+https://x/y", False),
        ("pkg#main", False),
        ("npm:pkg", False),
        ("@scope", False),
        (" pkg ", True),
    ],
)
def test_npm_registry_specs(package: str, ok: bool) -> None:
    spec = parse_install_spec({"kind": "node", "package": package})
    assert (spec is not None) is ok
    if spec is not None:
        assert spec.package == package.strip()


@pytest.mark.parametrize(
    ("formula", "ok"),
    [
        ("jq", True),
        ("steipete/tap/x", True),
        ("a..b", False),
        ("a\\b", False),
        ("-x", False),
        ("", False),
    ],
)
def test_brew_formulas(formula: str, ok: bool) -> None:
    assert (parse_install_spec({"kind": "brew", "formula": formula}) is not None) is ok


def test_cask_is_used_only_without_a_valid_formula() -> None:
    spec = parse_install_spec({"kind": "brew", "formula": " ", "cask": "firefox"})
    assert spec is not None
    assert spec.formula == "firefox"


def test_uv_and_go_rules() -> None:
    assert parse_install_spec({"kind": "uv", "package": "a b"}) is None
    assert parse_install_spec({"kind": "uv", "package": "https://x"}) is None
    assert parse_install_spec({"kind": "go", "module": "example.com/x\\y"}) is None
    # Fields of other kinds are still validated and kept (as OpenClaw does).
    spec = parse_install_spec(
        {"kind": "uv", "package": "x", "module": "example.com/m", "formula": "f"}
    )
    assert spec is not None
    assert spec.to_json() == {
        "kind": "uv",
        "formula": "f",
        "package": "x",
        "module": "example.com/m",
    }


def test_download_extras() -> None:
    spec = parse_install_spec(
        {
            "kind": "download",
            "url": "https://e.com/t.zip",
            "archive": "zip",
            "extract": True,
            "stripComponents": 1.0,
            "targetDir": "tools",
            "id": "",
        }
    )
    assert spec is not None
    assert spec.to_json() == {
        "kind": "download",
        "url": "https://e.com/t.zip",
        "archive": "zip",
        "extract": True,
        "stripComponents": 1,
        "targetDir": "tools",
    }
    spec = parse_install_spec(
        {"kind": "download", "url": "https://e.com/t", "extract": "true", "stripComponents": "2"}
    )
    assert spec is not None
    assert (spec.extract, spec.strip_components) == (None, None)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.com", "https://example.com/"),
        ("HTTPS://Example.COM", "https://example.com/"),
        ("https://example.com:443/a/../b/./c", "https://example.com/b/c"),
        ("http://example.com:80", "http://example.com/"),
        ("http://example.com:8080/x?q=1#f", "http://example.com:8080/x?q=1#f"),
        ("http:example.com/x", "http://example.com/x"),
        ("https://user:pass@host/", "https://user:pass@host/"),
        ("https://0x7f.1/", "https://127.0.0.1/"),
        ("https://[::1]:8080/", "https://[::1]:8080/"),
        ("https://example.com/{x}`y`", "https://example.com/%7Bx%7D%60y%60"),
        ("https:\\\\example.com\\a\\b", "https://example.com/a/b"),
        ("https://例え.jp/パス", "https://xn--r8jz45g.jp/%E3%83%91%E3%82%B9"),
        ("https://example.com/a/..", "https://example.com/"),
        ("https://host:99999/", None),
        ("https://256.1.1.1/", None),
        ("ftp://example.com/x", None),
        ("file:///tmp/payload.tgz", None),
        ("//example.com", None),
        ("https://", None),
    ],
)
def test_url_normalisation_like_whatwg(url: str, expected: str | None) -> None:
    assert normalize_http_url(url) == expected


def test_url_with_whitespace_is_dropped() -> None:
    assert parse_install_spec({"kind": "download", "url": "https://e.com/a b"}) is None
    assert parse_install_spec({"kind": "download", "url": " https://e.com/ "}) is not None


def test_js_trim() -> None:
    assert js_trim("\ufeff\u00a0 x \u3000\n") == "x"
    assert js_trim("\x1cx\x85") == "\x1cx\x85"  # Python's strip() would remove these


# --- install specs: each field checked only when present (issue 22) ----------------------

_SPEC_KEYS = st.sampled_from(
    [
        "kind",
        "type",
        "id",
        "label",
        "bins",
        "os",
        "formula",
        "cask",
        "package",
        "module",
        "url",
        "archive",
        "extract",
        "stripComponents",
        "targetDir",
        "sha256",
        "other",
    ]
)
_SPEC_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([2.0, 1.5, float("nan")]),
    st.sampled_from(
        [
            "brew",
            "node",
            "go",
            "uv",
            "download",
            " Node ",
            "apt",
            "",
            " ",
            "jq",
            "-x",
            "a/b",
            "@scope/pkg",
            "pkg@1.2.3",
            "pkg@latest",
            "github.com/a/b@v1",
            "https://x.io/a.tgz",
            "http://x.io/a b",
            "ftp://x",
            "a..b",
            "tar.gz",
            "ab" * 32,
            "AB" * 32,
            "a,b",
        ]
    ),
    st.lists(st.sampled_from(["jq", " ", "linux", 3, None]), max_size=3),
)


def _reference_install_spec(raw: Any, *, sha256: bool = False) -> tuple[Any, str]:
    """The install-spec reading as it was before issue 22: every field looked up."""
    from skillbook.pipeline.parse import manifest as m

    if not isinstance(raw, dict):
        return None, "an install spec must be an object"
    kind = m._install_kind(raw)
    if kind not in m.INSTALL_KINDS:
        return None, f"unknown kind {kind!r} (use one of {', '.join(m.INSTALL_KINDS)})"
    digest: str | None = None
    if sha256 and kind == "download" and "sha256" in raw:
        value = raw["sha256"]
        digest = js_trim(value).lower() if isinstance(value, str) else None
        if digest is None or not m._SHA256.fullmatch(digest):
            return None, f"`sha256` {js_string(value)!r} is not 64 hexadecimal digits"
    spec_id, label, archive, extract, target_dir = m._optional_fields(raw)
    spec = InstallSpec(
        kind=kind,
        id=spec_id,
        label=label,
        bins=m._string_tuple(raw.get("bins")),
        os=m._string_tuple(raw.get("os")),
        formula=m._safe_brew(raw.get("formula")) or m._safe_brew(raw.get("cask")),
        package=m._PACKAGE_CHECKS[kind](raw.get("package")) if kind in m._PACKAGE_CHECKS else None,
        module=m._safe_go(raw.get("module")),
        url=m._safe_url(raw.get("url")),
        archive=archive,
        extract=extract,
        strip_components=m._js_number_value(raw.get("stripComponents")),
        target_dir=target_dir,
        sha256=digest,
        declared_sha256=None if sha256 else m._kept_sha256(raw),
    )
    field_name = m._REQUIRED_FIELD.get(kind, "url")
    if getattr(spec, field_name) is None:
        given_value = raw.get(
            "cask" if field_name == "formula" and "formula" not in raw else field_name
        )
        if given_value is None:
            return None, f"a `{kind}` spec needs `{field_name}`"
        return None, (
            f"unsafe or invalid `{field_name}` {js_string(given_value)!r} for kind `{kind}`"
        )
    return spec, ""


@settings(max_examples=1500, deadline=None)
@given(raw=st.dictionaries(_SPEC_KEYS, _SPEC_VALUES, max_size=8), sha256=st.booleans())
def test_install_spec_reads_as_with_every_field_looked_up(
    raw: dict[str, Any], sha256: bool
) -> None:
    from skillbook.pipeline.parse import manifest as m

    got, want = m._install_spec(raw, sha256=sha256), _reference_install_spec(raw, sha256=sha256)
    assert repr(got) == repr(want)
