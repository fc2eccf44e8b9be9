"""``skillbook.base.fs``: contained opens, symlink loops, and discovery under a folder swap."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from factories import skill_text, write_file, write_skill
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from races import OUTSIDE_MARKER, FolderSwapper, outside_copy

from skillbook.base import fs as _fs
from skillbook.base import listing as _listing
from skillbook.base import verified_read as _verified_read
from skillbook.model import Source
from skillbook.pipeline.discovery import root_scanner as _root_scanner
from skillbook.pipeline.discovery.discover import DiscoverOptions, Root, discover

#: Discovery passes under the swap; each reads the swapped skill's SKILL.md anew.
DISCOVERY_ROUNDS = 400


# --------------------------------------------------------------------------- open_contained


def test_open_contained_reads_a_file_below_its_anchor(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "f.txt").write_text("hello")
    anchor = os.path.realpath(tmp_path)
    fd = _fs.open_contained(os.path.join(anchor, "a", "b", "f.txt"), anchor)
    try:
        assert os.read(fd, 100) == b"hello"
    finally:
        os.close(fd)


def test_open_contained_refuses_a_symlinked_component(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text(OUTSIDE_MARKER)
    root = tmp_path / "root"
    root.mkdir()
    (root / "a").symlink_to(outside, target_is_directory=True)
    anchor = os.path.realpath(root)
    with pytest.raises(OSError) as caught:
        _fs.open_contained(os.path.join(anchor, "a", "f.txt"), anchor)
    # Refused by the component walk (ELOOP/ENOTDIR) or, on Linux, by the kernel path.
    assert caught.value.errno in (errno.ELOOP, errno.ENOTDIR, errno.ESTALE)
    # With the anchor's identity the walk runs everywhere: the symlink is never followed.
    seen = os.stat(anchor)
    with pytest.raises(OSError) as walked:
        _fs.open_contained(
            os.path.join(anchor, "a", "f.txt"), anchor, anchor_identity=(seen.st_dev, seen.st_ino)
        )
    assert walked.value.errno in (errno.ELOOP, errno.ENOTDIR)


def test_open_contained_refuses_a_replaced_anchor(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "f.txt").write_text("x")
    anchor = os.path.realpath(root)
    seen = os.stat(anchor)
    os.rename(root, tmp_path / "old")
    root.mkdir()
    (root / "f.txt").write_text("y")
    with pytest.raises(_fs.PathChanged):
        _fs.open_contained(
            os.path.join(anchor, "f.txt"), anchor, anchor_identity=(seen.st_dev, seen.st_ino)
        )


def test_open_contained_refuses_paths_outside_the_anchor(tmp_path: Path) -> None:
    anchor = os.path.realpath(tmp_path / "x")
    with pytest.raises(_fs.PathChanged):
        _fs.open_contained(os.path.realpath(tmp_path / "y" / "f"), anchor)


@pytest.mark.skipif(_fs.fd_path(0) is None, reason="the kernel does not name open files here")
def test_fd_path_names_the_opened_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    real = os.path.realpath(tmp_path / "f")
    fd = os.open(real, os.O_RDONLY)
    try:
        assert _fs.fd_path(fd) == real
    finally:
        os.close(fd)


# --------------------------------------------------------------------------- loops


def test_symlink_loops_are_listed_apart_from_broken_links(tmp_path: Path) -> None:
    (tmp_path / "self").symlink_to("self")
    (tmp_path / "ping").symlink_to("pong")
    (tmp_path / "pong").symlink_to("ping")
    (tmp_path / "gone").symlink_to("nowhere")
    listing = _listing.list_child_dirs(os.fspath(tmp_path))
    assert sorted(listing.looped_links) == ["ping", "pong", "self"]
    assert listing.broken_links == ("gone",)
    assert _fs.is_symlink_loop(os.fspath(tmp_path / "self"))
    assert not _fs.is_symlink_loop(os.fspath(tmp_path / "gone"))


def test_discovery_reports_symlink_loops(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root / "ok")
    (root / "self").symlink_to("self")
    (root / "ping").symlink_to("pong")
    (root / "pong").symlink_to("ping")
    (root / "md").mkdir()
    (root / "md" / "SKILL.md").symlink_to("SKILL.md")
    loop_root = tmp_path / "loop-root"
    loop_root.symlink_to("loop-root")
    found = discover([Root(Source.WORKSPACE, root), Root(Source.EXTRA, loop_root)])
    assert [s.name for s in found.skills] == ["ok"]
    loops = {(d.path.name if d.path else "", d.severity) for d in found.diagnostics
             if d.code == "discover.symlink-loop"}  # fmt: skip
    assert loops == {("self", "warning"), ("ping", "warning"), ("pong", "warning"),
                     ("SKILL.md", "error")}  # fmt: skip
    missing = [d for d in found.diagnostics if d.code == "discover.root-missing"]
    assert len(missing) == 1 and "loops back to itself" in missing[0].message


# --------------------------------------------------------------------------- the race


@pytest.mark.parametrize(
    "others",
    [1, _root_scanner._PIN_FROM],
    ids=["per-file-check", "pinned-root"],
)
def test_discovery_never_loads_a_skill_md_from_outside_under_a_folder_swap(
    tmp_path: Path, others: int
) -> None:
    """The skill folder is swapped for a symlink to an outside copy between the listing
    and the read; no pass may load the outside SKILL.md. A small root checks each
    file's kernel path; a large one is held open (skillbook.base.pinned_root)."""
    root = tmp_path / "skills"
    victim = write_skill(root / "victim")
    names = ["victim", *(f"other-{i}" for i in range(others))]
    for name in names[1:]:
        write_skill(root / name)
    outside = tmp_path / "outside" / "victim"
    outside_copy(victim, outside)
    options = DiscoverOptions()
    with FolderSwapper(victim, outside, real_hold=1) as swapper:
        for i in range(DISCOVERY_ROUNDS):
            found = discover([Root(Source.WORKSPACE, root)], options=options)
            for s in found.skills:
                assert OUTSIDE_MARKER not in s.description, s
                assert OUTSIDE_MARKER not in s.parsed.body
            if i % 40 == 0:
                with swapper.in_place():
                    found = discover([Root(Source.WORKSPACE, root)], options=options)
                assert sorted(s.name for s in found.skills) == sorted(names)
    assert swapper.swaps > 0


