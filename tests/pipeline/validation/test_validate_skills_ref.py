"""Strict mode implies skills-ref: whatever passes ours passes ``skills_ref.validate``.

Agent Skills spec (agent-skills.md §1.2, §2.4, §2.5): skills-ref reads with strictyaml,
ends the frontmatter at the first ``---`` anywhere and refuses flow style, tags and
anchors. Hypothesis writes many frontmatters (names, descriptions with colons, quotes,
``---`` and Unicode, metadata maps in block and flow style, extra keys, ``version``) to
temporary folders; whenever strict mode says ok, skills-ref must return ``[]``.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from fuzz_budget import examples
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from skillbook.pipeline.validation.validate import validate_path

skills_ref = pytest.importorskip("skills_ref", reason="skills-ref is not installed")


def skills_ref_problems(folder: Path) -> list[str]:
    """skills-ref's verdict; an exception inside it (e.g. on bad UTF-8) is a failure too."""
    try:
        return list(skills_ref.validate(folder))
    except Exception as exc:
        return [f"skills-ref raised {type(exc).__name__}: {exc}"]


# ---------------------------------------------------------------- the generator

GOOD_NAMES = st.from_regex(r"[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,3}", fullmatch=True)
ODD_NAMES = st.sampled_from(
    ["Bad_Name", "-x", "x-", "a--b", "技能", "café", "мой-навык", "НАВЫК", "123", "true",
     "a" * 64, "a" * 65, "", " pad ", "x.y", "ｆｕｌｌ", "ﬁle", "K-elvin", "null", "1.0"]
)  # fmt: skip
FRAGMENTS = st.sampled_from(
    [": ", "---", "--", "#", "# c", "'", '"', "{", "}", "[", "]", "&a", "*a", "!x", " - ", "|",
     ">", "%", "@", "`", "\t", "\\", "\u2028", "\x85", "\x7f", "é", "技", "🙂", "\u00a0", "  ",
     "\n", "yes", "~", "null", "1.5", "<tag>", "a: b: c", "x" * 200]
)  # fmt: skip
TEXT = st.one_of(
    st.lists(st.one_of(FRAGMENTS, st.text(max_size=8)), max_size=8).map("".join),
    st.from_regex(r"[A-Za-z][A-Za-z ,.()]{0,80}", fullmatch=True),
    st.integers(1015, 1030).map(lambda n: "Use this skill. " + "x" * (n - 16)),
)
STYLES = st.sampled_from(["plain", "single", "double", "literal", "folded", "plain"])


def render(value: str, style: str, indent: str = "  ") -> str:
    """A YAML scalar in one of the styles people write (not always valid YAML)."""
    if style == "single":
        return "'" + value.replace("'", "''") + "'"
    if style == "double":
        return json.dumps(value, ensure_ascii=False)
    if style in ("literal", "folded"):
        body = "\n".join(indent + line for line in (value.split("\n") or [""]))
        return ("|" if style == "literal" else ">") + "-\n" + body
    return value


@st.composite
def scalar(draw: st.DrawFn, values: st.SearchStrategy[str] = TEXT) -> str:
    return render(draw(values), draw(STYLES))


@st.composite
def metadata_block(draw: st.DrawFn) -> str:
    kind = draw(
        st.sampled_from(["block", "flow", "nested", "typed", "json-string", "bad", "block"])
    )
    if kind == "flow":
        return 'metadata: { "openclaw": { "requires": { "bins": ["curl"] } } }'
    if kind == "json-string":
        return """metadata: '{"openclaw": {"emoji": "x"}}'"""
    if kind == "bad":
        return draw(st.sampled_from(["metadata:", "metadata: text", "metadata:\n  - a"]))
    keys = draw(st.lists(st.from_regex(r"[a-z][a-z0-9_-]{0,6}", fullmatch=True), max_size=4))
    lines = ["metadata:"]
    for key in dict.fromkeys(keys):
        value = draw(scalar(st.from_regex(r"[a-z0-9 .]{1,12}", fullmatch=True)))
        lines.append(f"  {key}: {value}")
    if kind == "nested":
        lines += ["  openclaw:", "    emoji: x", "    requires:", "      bins:", "        - curl"]
    if kind == "typed":
        lines.append(draw(st.sampled_from(["  version: 1.0", "  count: 3", "  flag: true"])))
    if draw(st.booleans()):
        version = draw(st.sampled_from(["1.0.0", '"2.1.0-rc.1"', "v1", "abc"]))
        lines.append(f"  version: {version}")
    return "\n".join(lines)


GOOD_EXTRAS = st.sampled_from(
    ["license: MIT", "license: Proprietary. LICENSE.txt has complete terms",
     "compatibility: Requires git", "allowed-tools: Bash(git:*) Read", "# a comment"]
)  # fmt: skip
ODD_EXTRAS = st.sampled_from(
    ["version: 1.0.0", "homepage: https://example.com", "user-invocable: true",
     "disable-model-invocation: true", "compatibility: ''", "compatibility: 3",
     "compatibility: " + "c" * 501, "allowed-tools:\n  - Read", "license:", "'name ': spaced",
     "x: &a 1", "y: !!str 2", "? name\n: q", "license: 'a: b'", "license: a: b"]
)  # fmt: skip
PLAIN_TEXT = st.from_regex(r"[A-Za-z][A-Za-z ,.()]{0,80}", fullmatch=True)
MUTATIONS = ("name", "description", "extra", "metadata", "opening", "closing", "crlf", "bom",
             "folder", "drop-name", "drop-description", "none", "none")  # fmt: skip


