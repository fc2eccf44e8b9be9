"""Spec modes and validation (agent-skills.md §1.2, §2.4, §2.5, §5; landscape: spec modes).

Each strict rule is checked with its ``validate.*`` code, on folder and file paths;
the lenient modes (openclaw, mixed, legacy) and OpenPocket's legacy name and
description rules are checked too.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from factories import skill_text, write_file, write_skill

from skillbook.config.mode import Mode
from skillbook.diagnostics import CODES, Severity
from skillbook.model import Skill
from skillbook.pipeline.parse.skill_file import parse_skill_text
from skillbook.pipeline.validation.strict_rules import strict_problems
from skillbook.pipeline.validation.validate import (
    MODES,
    ValidationResult,
    legacy_name_description,
    legacy_triggers,
    passes_strict,
    validate_many,
    validate_path,
)

#: A description strict mode accepts.
GOOD = "Does a thing. Use when asked."


def errors(result: ValidationResult) -> list[str]:
    return [d.code for d in result.diagnostics if d.severity is Severity.ERROR]


def warnings(result: ValidationResult) -> list[str]:
    return [d.code for d in result.diagnostics if d.severity is Severity.WARNING]


# ---------------------------------------------------------------- strict: the happy path


def test_all_six_fields_pass_strict(tmp_path: Path) -> None:
    """§1.2: the six spec fields, block metadata of strings, folder == name."""
    extra = (
        "license: Apache-2.0\ncompatibility: Requires git\nallowed-tools: Bash(git:*) Read\n"
        'metadata:\n  author: me\n  version: "1.2.3"\n'
    )
    folder = write_skill(tmp_path / "pdf-tools", description=GOOD, raw=extra)
    for target in (folder, folder / "SKILL.md"):
        result = validate_path(target, mode="strict")
        assert result.ok, [d.format() for d in result.diagnostics]
        assert result.diagnostics == ()
        assert result.name == "pdf-tools"
        assert result.path == target


def test_default_mode_is_strict(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "demo", description=GOOD, raw="homepage: https://x\n")
    assert errors(validate_path(folder)) == ["validate.unknown-field"]


def test_modes_tuple() -> None:
    assert MODES == ("openclaw", "mixed", "legacy", "strict")


def test_every_emitted_code_is_registered() -> None:
    for code in ("validate.skill-file", "validate.path", "validate.yaml-style"):
        assert code in CODES


# ---------------------------------------------------------------- strict: name


@pytest.mark.parametrize(
    "name",
    ["Bad_Name", "-lead", "trail-", "two--dashes", "UPPER", "a" * 65, "café", "技能", "x.y", "a b"],
)
def test_name_rules(tmp_path: Path, name: str) -> None:
    """§1.2 name: 1-64 of a-z 0-9 -, no edge or double hyphen; ASCII only (stricter than skills-ref)."""
    folder = write_skill(tmp_path / "folder", text=skill_text(f'"{name}"', GOOD))
    result = validate_path(folder, mode="strict")
    assert errors(result) and set(errors(result)) == {"validate.name-invalid"}
    assert all(d.line == 2 for d in result.diagnostics)


def test_name_64_chars_is_fine(tmp_path: Path) -> None:
    name = "a" * 64
    assert validate_path(write_skill(tmp_path / name, description=GOOD), mode="strict").ok


def test_name_missing_empty_and_not_a_string(tmp_path: Path) -> None:
    text = "---\ndescription: x\n---\n"
    assert errors(validate_path(write_skill(tmp_path / "a", text=text), mode="strict")) == [
        "validate.name-invalid"
    ]
    empty = "---\nname: ''\ndescription: x\n---\n"
    assert errors(validate_path(write_skill(tmp_path / "b", text=empty), mode="strict")) == [
        "validate.name-invalid"
    ]
    number = "---\nname: 123\ndescription: x\n---\n"
    assert errors(validate_path(write_skill(tmp_path / "123", text=number), mode="strict")) == [
        "validate.field-type"
    ]


def test_name_must_equal_folder(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "dir-a", "other-name", GOOD)
    result = validate_path(folder / "SKILL.md", mode="strict")
    assert errors(result) == ["validate.name-mismatch"]
    assert "dir-a" in result.diagnostics[0].message


def test_name_is_trimmed_like_skills_ref(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "demo", text=skill_text("' demo '", GOOD))
    assert validate_path(folder, mode="strict").ok


# ---------------------------------------------------------------- strict: description


def test_description_length(tmp_path: Path) -> None:
    ok = write_skill(tmp_path / "ok", text="---\nname: ok\ndescription: " + "d" * 1024 + "\n---\n")
    assert validate_path(ok, mode="strict").ok
    long = write_skill(
        tmp_path / "long", text="---\nname: long\ndescription: " + "d" * 1025 + "\n---\n"
    )
    result = validate_path(long, mode="strict")
    assert errors(result) == ["validate.description-length"]
    assert "1025" in result.diagnostics[0].message
    empty = write_skill(tmp_path / "empty", text="---\nname: empty\ndescription: '  '\n---\n")
    assert errors(validate_path(empty, mode="strict")) == ["validate.description-length"]
    missing = write_skill(tmp_path / "missing", text="---\nname: missing\n---\n")
    assert errors(validate_path(missing, mode="strict")) == ["validate.description-length"]


def test_description_length_counts_the_trailing_newline_of_a_block(tmp_path: Path) -> None:
    """skills-ref measures the unstripped value: `|` keeps a final newline (1024 + 1)."""
    text = "---\nname: blk\ndescription: |\n  " + "d" * 1024 + "\n---\n"
    assert errors(validate_path(write_skill(tmp_path / "blk", text=text), mode="strict")) == [
        "validate.description-length"
    ]


def test_description_with_triple_dash(tmp_path: Path) -> None:
    """§2.4: skills-ref splits on `---` anywhere and would cut `Convert em---dashes`."""
    text = "---\nname: em\ndescription: Convert em---dashes in Markdown files.\n---\n"
    result = validate_path(write_skill(tmp_path / "em", text=text), mode="strict")
    assert errors(result) == ["validate.description-length"]
    assert result.diagnostics[0].line == 3
    escaped = '---\nname: esc\ndescription: "a\\x2d-- b"\n---\n'
    assert errors(validate_path(write_skill(tmp_path / "esc", text=escaped), mode="strict")) == [
        "validate.description-length"
    ]


def test_triple_dash_elsewhere_in_frontmatter(tmp_path: Path) -> None:
    text = "---\nname: tri\ndescription: x\nlicense: MIT---GPL\n---\n"
    assert errors(validate_path(write_skill(tmp_path / "tri", text=text), mode="strict")) == [
        "validate.frontmatter"
    ]


def test_description_must_be_a_string(tmp_path: Path) -> None:
    text = "---\nname: t\ndescription: true\n---\n"
    assert errors(validate_path(write_skill(tmp_path / "t", text=text), mode="strict")) == [
        "validate.field-type"
    ]


# ---------------------------------------------------------------- strict: other fields


def test_compatibility(tmp_path: Path) -> None:
    assert validate_path(
        write_skill(tmp_path / "c1", description=GOOD, raw="compatibility: " + "c" * 500 + "\n")
    ).ok
    for i, extra in enumerate(
        ["compatibility: " + "c" * 501, "compatibility: ''", "compatibility: 3"]
    ):
        result = validate_path(
            write_skill(tmp_path / f"c{i + 2}", description=GOOD, raw=extra + "\n"), mode="strict"
        )
        assert errors(result) == ["validate.compatibility-length"], extra


@pytest.mark.parametrize(
    "extra",
    [
        "version: 1.0.0",
        "homepage: https://x",
        "user-invocable: false",
        "disable-model-invocation: true",
    ],
)
def test_unknown_fields(tmp_path: Path, extra: str) -> None:
    """§2.5: only the six fields; top-level `version` too (skills-ref rejects it)."""
    result = validate_path(
        write_skill(tmp_path / "u", description=GOOD, raw=extra + "\n"), mode="strict"
    )
    assert errors(result) == ["validate.unknown-field"]
    assert result.diagnostics[0].line == 4
    assert extra.split(":")[0] in result.diagnostics[0].message


def test_top_level_version_hint(tmp_path: Path) -> None:
    result = validate_path(
        write_skill(tmp_path / "v", description=GOOD, raw="version: 1.0.0\n"), mode="strict"
    )
    assert "metadata.version" in result.diagnostics[0].message


def test_quoted_key_with_spaces_is_unknown(tmp_path: Path) -> None:
    """The parser trims keys; skills-ref does not, so `'name '` is an unknown field."""
    text = "---\nname: q\n'name ': q\ndescription: x\n---\n"
    assert "validate.unknown-field" in errors(validate_path(write_skill(tmp_path / "q", text=text)))


def test_field_types(tmp_path: Path) -> None:
    cases = {
        "tools-list": "allowed-tools:\n  - Read\n",
        "license-null": "license:\n",
        "meta-text": "metadata: text\n",
        "meta-list": "metadata:\n  - a\n",
    }
    for folder, extra in cases.items():
        result = validate_path(
            write_skill(tmp_path / folder, description=GOOD, raw=extra), mode="strict"
        )
        assert errors(result) == ["validate.field-type"], folder


def test_nested_metadata_is_a_warning(tmp_path: Path) -> None:
    """Spec: metadata is string→string; skills-ref accepts nested values, so only a warning."""
    extra = "metadata:\n  openclaw:\n    requires:\n      bins:\n        - curl\n  n: 3\n"
    result = validate_path(
        write_skill(tmp_path / "nest", description=GOOD, raw=extra), mode="strict"
    )
    assert result.ok
    assert warnings(result) == ["validate.field-type", "validate.field-type"]


def test_metadata_version_semver(tmp_path: Path) -> None:
    good = validate_path(
        write_skill(
            tmp_path / "v1", description=GOOD, raw='metadata:\n  version: "2.0.0-rc.1+b5"\n'
        )
    )
    assert good.ok and good.diagnostics == ()
    bad = validate_path(
        write_skill(tmp_path / "v2", description=GOOD, raw='metadata:\n  version: "1.0"\n')
    )
    assert bad.ok and warnings(bad) == ["validate.version"]


# ---------------------------------------------------------------- strict: YAML style


@pytest.mark.parametrize(
    ("extra", "line"),
    [
        ('metadata: { "openclaw": { "requires": { "bins": ["curl"] } } }\n', 4),
        ("metadata:\n  bins: [curl]\n", 5),
        ("license: !!str MIT\n", 4),
        ("license: &l MIT\ncompatibility: *l\n", 4),
        ("metadata:\n  a:\n    x: '1'\n  b:\n      y: '2'\n", 8),
        ("metadata:\n  <<: x\n", 5),
        ("license: a\u2028b\n", 4),
    ],
)
def test_yaml_style(tmp_path: Path, extra: str, line: int) -> None:
    """§2.4: strictyaml refuses flow style, tags, anchors, aliases and mixed indents."""
    result = validate_path(write_skill(tmp_path / "y", description=GOOD, raw=extra), mode="strict")
    style = [d for d in result.diagnostics if d.code == "validate.yaml-style"]
    assert style and not result.ok
    assert style[0].line == line


def test_one_line_json_metadata_reports_once_per_line(tmp_path: Path) -> None:
    extra = 'metadata: {"openclaw": {"requires": {"bins": ["a"], "env": ["B"]}}}\n'
    result = validate_path(write_skill(tmp_path / "j", description=GOOD, raw=extra), mode="strict")
    assert [d.code for d in result.diagnostics].count("validate.yaml-style") == 1


# ---------------------------------------------------------------- strict: the block


@pytest.mark.parametrize(
    ("label", "raw"),
    [
        ("missing", b"# No frontmatter\n"),
        ("unclosed", b"---\nname: f\ndescription: x\n"),
        ("opening", b"--- \nname: f\ndescription: x\n---\n"),
        ("bom", b"\xef\xbb\xbf---\nname: f\ndescription: x\n---\n"),
        ("utf8", b"---\nname: f\ndescription: caf\xe9\n---\n"),
        ("yaml", b"---\nname: f\ndescription: Use it: now\n---\n"),
        ("not-mapping", b"---\n- a\n- b\n---\n"),
        ("empty", b"---\n---\n"),
        ("duplicate", b"---\nname: f\nname: f\ndescription: x\n---\n"),
    ],
)
def test_frontmatter_block(tmp_path: Path, label: str, raw: bytes) -> None:
    """Strict needs YAML that parses; the line-parser fallback is not enough."""
    result = validate_path(write_skill(tmp_path / "f", text=raw), mode="strict")
    assert "validate.frontmatter" in errors(result), label


def test_crlf_is_fine(tmp_path: Path) -> None:
    raw = b"---\r\nname: crlf\r\ndescription: x\r\n---\r\nBody\r\n"
    assert validate_path(write_skill(tmp_path / "crlf", text=raw), mode="strict").ok


# ---------------------------------------------------------------- paths


def test_skill_md_missing_and_lowercase(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert errors(validate_path(empty)) == ["validate.skill-file"]
    lower = write_file(tmp_path / "lower" / "skill.md", skill_text("lower", GOOD)).parent
    strict_modes = (Mode.STRICT, Mode.OPENCLAW)
    for mode in strict_modes:
        assert errors(validate_path(lower, mode=mode)) == ["validate.skill-file"], mode
    lenient_modes = (Mode.MIXED, Mode.LEGACY)
    for mode in lenient_modes:
        result = validate_path(lower, mode=mode)
        assert result.ok and warnings(result) == ["validate.skill-file"], mode


def test_bad_paths(tmp_path: Path) -> None:
    assert errors(validate_path(tmp_path / "nope")) == ["validate.path"]
    (tmp_path / "notes.txt").write_text("x")
    assert errors(validate_path(tmp_path / "notes.txt", mode="mixed")) == ["validate.path"]


def test_standalone_markdown_by_mode(tmp_path: Path) -> None:
    """Standalone `.md` skills: accepted in mixed/legacy, refused in openclaw/strict."""
    path = tmp_path / "helper.md"
    path.write_text("---\nname: helper\ndescription: Helps.\n---\nBody\n")
    assert validate_path(path, mode="mixed").ok
    assert validate_path(path, mode="legacy").ok
    assert errors(validate_path(path, mode="openclaw")) == ["validate.skill-file"]
    assert "validate.skill-file" in errors(validate_path(path, mode="strict"))


def test_symlinked_skill_md_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real.md"
    real.write_text(skill_text("ln", GOOD))
    (tmp_path / "ln").mkdir()
    (tmp_path / "ln" / "SKILL.md").symlink_to(real)
    assert "discover.symlinked-skill-md" in errors(validate_path(tmp_path / "ln", mode="openclaw"))


def test_validate_many_expands_folders_of_skills(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root / "alpha", description=GOOD)
    write_skill(root / "beta", description=GOOD, raw="homepage: x\n")
    (root / ".hidden").mkdir()
    write_skill(root / ".hidden" / "gamma", description=GOOD)
    (root / "node_modules").mkdir()
    write_skill(root / "node_modules" / "delta", description=GOOD)
    (root / "notes").mkdir()
    results = validate_many([root, tmp_path / "missing"], "strict")
    assert [r.name for r in results] == ["alpha", "beta", None]
    assert [r.ok for r in results] == [True, False, False]


def test_to_json_shape(tmp_path: Path) -> None:
    result = validate_path(write_skill(tmp_path / "js", description=GOOD, raw="homepage: x\n"))
    data = result.to_json()
    assert list(data) == ["path", "name", "ok", "diagnostics", "passesIn"]
    assert data["ok"] is False and data["name"] == "js"
    assert data["passesIn"] == []  # validate_path alone does not try the other modes
    assert data["diagnostics"][0]["code"] == "validate.unknown-field"
    assert data["diagnostics"][0]["path"].endswith("SKILL.md")


# ---------------------------------------------------------------- lenient modes


OPENCLAW_SKILL = (
    "---\nname: oc\ndescription: Weather: use it now\nhomepage: https://x\n"
    'user-invocable: true\nmetadata: { "openclaw": { "requires": { "bins": ["curl"] }, '
    '"install": [{ "kind": "apt", "package": "x" }] } }\n---\n'
)


@pytest.mark.parametrize("mode", ["openclaw", "mixed", "legacy"])
def test_lenient_modes_accept_openclaw_extensions(tmp_path: Path, mode: Mode) -> None:
    """Extension keys, flow metadata, unquoted colons: never errors outside strict mode."""
    result = validate_path(write_skill(tmp_path / "oc", text=OPENCLAW_SKILL), mode=mode)
    assert result.ok, [d.format() for d in result.diagnostics]
    severities = {d.code: d.severity for d in result.diagnostics}
    assert severities.get("parse.yaml-invalid") is Severity.INFO
    assert not any(d.code.startswith("validate.unknown") for d in result.diagnostics)


def test_same_skill_fails_strict(tmp_path: Path) -> None:
    result = validate_path(write_skill(tmp_path / "oc", text=OPENCLAW_SKILL), mode="strict")
    assert "validate.frontmatter" in errors(result)


def test_install_dropped_is_a_warning(tmp_path: Path) -> None:
    extra = 'metadata: {"openclaw": {"install": [{"kind": "apt", "package": "x"}]}}\n'
    result = validate_path(
        write_skill(tmp_path / "inst", description=GOOD, raw=extra), mode="openclaw"
    )
    assert result.ok
    dropped = [d for d in result.diagnostics if d.code == "parse.install-dropped"]
    assert dropped and all(d.severity is Severity.WARNING for d in dropped)


@pytest.mark.parametrize("mode", ["openclaw", "mixed"])
def test_missing_description_is_an_error(tmp_path: Path, mode: Mode) -> None:
    folder = write_skill(tmp_path / "nodesc", text="---\nname: nodesc\n---\nFirst line.\n")
    result = validate_path(folder, mode=mode)
    assert "parse.missing-description" in errors(result)
    no_fm = write_skill(tmp_path / "nofm", text="# Title\n\nText.\n")
    assert "parse.missing-description" in errors(validate_path(no_fm, mode=mode))


def test_lenient_name_falls_back_to_folder(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "my-folder", text="---\ndescription: x\n---\n")
    assert validate_path(folder, mode="openclaw").name == "my-folder"
    standalone = tmp_path / "tool.md"
    standalone.write_text("---\ndescription: x\n---\n")
    assert validate_path(standalone, mode="mixed").name == "tool"


def test_lenient_version_warning(tmp_path: Path) -> None:
    result = validate_path(
        write_skill(tmp_path / "ver", description=GOOD, raw="version: banana\n"), mode="mixed"
    )
    assert result.ok and warnings(result) == ["validate.version"]


def test_legacy_mode_takes_name_and_description_from_the_body(tmp_path: Path) -> None:
    path = tmp_path / "plain.md"
    path.write_text("# Plain Skill\n\nOpens the phone app and checks mail.\n")
    result = validate_path(path, mode="legacy")
    assert result.ok, [d.format() for d in result.diagnostics]
    assert result.name == "Plain Skill"
    # mixed mode loads standalone files the same way, and validate agrees with loading.
    assert validate_path(path, mode="mixed").ok
    assert "parse.missing-description" in errors(validate_path(path, mode="openclaw"))


def test_a_folder_skill_md_needs_a_description_in_every_mode(tmp_path: Path) -> None:
    """As in discovery: only standalone Markdown files fall back to the body."""
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "SKILL.md").write_text("# Plain\n\nBody line.\n")
    for mode in ("openclaw", "mixed", "legacy"):
        assert "parse.missing-description" in errors(validate_path(folder, mode=mode)), mode


# ---------------------------------------------------------------- OpenPocket legacy rules


def test_legacy_name_description_prefers_frontmatter() -> None:
    text = "---\nname: fm-name\ndescription: From frontmatter.\n---\n# Heading\nLine.\n"
    assert legacy_name_description(text, "stem") == ("fm-name", "From frontmatter.")


def test_legacy_name_from_heading_then_stem() -> None:
    assert legacy_name_description("## Sub\n# Main Title \nText", "stem") == ("Main Title", "Text")
    assert legacy_name_description("Just text\n", "stem") == ("stem", "Just text")
    assert legacy_name_description("", "stem") == ("stem", "")


def test_legacy_description_skips_headings_and_cuts_to_180_utf16_units() -> None:
    long_line = "x" * 179 + "😀" + "tail"  # the emoji straddles unit 180
    name, desc = legacy_name_description(f"# T\n\n## Sub\n\n{long_line}\n", "s")
    assert name == "T"
    assert desc == "x" * 179 + "\ud83d"
    assert legacy_name_description("# T\n" + "é" * 300, "s")[1] == "é" * 180


def test_legacy_description_from_body_when_frontmatter_lacks_it() -> None:
    text = "---\nname: n\n---\n\n# Heading\nFirst body line.\nSecond.\n"
    assert legacy_name_description(text, "s") == ("n", "First body line.")


def test_legacy_triggers() -> None:
    block = "metadata:\n  openclaw:\n    triggers:\n      - ' open mail '\n      - ''\n      - 42\n"
    parsed = parse_skill_text(f"---\nname: t\ndescription: d\n{block}---\n")
    assert legacy_triggers(parsed) == ("open mail", "42")
    csv = parse_skill_text(
        '---\nname: t\ndescription: d\nmetadata: {"openclaw": {"triggers": "a, b,,c"}}\n---\n'
    )
    assert legacy_triggers(csv) == ("a", "b", "c")
    assert legacy_triggers(parse_skill_text("---\nname: t\ndescription: d\n---\n")) == ()


# ---------------------------------------------------------------- the discovery hooks


def make_skill(folder: Path) -> Skill:
    file_path = folder / "SKILL.md"
    parsed = parse_skill_text(file_path.read_bytes(), path=file_path)
    return Skill(
        name=parsed.name or folder.name,
        description=parsed.description,
        file_path=file_path,
        base_dir=folder,
        source="openclaw-workspace",
        parsed=parsed,
    )


def test_passes_strict(tmp_path: Path) -> None:
    ok, found = passes_strict(make_skill(write_skill(tmp_path / "fine", description=GOOD)))
    assert ok and found == ()
    ok, found = passes_strict(make_skill(write_skill(tmp_path / "wrong", "other", GOOD)))
    assert not ok and [d.code for d in found] == ["validate.name-mismatch"]
    assert found[0].skill == "other" and found[0].path == tmp_path / "wrong" / "SKILL.md"


def test_strict_problems_with_raw_text(tmp_path: Path) -> None:
    """`raw` avoids a second read; the result matches reading the file."""
    folder = write_skill(tmp_path / "raw", description=GOOD, raw="homepage: x\n")
    file_path = folder / "SKILL.md"
    raw = file_path.read_bytes()
    parsed = parse_skill_text(raw, path=file_path)
    from_raw = strict_problems(folder, parsed, file_path=file_path, raw=raw)
    assert from_raw == strict_problems(folder, parsed, file_path=file_path)
    assert [d.code for d in from_raw] == ["validate.unknown-field"]


def test_strict_problems_unreadable_file(tmp_path: Path) -> None:
    parsed = parse_skill_text("---\nname: x\ndescription: y\n---\n")
    found = strict_problems(tmp_path, parsed, file_path=tmp_path / "gone" / "SKILL.md")
    assert [d.code for d in found] == ["discover.unreadable"]


@contextlib.contextmanager
def fed_fifo(fifo: Path) -> Iterator[None]:
    """A FIFO at ``fifo`` with a writer that feeds it a valid skill: a reader that
    opens it for a blocking read gets a passing skill instead of hanging the test."""
    os.mkfifo(fifo)

    def feed() -> None:
        with contextlib.suppress(OSError), open(fifo, "wb") as out:
            out.write(skill_text("fifo", GOOD).encode())

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        yield
    finally:
        # Unblock a writer still waiting for a reader.
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        writer.join(5)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("mode", ["strict", "openclaw"])
def test_a_fifo_skill_file_is_refused_not_read(tmp_path: Path, mode: str) -> None:
    """A FIFO named SKILL.md is reported, never opened for a blocking read: with no
    writer that read waits forever (the crash hunt's `skillbook validate` hang). Here a
    writer feeds it, so a reader that reads it gets a valid skill instead."""
    folder = tmp_path / "fifo"
    folder.mkdir()
    with fed_fifo(folder / "SKILL.md"):
        result = validate_path(folder, mode=mode)
    assert not result.ok
    assert "discover.not-regular-file" in errors(result)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_strict_problems_rereads_the_file_without_blocking(tmp_path: Path) -> None:
    """`--mode strict` re-reads a loaded skill's SKILL.md: swapped for a FIFO since, the
    read blocked (a writer feeds it here, so the old read got a passing skill)."""
    fifo = tmp_path / "SKILL.md"
    parsed = parse_skill_text(skill_text("fifo", GOOD))
    with fed_fifo(fifo):
        found = strict_problems(tmp_path, parsed, file_path=fifo)
    assert [d.code for d in found] == ["discover.not-regular-file"]


def test_strict_refuses_tabs_in_the_frontmatter(tmp_path: Path) -> None:
    """skills-ref's strictyaml scanner fails on a tab after `key:` (found by hypothesis)."""
    folder = tmp_path / "a"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: a\ndescription: \tTabbed.\n---\nBody\n")
    result = validate_path(folder)
    assert not result.ok
    assert [(d.code, d.line) for d in result.diagnostics if d.severity == "error"] == [
        ("validate.yaml-style", 3)
    ]