def test_a_folder_swapped_between_check_and_open_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    victim = write_skill(root / "victim")
    outside = tmp_path / "outside" / "victim"
    outside_copy(victim, outside)
    root_real = os.path.realpath(victim)
    md = os.path.join(root_real, "SKILL.md")
    checked = _verified_read.verify_file(
        md, root_real=root_real, max_bytes=1 << 20, dir_real=root_real
    )
    assert isinstance(checked, _verified_read.Verified)
    os.rename(victim, root / "victim.aside")
    victim.symlink_to(outside, target_is_directory=True)
    got = _verified_read.read_verified(checked, max_bytes=1 << 20)
    assert isinstance(got, _verified_read.ReadFailure) and got.kind == _verified_read.CHANGED
    code, _, message = _verified_read.describe_failure(got, md)
    assert code == "discover.unreadable" and "changed between its check" in message


@settings(max_examples=60, deadline=None)
@given(
    length=st.sampled_from([0, 1, 7, 4096, (1 << 20) - 1, 1 << 20, (1 << 20) + 3]),
    limit=st.sampled_from([1, 8, 5000, 1 << 20, 3 << 20]),
    stale=st.sampled_from([0, -1, 1, 100]),
)
def test_read_at_most_told_the_size_reads_what_it_reads_without(
    tmp_path_factory: pytest.TempPathFactory, length: int, limit: int, stale: int
) -> None:
    """The size from ``fstat`` only spares the empty read that finds the end; a size
    that is out of date (the file grew or shrank since) changes nothing."""
    path = tmp_path_factory.mktemp("read") / "f"
    path.write_bytes(bytes(i % 251 for i in range(length)))
    fd = os.open(path, os.O_RDONLY)
    try:
        told = _fs.read_at_most(fd, limit, max(0, os.fstat(fd).st_size + stale))
        os.lseek(fd, 0, os.SEEK_SET)
        plain = _fs.read_at_most(fd, limit)
    finally:
        os.close(fd)
    assert told == plain == path.read_bytes()[:limit]