@st.composite
def skill_file(draw: st.DrawFn) -> tuple[str, bytes]:
    """(folder name, SKILL.md bytes): a tidy skill with up to two mutations."""
    mutations = draw(st.lists(st.sampled_from(MUTATIONS), max_size=2))
    name = draw(ODD_NAMES if "name" in mutations else GOOD_NAMES)
    entries = []
    if "drop-name" not in mutations:
        entries.append(
            "name: " + render(name, draw(st.sampled_from(["plain", "single", "double"])))
        )
    if "drop-description" not in mutations:
        values = TEXT if "description" in mutations else PLAIN_TEXT
        entries.append("description: " + draw(scalar(values)))
    if "metadata" in mutations or draw(st.booleans()):
        entries.append(draw(metadata_block()))
    entries += draw(st.lists(GOOD_EXTRAS, max_size=2, unique=True))
    if "extra" in mutations:
        entries.append(draw(ODD_EXTRAS))
    entries = draw(st.permutations(entries))
    opening = draw(st.sampled_from(["--- ", "----", "---x"])) if "opening" in mutations else "---"
    closing = draw(st.sampled_from(["----", "--- x", "---"])) if "closing" in mutations else "---"
    text = "\n".join([opening, *entries, closing, "", "# Body", "Do the thing."]) + "\n"
    if "crlf" in mutations:
        text = text.replace("\n", "\r\n")
    raw = text.encode("utf-8")
    if "bom" in mutations:
        raw = b"\xef\xbb\xbf" + raw
    safe = name.strip() and all(c.isalnum() or c in "-_." for c in name) and name not in (".", "..")
    folder = name if safe and "folder" not in mutations else "other-folder"
    return folder, raw


@settings(
    max_examples=examples(1000),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(skill_file())
def test_strict_ok_implies_skills_ref_ok(case: tuple[str, bytes]) -> None:
    """§2: a skill that passes strict mode also passes skills-ref validate."""
    folder_name, raw = case
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / folder_name
        try:
            folder.mkdir()
        except OSError:
            folder = Path(tmp) / "other-folder"
            folder.mkdir()
        (folder / "SKILL.md").write_bytes(raw)
        ours = validate_path(folder, mode="strict")
        event(f"strict ok: {ours.ok}")
        if ours.ok:
            assert skills_ref_problems(folder) == [], raw.decode("utf-8", "replace")


# ---------------------------------------------------------------- fixed cases

PASSING_BOTH = [
    "---\nname: {n}\ndescription: Extract text from PDFs. Use for PDF files.\n---\nBody\n",
    "---\nname: {n}\ndescription: >-\n  Folded text,\n  two lines.\nlicense: MIT\n---\n",
    "---\nname: '{n}'\ndescription: \"Quoted: with a colon\"\ncompatibility: Needs git\n---\n",
    '---\nname: {n}\ndescription: x\nmetadata:\n  author: me\n  version: "1.0.0"\n---\n',
    "---\nname: {n}\ndescription: x\nallowed-tools: Bash(git:*) Read\n---\n",
    "---\r\nname: {n}\r\ndescription: CRLF file\r\n---\r\nBody\r\n",
    "---\nname: {n}\ndescription: |\n  Literal\n  block\n# comment\n---\n",
]


@pytest.mark.parametrize("template", PASSING_BOTH)
def test_known_good_skills_pass_both(tmp_path: Path, template: str) -> None:
    """The property above is not vacuous: these pass strict mode and skills-ref."""
    folder = tmp_path / "demo-skill"
    folder.mkdir()
    (folder / "SKILL.md").write_text(template.format(n="demo-skill"), encoding="utf-8", newline="")
    result = validate_path(folder, mode="strict")
    assert result.ok, [d.format() for d in result.diagnostics]
    assert skills_ref_problems(folder) == []


REFUSED_BY_BOTH = {
    "flow metadata": "---\nname: s\ndescription: x\nmetadata: {a: b}\n---\n",
    "flow list": "---\nname: s\ndescription: x\nmetadata:\n  bins: [curl]\n---\n",
    "tag": "---\nname: s\ndescription: !!str x\n---\n",
    "anchor": "---\nname: s\ndescription: &d x\nlicense: *d\n---\n",
    "indent": "---\nname: s\ndescription: x\nmetadata:\n  a:\n    x: '1'\n  b:\n      y: '2'\n---\n",
    "version": "---\nname: s\ndescription: x\nversion: 1.0.0\n---\n",
    "bom": "\ufeff---\nname: s\ndescription: x\n---\n",
}


@pytest.mark.parametrize("label", sorted(REFUSED_BY_BOTH))
def test_strictyaml_refusals_are_strict_errors(tmp_path: Path, label: str) -> None:
    """§2.4 sharp edges: we refuse what strictyaml refuses."""
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "SKILL.md").write_text(REFUSED_BY_BOTH[label], encoding="utf-8")
    assert not validate_path(folder, mode="strict").ok
    assert skills_ref_problems(folder) != []


@pytest.mark.corpus
def test_corpus_strict_implies_skills_ref(corpus_dir: Path) -> None:
    """Every SKILL.md folder of the public corpus: strict ok ⇒ skills-ref ok."""
    folders = sorted({p.parent for p in corpus_dir.rglob("SKILL.md")})
    assert folders
    ours = theirs = 0
    broken: list[tuple[str, list[str]]] = []
    for folder in folders:
        ok = validate_path(folder, mode="strict").ok
        problems = skills_ref_problems(folder)
        ours += ok
        theirs += not problems
        if ok and problems:
            broken.append((str(folder), problems))
    print(f"\n{len(folders)} corpus skills: {ours} pass strict mode, {theirs} pass skills-ref")
    assert broken == []
    assert ours > 0
