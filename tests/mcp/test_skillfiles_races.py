"""What ``skillbook serve`` reads while a folder of a skill is swapped for a symlink.

``resources/read`` and ``read_skill`` answer from the bytes the catalog captured
(:mod:`skillbook.mcp._skillfiles`); a sub-folder, or the skill folder itself, is
swapped for a symlink to an outside copy in a loop while the catalog is rebuilt for
every request. No answer may ever hold the outside content.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from races import OUTSIDE_MARKER, FolderSwapper, outside_copy

import skillbook
from skillbook.mcp import _skillfiles as sf

#: Requests under the swap: each rebuilds the catalog (walk + reads).
ROUNDS = 300


def make_skill(root: Path) -> Path:
    folder = root / "alpha"
    (folder / "references" / "deep").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: alpha\ndescription: The alpha skill\n---\n# A\n")
    (folder / "references" / "guide.md").write_text("# Guide\n")
    (folder / "references" / "deep" / "notes.md").write_text("notes\n")
    return folder


def test_a_swapped_sub_folder_never_serves_outside_bytes(tmp_path: Path) -> None:
    folder = make_skill(tmp_path / "skills")
    outside = tmp_path / "outside" / "references"
    outside_copy(folder / "references", outside)
    cache = sf.SkillFilesCache()
    served = 0
    with FolderSwapper(folder / "references", outside) as swapper:
        for _ in range(ROUNDS):
            files = sf.scan_skill("alpha", folder, folder / "SKILL.md", real_dir=folder)
            cached = cache.get("alpha", folder, folder / "SKILL.md", folder)
            for entry in (*files.files, *cached.files):
                assert OUTSIDE_MARKER.encode() not in entry.data, entry.rel
                served += entry.rel == "references/guide.md"
    assert swapper.swaps > 0 and served > 0


def test_a_swapped_skill_folder_is_not_served_from_outside(tmp_path: Path) -> None:
    folder = make_skill(tmp_path / "skills")
    outside = tmp_path / "outside" / "alpha"
    outside_copy(folder, outside)
    real = Path(os.path.realpath(folder))
    with FolderSwapper(folder, outside) as swapper:
        for _ in range(ROUNDS):
            files = sf.scan_skill("alpha", folder, folder / "SKILL.md", real_dir=real)
            for entry in files.files:
                assert OUTSIDE_MARKER.encode() not in entry.data, entry.rel
    assert swapper.swaps > 0


def test_server_reads_under_a_swap_return_only_skill_bytes(tmp_path: Path) -> None:
    """Through the served state (what ``resources/read`` and ``read_skill`` answer from),
    rebuilt for every request."""
    pytest.importorskip("mcp")
    from skillbook.mcp._catalog import SkillCatalog
    from skillbook.runtime.session import SkillSession

    ws = tmp_path / "ws"
    folder = make_skill(ws / "skills")
    outside = tmp_path / "outside" / "references"
    outside_copy(folder / "references", outside)
    home = tmp_path / "home"
    home.mkdir()
    loader = skillbook.Loader(ws, env={"HOME": os.fspath(home)}, cwd=tmp_path)
    session = SkillSession(loader, watch=False)
    catalog = SkillCatalog(session, rescan_interval_s=0.0)
    uri = "skill://alpha/references/deep/notes.md"
    answered = 0
    try:
        with FolderSwapper(folder / "references", outside) as swapper:
            for _ in range(ROUNDS):
                state = catalog.current()
                text, failed = state.read_skill("alpha", "references/guide.md")
                assert OUTSIDE_MARKER not in text
                found = state.file(uri)
                assert found is None or OUTSIDE_MARKER.encode() not in found.data
                answered += not failed
    finally:
        session.close()
    assert swapper.swaps > 0 and answered > 0


# --------------------------------------------------------------------------- one swap, exactly between walk and read


def swap_for_link(folder: Path, outside: Path) -> None:
    os.rename(folder, folder.with_name(folder.name + ".aside"))
    os.symlink(outside, folder, target_is_directory=True)


@pytest.mark.parametrize("swapped", ["references", "references/deep", "."])
def test_a_folder_swapped_after_the_walk_is_refused_at_the_read(
    tmp_path: Path, swapped: str
) -> None:
    folder = make_skill(tmp_path / "skills")
    target = (folder / swapped).resolve()
    outside = tmp_path / "outside" / target.name
    outside_copy(target, outside)
    listing = sf._walk(folder, folder / "SKILL.md", folder)
    swap_for_link(target, outside)
    files = sf._capture("alpha", listing, sf.DEFAULT_LIMITS)
    assert all(OUTSIDE_MARKER.encode() not in f.data for f in files.files)
    refused = {s.rel: s.reason for s in files.skipped}
    if swapped == ".":
        assert files.files == () and files.unreadable is not None
        assert "changed while it was read" in files.unreadable
    else:
        assert "references/deep/notes.md" in refused
        assert all("changed while it was read" in why for why in refused.values())


def test_a_skill_folder_that_now_resolves_elsewhere_is_not_served(tmp_path: Path) -> None:
    folder = make_skill(tmp_path / "skills")
    real = Path(os.path.realpath(folder))
    outside = tmp_path / "outside" / "alpha"
    outside_copy(folder, outside)
    swap_for_link(folder, outside)
    files = sf.scan_skill("alpha", folder, folder / "SKILL.md", real_dir=real)
    assert files.files == ()
    assert files.unreadable is not None and "now resolves to" in files.unreadable
