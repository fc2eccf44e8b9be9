"""Destination names of synced skills: folder names, uniquifying, sandbox path rules."""

from __future__ import annotations

import pytest

from skillbook.distribution.sync.names import INVALID_NAME, Destination, DirNamer, Refusal

ROOT = "/t/skills"
HOME = "/home/u"


def claim_all(*folders: str, root: str = ROOT, home: str = HOME) -> list[str]:
    namer = DirNamer(root, home=home)
    out = []
    for folder in folders:
        got = namer.claim(f"/src/{folder}")
        out.append(got.name if isinstance(got, Destination) else f"!{got.message}")
    return out


def test_the_folder_name_is_used_never_a_frontmatter_name() -> None:
    # The namer only ever sees the folder; a skill named "../../x" lives in some folder.
    assert claim_all("weather") == ["weather"]
    assert claim_all("weather", "weather", "weather") == ["weather", "weather-2", "weather-3"]


def test_uniquify_continues_past_9999() -> None:
    names = claim_all(*["same"] * 10_002)
    assert names[:3] == ["same", "same-2", "same-3"]
    assert names[9998] == "same-9999"
    assert names[9999:] == ["same-10000", "same-10001", "same-10002"]
    assert len(set(names)) == len(names)


def test_a_real_folder_with_a_suffix_is_skipped_over() -> None:
    assert claim_all("a", "a-2", "a", "a") == ["a", "a-2", "a-3", "a-4"]
    assert claim_all("a", "a", "a-2") == ["a", "a-2", "a-2-2"]


@pytest.mark.parametrize("folder", ["", " ", "  ", "\u00a0", ".", ".."])
def test_empty_and_dot_names_are_refused(folder: str) -> None:
    assert DirNamer(ROOT, home=HOME).claim(f"/src/{folder}") == Refusal(INVALID_NAME)


def test_names_are_trimmed_as_javascript_trims() -> None:
    assert claim_all(" y ", "y", "\u2003y") == ["y", "y-2", "y-3"]


@pytest.mark.parametrize(
    ("folder", "message"),
    [
        ("~", "Path escapes sandbox root (/t/skills): ~"),
        ("@~", "Path escapes sandbox root (/t/skills): @~"),
        ("@..", "Path escapes sandbox root (/t/skills): @.."),
        # Node's check is relative.startsWith(".."): a name that merely starts so is refused.
        ("@..x", "Path escapes sandbox root (/t/skills): @..x"),
    ],
)
def test_openclaw_sandbox_path_refusals(folder: str, message: str) -> None:
    assert claim_all(folder) == [f"!{message}"]


def test_root_under_home_is_shortened_like_openclaw() -> None:
    assert claim_all("~", root="/home/u/t/skills") == ["!Path escapes sandbox root (~/t/skills): ~"]
    # A plain prefix test, no separator check (OpenClaw's shortPath).
    assert claim_all("~", root="/home/u2/skills") == ["!Path escapes sandbox root (~2/skills): ~"]


def test_a_refused_name_still_takes_its_raw_name() -> None:
    # OpenClaw records "~" before refusing it, so the next "~" becomes "~-2" and fits.
    assert claim_all("~", "~") == [f"!Path escapes sandbox root ({ROOT}): ~", "~-2"]


def test_openclaw_normalisations_are_kept() -> None:
    assert claim_all("@scope", "a\u00a0b", "a..b", "foo..", "x\\y") == [
        "scope",
        "a b",
        "a..b",
        "foo..",
        "x\\y",
    ]


def test_names_that_would_merge_two_skills_get_their_own_folder() -> None:
    """OpenClaw copies "@x" and "x" (or "a b" and "a\\u00a0b") into one folder."""
    assert claim_all("x", "@x") == ["x", "x-2"]
    assert claim_all("@x", "x") == ["x", "x-2"]
    assert claim_all("a b", "a\u00a0b", "a\u2002b") == ["a b", "a b-2", "a b-3"]


def test_names_that_would_copy_into_the_root_are_refused() -> None:
    """OpenClaw copies a skill in a folder named "@" or "@." into the skills folder itself."""
    assert claim_all("@", "@.") == [f"!{INVALID_NAME}", f"!{INVALID_NAME}"]


def test_renames_say_why() -> None:
    namer = DirNamer(ROOT, home=HOME)
    assert namer.claim("/a/w") == Destination("w", "w", "")
    second = namer.claim("/b/w")
    assert isinstance(second, Destination) and "taken" in second.renamed
    scoped = namer.claim("/c/@s")
    assert isinstance(scoped, Destination) and scoped.name == "s" and "'@s'" in scoped.renamed