def test_read_at_most_told_the_size_makes_one_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "SKILL.md"
    write_file(path, skill_text("x", None, body=""))
    reads: list[int] = []
    real_read = os.read

    def counting_read(fd: int, n: int) -> bytes:
        reads.append(n)
        return real_read(fd, n)

    fd = os.open(path, os.O_RDONLY)
    try:
        monkeypatch.setattr(os, "read", counting_read)
        assert _fs.read_at_most(fd, 1 << 20, os.fstat(fd).st_size) == path.read_bytes()
        assert len(reads) == 1
        os.lseek(fd, 0, os.SEEK_SET)
        assert _fs.read_at_most(fd, 1 << 20) == path.read_bytes()
        assert len(reads) == 3  # without the size, an empty read finds the end
    finally:
        os.close(fd)


def test_read_at_most_told_the_size_asks_for_no_bigger_buffer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``os.read`` allocates what it is asked for: told the size, a small file is read
    into a buffer one byte larger, not 1 MiB (issue 22: that allocation cost more than
    the read); a file that grew since still comes back whole."""
    path = tmp_path / "SKILL.md"
    write_file(path, skill_text("x", None, body="b" * 3000))
    asked: list[int] = []
    real_read = os.read

    def recording_read(fd: int, n: int) -> bytes:
        asked.append(n)
        return real_read(fd, n)

    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        monkeypatch.setattr(os, "read", recording_read)
        assert _fs.read_at_most(fd, 1 << 20, size) == path.read_bytes()
        assert asked == [size + 1]
        os.lseek(fd, 0, os.SEEK_SET)
        asked.clear()
        # Told a size 10 bytes short (the file grew after the fstat): read to the end.
        assert _fs.read_at_most(fd, 1 << 20, size - 10) == path.read_bytes()
        assert asked[0] == size - 9 and len(asked) == 3
    finally:
        os.close(fd)


@settings(max_examples=300, deadline=None)
@given(
    base=st.sampled_from(["/", "/r", "/r/skills", "/a b/é", "/x/"]),
    name=st.text(alphabet=st.sampled_from(["a", ".", " ", "é", "-", "\\", "~"]), min_size=1).filter(
        lambda n: n not in (".", "..")
    ),
)
def test_an_entry_joined_to_a_real_folder_is_inside_it(base: str, name: str) -> None:
    """Why the root scanner takes a listed, non-link folder as inside its real root
    without the containment test: a folder entry joined to a path lies below it."""
    assert _fs.is_path_inside(base, _fs.join(base, name))


_SEGMENT = st.sampled_from(["a", "b", ".", "..", "", "..a", "a.."])


@given(st.lists(_SEGMENT, min_size=1, max_size=6))
def test_climbs_out_is_is_path_inside_for_relative_paths(parts: list[str]) -> None:
    # The relative rule and the absolute one agree: a path climbs out of a folder
    # exactly when, joined to it, it is not inside it.
    relative = "/".join(parts)
    assume(not relative.startswith("/"))  # absolute paths: the callers refuse them first
    root = "/r/o/o/t"
    joined = os.path.normpath(os.path.join(root, relative))
    assert _fs.climbs_out(relative) == (not _fs.is_path_inside(root, joined))


def test_read_file_at_most_reads_no_more_than_asked(tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_bytes(b"x" * 5000)
    assert _fs.read_file_at_most(path, 10) == b"x" * 10
    assert _fs.read_file_at_most(path, 10_000) == b"x" * 5000
    with pytest.raises(FileNotFoundError):
        _fs.read_file_at_most(tmp_path / "missing", 10)
