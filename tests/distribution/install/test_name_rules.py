"""The file name rules the registry publishes by and the installers unpack by."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillbook.distribution.archives.names import (
    MAX_PART_BYTES,
    RULES,
    NameRejected,
    NameSet,
    check_name,
    check_names,
    shown,
)

#: Names every file system holds as they are: ASCII letters, digits and a few marks.
SAFE_PART = st.from_regex(r"[a-z][a-z0-9_-]{0,11}(\.[a-z]{1,4})?", fullmatch=True)
SAFE_PATH = st.lists(SAFE_PART, min_size=1, max_size=4).map("/".join)


def _rule(paths: list[str]) -> str | None:
    try:
        check_names(paths)
    except NameRejected as exc:
        return exc.problem.rule
    return None


@pytest.mark.parametrize(
    ("paths", "rule"),
    [
        (["a" * 256], "name-too-long"),
        (["docs/" + "é" * 128], "name-too-long"),  # 128 characters, 256 bytes
        (["CON"], "windows-reserved"),
        (["con.txt"], "windows-reserved"),
        (["NUL"], "windows-reserved"),
        (["scripts/COM1"], "windows-reserved"),
        (["lpt9.tar.gz"], "windows-reserved"),
        (["COM\u00b9"], "windows-reserved"),
        (["notes."], "windows-reserved"),
        (["what?.md"], "windows-reserved"),
        (["c:x"], "drive-or-stream"),
        (["a:b"], "drive-or-stream"),
        (["run\u202etxt.sh"], "invisible-character"),
        (["a\u200bb.md"], "invisible-character"),
        (["tab\there"], "invisible-character"),
        (["bad\ud800"], "invisible-character"),
        (["SKILL.md", "skill.md"], "case"),
        (["Docs/a.md", "docs/b.md"], "case"),
        (["caf\u00e9.md", "cafe\u0301.md"], "normalisation"),
        (["a", "a/b"], "file-folder"),
        (["a/b", "a"], "file-folder"),
        (["a.md", "a.md"], "duplicate"),
    ],
)
def test_each_rule_refuses_its_case(paths: list[str], rule: str) -> None:
    assert rule in RULES
    assert _rule(paths) == rule


@pytest.mark.parametrize(
    "paths",
    [
        ["SKILL.md", "references/api.md", "scripts/run.sh"],
        ["a" * 255],
        ["é" * 127],
        ["console.md", "connect.txt", "com10", "lpt", "nul-test.md", "auxiliary/x"],
        ["docs/a.md", "docs/b.md"],  # one folder, spelled alike twice
        ["日本語/説明.md", "Straße.md"],
    ],
)
def test_ordinary_names_pass(paths: list[str]) -> None:
    assert _rule(paths) is None


def test_a_folder_entry_and_files_inside_it_are_one_folder() -> None:
    names = NameSet()
    names.add("docs", folder=True)
    names.add("docs/a.md")
    with pytest.raises(NameRejected) as caught:
        names.add("docs")
    assert caught.value.problem.rule == "file-folder"
    assert caught.value.problem.other == "docs"


def test_messages_spell_out_invisible_characters() -> None:
    with pytest.raises(NameRejected) as caught:
        check_name("run\u202etxt.sh")
    message = str(caught.value)
    assert "\u202e" not in message and "\\u202e" in message and "U+202E" in message
    assert caught.value.problem.to_json()["path"] == "run\u202etxt.sh"


@given(SAFE_PATH)
def test_plain_ascii_paths_always_pass(path: str) -> None:
    check_name(path)


@given(st.text(max_size=40))
def test_any_text_is_either_accepted_or_refused_with_a_known_rule(path: str) -> None:
    try:
        check_name(path)
    except NameRejected as exc:
        assert exc.problem.rule in RULES and exc.problem.path == path
        return
    # What passes holds no invisible character and no part too long for a file system.
    for part in path.split("/"):
        assert len(part.encode("utf-8")) <= MAX_PART_BYTES
        assert ":" not in part
    assert not any(unicodedata.category(c) in ("Cc", "Cf", "Cs") for c in path)


@given(
    SAFE_PATH,
    st.sampled_from(["\u202e", "\u200b", "\u200e", "\u2066", "\ufeff", "\x00", "\x1b", "\x7f"]),
    st.integers(min_value=0),
)
def test_an_invisible_character_anywhere_is_refused(path: str, char: str, at: int) -> None:
    at %= len(path) + 1
    with pytest.raises(NameRejected) as caught:
        check_name(path[:at] + char + path[at:])
    assert caught.value.problem.rule == "invisible-character"


@given(st.lists(SAFE_PATH, min_size=1, max_size=6, unique=True), st.data())
def test_a_case_or_normalisation_twin_of_a_file_is_refused(
    paths: list[str], data: st.DataObject
) -> None:
    if _rule(paths) is not None:
        return  # e.g. a file and a folder of the same name among the drawn paths
    target = data.draw(st.sampled_from(paths))
    twin = target.upper() if target.upper() != target else target.title()
    if twin == target:
        return
    assert _rule([*paths, twin]) in ("case", "file-folder", "windows-reserved")


@given(st.lists(st.text(min_size=1, max_size=8), max_size=6), st.randoms())
def test_a_set_is_refused_whatever_the_order(paths: list[str], rnd: object) -> None:
    shuffled = list(paths)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert (_rule(paths) is None) == (_rule(shuffled) is None)


@given(st.lists(SAFE_PATH, max_size=8))
def test_what_passes_has_one_spelling_per_folded_name(paths: list[str]) -> None:
    if _rule(paths) is not None:
        return
    folded = {unicodedata.normalize("NFC", p.casefold()) for p in paths}
    assert len(folded) == len(paths)


def test_shown_leaves_visible_text_alone() -> None:
    assert shown("Straße/日本.md") == "Straße/日本.md"
    assert shown("a\u200bb") == "a\\u200bb"
