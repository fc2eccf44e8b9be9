"""skillbook.base.pinned_root: files opened below a held root, never through a link.

The same guarantees as the per-file kernel-path check (tests/base/test_fs.py): a skill
folder or a SKILL.md swapped for a symlink is refused with the same failure, paths
that are not two plain names below the root are declined, and only a large root is
held open (the swap race itself runs in tests/base/test_fs.py, with and without it).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from factories import write_skill
from races import OUTSIDE_MARKER, outside_copy

from skillbook.base import fs as _fs
from skillbook.base import verified_read as _verified_read
from skillbook.base.pinned_root import PinnedRoot
from skillbook.model import Source
from skillbook.pipeline.discovery import root_scanner as _root_scanner
from skillbook.pipeline.discovery.discover import DiscoverOptions, Root, discover

pytestmark = pytest.mark.skipif(
    not (_fs.HAS_DIR_FD and _fs.HAS_PROC_FD),
    reason="needs openat and /proc/self/fd",
)


def _pinned(folder: Path) -> PinnedRoot:
    pinned = PinnedRoot.open(os.path.realpath(folder))
    assert pinned is not None
    return pinned


def _read(pinned: PinnedRoot, md: str) -> bytes | _verified_read.ReadFailure:
    real_dir = os.path.dirname(md)
    checked = _verified_read.verify_file(
        md, root_real=real_dir, max_bytes=1 << 20, dir_real=real_dir
    )
    assert isinstance(checked, _verified_read.Verified)
    got = _verified_read.read_verified(checked, max_bytes=1 << 20, open_below=pinned.open_file)
    return got if isinstance(got, _verified_read.ReadFailure) else got[0]


def test_a_file_two_names_below_is_read(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills" / "a", description="from a")
    pinned = _pinned(tmp_path / "skills")
    try:
        got = _read(pinned, os.path.join(pinned.path, "a", "SKILL.md"))
        assert isinstance(got, bytes) and b"from a" in got
    finally:
        pinned.close()


def test_other_paths_are_declined(tmp_path: Path) -> None:
    (tmp_path / "skills" / "a" / "b").mkdir(parents=True)
    pinned = _pinned(tmp_path / "skills")
    flags = os.O_RDONLY
    try:
        for real in (
            pinned.path,
            os.path.join(pinned.path, "a"),
            os.path.join(pinned.path, "a", "b", "SKILL.md"),
            os.path.join(pinned.path, "..", "SKILL.md"),
            os.path.join(pinned.path, ".", "SKILL.md"),
            os.path.join(pinned.path, "a", ".."),
            pinned.path + "x/a/SKILL.md",
            str(tmp_path / "elsewhere" / "a" / "SKILL.md"),
        ):
            assert pinned.open_file(real, flags) is None, real
    finally:
        pinned.close()


def test_a_folder_swapped_for_a_link_is_refused_as_before(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    victim = write_skill(root / "victim")
    outside = tmp_path / "outside" / "victim"
    outside_copy(victim, outside)
    pinned = _pinned(root)
    md = os.path.join(pinned.path, "victim", "SKILL.md")
    checked = _verified_read.verify_file(
        md, root_real=os.path.dirname(md), max_bytes=1 << 20, dir_real=os.path.dirname(md)
    )
    assert isinstance(checked, _verified_read.Verified)
    os.rename(victim, root / "victim.aside")
    victim.symlink_to(outside, target_is_directory=True)
    try:
        got = _verified_read.read_verified(checked, max_bytes=1 << 20, open_below=pinned.open_file)
        # The per-file check's answer for the same swap (test_fs).
        without = _verified_read.read_verified(checked, max_bytes=1 << 20)
    finally:
        pinned.close()
    assert isinstance(got, _verified_read.ReadFailure) and got.kind == _verified_read.CHANGED
    assert isinstance(without, _verified_read.ReadFailure) and without.kind == got.kind


def test_a_skill_md_swapped_for_a_link_is_refused_as_before(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    victim = write_skill(root / "victim")
    pinned = _pinned(root)
    md = os.path.join(pinned.path, "victim", "SKILL.md")
    checked = _verified_read.verify_file(
        md, root_real=os.path.dirname(md), max_bytes=1 << 20, dir_real=os.path.dirname(md)
    )
    assert isinstance(checked, _verified_read.Verified)
    (tmp_path / "outside.md").write_text(OUTSIDE_MARKER)
    os.unlink(victim / "SKILL.md")
    (victim / "SKILL.md").symlink_to(tmp_path / "outside.md")
    try:
        got = _verified_read.read_verified(checked, max_bytes=1 << 20, open_below=pinned.open_file)
    finally:
        pinned.close()
    assert isinstance(got, _verified_read.ReadFailure) and got.kind == _verified_read.SYMLINK


def test_a_root_whose_kernel_path_differs_is_not_pinned(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    assert PinnedRoot.open(str(tmp_path / "link")) is None  # O_NOFOLLOW on the root
    assert PinnedRoot.open(str(tmp_path / "missing")) is None


def test_close_releases_the_descriptor(tmp_path: Path) -> None:
    pinned = _pinned(tmp_path)
    fd = pinned.fd
    pinned.close()
    with pytest.raises(OSError):
        os.fstat(fd)
    pinned.close()  # a second close is a no-op


@pytest.mark.parametrize("others", [1, _root_scanner._PIN_FROM])
def test_discovery_pins_only_a_large_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, others: int
) -> None:
    root = tmp_path / "skills"
    for i in range(others + 1):
        write_skill(root / f"s-{i}")
    opened: list[str] = []
    real_open = PinnedRoot.open.__func__  # type: ignore[attr-defined]

    def spy(cls: type[PinnedRoot], real: str) -> PinnedRoot | None:
        opened.append(real)
        return real_open(cls, real)  # type: ignore[no-any-return]

    monkeypatch.setattr(PinnedRoot, "open", classmethod(spy))
    found = discover([Root(Source.WORKSPACE, root)], options=DiscoverOptions())
    assert len(found.skills) == others + 1
    large = others + 1 >= _root_scanner._PIN_FROM
    assert opened == ([os.path.realpath(root)] if large else [])
