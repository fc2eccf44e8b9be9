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
from factories import write_skill
from races import OUTSIDE_MARKER, FolderSwapper, outside_copy

import skillbook
from skillbook.mcp import _skillfiles as sf
from skillbook.mcp import _skillwalk as sw

#: Requests under the swap: each rebuilds the catalog (walk + reads).
ROUNDS = 300
#: Every so many rounds, a request is also made with the folder held in place.
IN_PLACE_EVERY = 30


#: The skill under attack: ``alpha`` with a ``references`` folder to swap.
GUIDE = {"references/guide.md": "# Guide\n", "references/deep/notes.md": "notes\n"}


def test_a_swapped_sub_folder_never_serves_outside_bytes(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "skills" / "alpha", files=GUIDE)
    outside = tmp_path / "outside" / "references"
    outside_copy(folder / "references", outside)
    cache = sf.SkillFilesCache()
    with FolderSwapper(folder / "references", outside) as swapper:
        for i in range(ROUNDS):
            files = sf.scan_skill("alpha", folder, folder / "SKILL.md", real_dir=folder)
            cached = cache.get("alpha", folder, folder / "SKILL.md", folder)
            for entry in (*files.files, *cached.files):
                assert OUTSIDE_MARKER.encode() not in entry.data, entry.rel
            if i % IN_PLACE_EVERY == 0:
                with swapper.in_place():
                    files = sf.scan_skill("alpha", folder, folder / "SKILL.md", real_dir=folder)
                served = [f.rel for f in files.files]
                assert served == ["SKILL.md", "references/deep/notes.md", "references/guide.md"]
    assert swapper.swaps > 0


def test_a_swapped_skill_folder_is_not_served_from_outside(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "skills" / "alpha", files=GUIDE)
    outside = tmp_path / "outside" / "alpha"
    outside_copy(folder, outside)
    real = Path(os.path.realpath(folder))
    with FolderSwapper(folder, outside) as swapper:
        for i in range(ROUNDS):
            files = sf.scan_skill("alpha", folder, folder / "SKILL.md", real_dir=real)
            for entry in files.files:
                assert OUTSIDE_MARKER.encode() not in entry.data, entry.rel
            if i % IN_PLACE_EVERY == 0:
                with swapper.in_place():
                    files = sf.scan_skill("alpha", folder, folder / "SKILL.md", real_dir=real)
                assert len(files.files) == 3
    assert swapper.swaps > 0


def test_server_reads_under_a_swap_return_only_skill_bytes(tmp_path: Path) -> None:
    """Through the served state (what ``resources/read`` and ``read_skill`` answer from),
    rebuilt for every request."""
    pytest.importorskip("mcp")
    from skillbook.mcp._catalog import SkillCatalog
    from skillbook.runtime.session import SkillSession

    ws = tmp_path / "ws"
    folder = write_skill(ws / "skills" / "alpha", files=GUIDE)
    outside = tmp_path / "outside" / "references"
    outside_copy(folder / "references", outside)
    home = tmp_path / "home"
    home.mkdir()
    loader = skillbook.Loader(ws, env={"HOME": os.fspath(home)}, cwd=tmp_path)
    session = SkillSession(loader, watch=False)
    catalog = SkillCatalog(session, rescan_interval_s=0.0)
    uri = "skill://alpha/references/deep/notes.md"
    try:
        with FolderSwapper(folder / "references", outside) as swapper:
            for i in range(ROUNDS):
                state = catalog.current()
                text, _ = state.read_skill("alpha", "references/guide.md")
                assert OUTSIDE_MARKER not in text
                found = state.file(uri)
                assert found is None or OUTSIDE_MARKER.encode() not in found.data
                if i % IN_PLACE_EVERY == 0:
                    with swapper.in_place():
                        state = catalog.current()
                    assert state.read_skill("alpha", "references/guide.md") == ("# Guide\n", False)
                    assert state.file(uri) is not None
    finally:
        session.close()
    assert swapper.swaps > 0


# --------------------------------------------------------------------------- one swap, exactly between walk and read


def swap_for_link(folder: Path, outside: Path) -> None:
    os.rename(folder, folder.with_name(folder.name + ".aside"))
    os.symlink(outside, folder, target_is_directory=True)


@pytest.mark.parametrize("swapped", ["references", "references/deep", "."])
def test_a_folder_swapped_after_the_walk_is_refused_at_the_read(
    tmp_path: Path, swapped: str
) -> None:
    folder = write_skill(tmp_path / "skills" / "alpha", files=GUIDE)
    target = (folder / swapped).resolve()
    outside = tmp_path / "outside" / target.name
    outside_copy(target, outside)
    listing = sw.walk(folder, folder / "SKILL.md", folder)
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
    folder = write_skill(tmp_path / "skills" / "alpha", files=GUIDE)
    real = Path(os.path.realpath(folder))
    outside = tmp_path / "outside" / "alpha"
    outside_copy(folder, outside)
    swap_for_link(folder, outside)
    files = sf.scan_skill("alpha", folder, folder / "SKILL.md", real_dir=real)
    assert files.files == ()
    assert files.unreadable is not None and "now resolves to" in files.unreadable


def test_a_capture_with_a_failed_read_is_not_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read that failed mid-swap must not stick: the folder's stat signature is the
    same once the swap is undone, yet the next request reads the file again."""
    folder = write_skill(tmp_path / "skills" / "alpha", files=GUIDE)
    cache = sf.SkillFilesCache()
    real_read = sw.read
    failures = iter(["changed while it was read (a folder on its path became a symlink)"])

    def flaky(listing: object, seen: tuple[object, ...], budget: int) -> bytes | str:
        if seen[0] == "references/guide.md":
            reason = next(failures, None)
            if reason is not None:
                return reason
        return real_read(listing, seen, budget)  # type: ignore[arg-type]

    monkeypatch.setattr(sw, "read", flaky)
    first = cache.get("alpha", folder, folder / "SKILL.md", folder)
    assert first.incomplete and first.file("references/guide.md") is None
    second = cache.get("alpha", folder, folder / "SKILL.md", folder)
    assert not second.incomplete and second.file("references/guide.md") is not None
    assert cache.get("alpha", folder, folder / "SKILL.md", folder) is second  # reused now
