"""skillbook.base.known_path: the cheap Path is Path(text) in every respect.

Differential: random path strings (slashes, dots, `..`, NUL, non-ASCII, surrogates)
through known_path and through Path(); value, type, string, parts, hash, parent,
name, repr and a joined child must all agree, whichever way the string went.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from skillbook.base import known_path as _known_path
from skillbook.base.known_path import known_parent, known_path

TEXT = st.text(
    alphabet=st.sampled_from(["/", ".", "a", "B", " ", "\x00", "é", "\udc80", "~", "\\"])
)


def _alike(fast: Path, slow: Path) -> None:
    assert type(fast) is type(slow)
    assert fast == slow and hash(fast) == hash(slow)
    # The comparison key made ahead (hash, ==, <) is the one pathlib would make.
    assert getattr(fast, "_cparts", None) == getattr(slow, "_cparts", None)
    assert sorted([fast, slow / "x", Path("/m")]) == sorted([slow, slow / "x", Path("/m")])
    assert str(fast) == str(slow) and os.fspath(fast) == os.fspath(slow)
    assert fast.parts == slow.parts and repr(fast) == repr(slow)
    assert fast.parent == slow.parent and str(fast.parent) == str(slow.parent)
    assert fast.name == slow.name and fast.suffix == slow.suffix
    assert fast.is_absolute() == slow.is_absolute()
    assert str(fast / "SKILL.md") == str(slow / "SKILL.md")
    assert fast.as_posix() == slow.as_posix()


@settings(max_examples=1000, deadline=None)
@given(TEXT)
@example("/")
@example("//a")
@example("///a")
@example("/a/")
@example("/a/./b")
@example("/a/.")
@example("/a/..")
@example("/./a")
@example("/a//b")
@example("/tmp/skills/x/SKILL.md")
@example("relative/x")
def test_known_path_is_path(text: str) -> None:
    _alike(known_path(text), Path(text))


@pytest.mark.skipif(not _known_path._FAST, reason="the fast construction is CPython 3.11 only")
def test_a_normalised_absolute_path_takes_the_fast_construction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[str] = []

    def counting_path(text: str) -> Path:
        made.append(text)
        return Path(text)

    monkeypatch.setattr(_known_path, "Path", counting_path)
    known_path("/tmp/skills/x/SKILL.md")
    assert made == []
    known_path("/tmp//x")
    assert made == ["/tmp//x"]
    # A skill folder from its SKILL.md's path: neither split again nor made by Path().
    splits: list[str] = []
    monkeypatch.setattr(_known_path, "known_path", lambda text: splits.append(text))
    parent = known_parent(
        _known_path._made(["/", "tmp", "x", "SKILL.md"], "/tmp/x/SKILL.md"), "/tmp/x"
    )
    assert made == ["/tmp//x"] and splits == []
    assert str(parent) == "/tmp/x" and parent == Path("/tmp/x")


@settings(max_examples=1000, deadline=None)
@given(TEXT, st.sampled_from(["SKILL.md", "x", "é", ".", "..", "", "a/b"]))
@example("/tmp/skills/x", "SKILL.md")
@example("/", "SKILL.md")
@example("/a/", "SKILL.md")
@example("/a//b", "SKILL.md")
@example("", "SKILL.md")
def test_known_parent_is_path(text: str, name: str) -> None:
    child = known_path(f"{text}/{name}")
    _alike(known_parent(child, text), Path(text))
    _alike(known_parent(Path(f"{text}/{name}"), text), Path(text))
