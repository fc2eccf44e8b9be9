"""Copying one skill folder: exclusions, links, modes, special files, races."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path
from typing import Any

import pytest
from factories import write_skill

from distribution.sync.sync_world import listing
from skillbook.distribution.sync.copytree import CopyError, copy_skill


def paths(root: Path) -> list[str]:
    return [e["path"] for e in listing(root)]


def test_git_and_node_modules_are_left_out_at_any_depth(tmp_path: Path) -> None:
    src = write_skill(tmp_path / "src")
    for rel in [".git/HEAD", "node_modules/x.js", "a/b/.git", "a/node_modules/deep/y"]:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text("x")
    for rel in [".gitignore", "a/b/node_modules_x", ".github/ci.yml"]:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text("keep")
    report = copy_skill(str(src), str(tmp_path / "dest"))
    assert paths(tmp_path / "dest") == [
        ".github",
        ".github/ci.yml",
        ".gitignore",
        "SKILL.md",
        "a",
        "a/b",
        "a/b/node_modules_x",
    ]
    assert report.files == 4


def test_contents_are_byte_identical(tmp_path: Path) -> None:
    src = write_skill(tmp_path / "src")
    (src / "big.bin").write_bytes(os.urandom(3 * (1 << 20) + 17))
    (src / "empty.txt").write_bytes(b"")
    copy_skill(str(src), str(tmp_path / "dest"))
    assert listing(tmp_path / "dest") == listing(src)


def test_openclaw_links_become_absolute_host_paths(tmp_path: Path) -> None:
    src = write_skill(tmp_path / "src")
    (src / "sub").mkdir()
    (src / "rel").symlink_to("sub/../SKILL.md")
    (src / "sub" / "up").symlink_to("../rel")
    (src / "abs").symlink_to("/etc/hostname")
    (src / "broken").symlink_to("nowhere/")
    report = copy_skill(str(src), str(tmp_path / "dest"))
    dest = tmp_path / "dest"
    assert os.readlink(dest / "rel") == str(src / "SKILL.md")  # normalised as path.resolve
    assert os.readlink(dest / "sub" / "up") == str(src / "rel")
    assert os.readlink(dest / "abs") == "/etc/hostname"
    assert os.readlink(dest / "broken") == str(src / "nowhere")
    assert sorted(rel for rel, _ in report.host_links) == ["abs", "broken", "rel", "sub/up"]


def test_a_symlinked_skill_folder_is_copied_as_a_link_like_openclaw(tmp_path: Path) -> None:
    real = write_skill(tmp_path / "real")
    (tmp_path / "alias").symlink_to("real")
    report = copy_skill(str(tmp_path / "alias"), str(tmp_path / "dest"))
    assert os.readlink(tmp_path / "dest") == str(real)
    assert report.host_links == [("", str(real))]


def test_sandbox_links_keep_inner_links_and_drop_the_rest(tmp_path: Path) -> None:
    real = write_skill(tmp_path / "real")
    (real / "sub").mkdir()
    (real / "sub" / "f").write_text("f")
    (real / "inner").symlink_to("sub/f")
    (real / "sub" / "back").symlink_to("../SKILL.md")
    (real / "escape").symlink_to("../elsewhere")
    (real / "sub" / "escape2").symlink_to("../../x")
    (real / "abs").symlink_to("/etc/passwd")
    (tmp_path / "alias").symlink_to("real")
    report = copy_skill(
        str(tmp_path / "alias"), str(tmp_path / "dest"), links="sandbox", real_src=str(real)
    )
    dest = tmp_path / "dest"
    assert not dest.is_symlink() and (dest / "SKILL.md").is_file()
    assert os.readlink(dest / "inner") == "sub/f"
    assert os.readlink(dest / "sub" / "back") == "../SKILL.md"
    assert (dest / "inner").read_text() == "f"
    assert sorted(report.dropped_links) == [
        ("abs", "/etc/passwd"),
        ("escape", "../elsewhere"),
        ("sub/escape2", "../../x"),
    ]
    assert report.host_links == []


def test_unknown_link_policy_is_a_caller_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="links must be one of"):
        copy_skill(str(write_skill(tmp_path / "s")), str(tmp_path / "d"), links="follow")


def test_modes_are_kept_but_not_set_id_bits_and_folders_stay_owner_writable(
    tmp_path: Path,
) -> None:
    src = write_skill(tmp_path / "src")
    (src / "run.sh").write_text("#!/bin/sh\n")
    (src / "run.sh").chmod(0o4755)
    (src / "ro").mkdir()
    (src / "ro" / "f").write_text("f")
    (src / "ro" / "f").chmod(0o444)
    (src / "ro").chmod(0o555)
    try:
        copy_skill(str(src), str(tmp_path / "dest"))
    finally:
        (src / "ro").chmod(0o755)
    dest = tmp_path / "dest"
    assert stat.S_IMODE((dest / "run.sh").stat().st_mode) == 0o755
    assert stat.S_IMODE((dest / "ro" / "f").stat().st_mode) == 0o444
    assert stat.S_IMODE((dest / "ro").stat().st_mode) == 0o755


def test_a_fifo_fails_the_copy_with_nodes_message(tmp_path: Path) -> None:
    src = write_skill(tmp_path / "src")
    os.mkfifo(src / "pipe")
    with pytest.raises(CopyError) as caught:
        copy_skill(str(src), str(tmp_path / "dest"), shown_dest="/target/skills/src")
    shown = "/target/skills/src/pipe"
    assert str(caught.value) == (
        f"Cannot copy a FIFO pipe: cp returned EINVAL (cannot copy a FIFO pipe: {shown}) {shown}"
    )


def test_a_socket_fails_the_copy(tmp_path: Path) -> None:
    src = write_skill(tmp_path / "src")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(src / "sock"))
        with pytest.raises(CopyError, match="Cannot copy a socket file"):
            copy_skill(str(src), str(tmp_path / "dest"))


def test_a_device_file_is_refused_not_read(tmp_path: Path) -> None:
    src = write_skill(tmp_path / "src")
    try:
        os.mknod(src / "zero", stat.S_IFCHR | 0o600, os.makedev(1, 5))
    except PermissionError:
        pytest.skip("creating a device node needs CAP_MKNOD")
    with pytest.raises(CopyError, match="Cannot copy a device file"):
        copy_skill(str(src), str(tmp_path / "dest"))


def test_a_missing_source_is_a_copy_error(tmp_path: Path) -> None:
    with pytest.raises(CopyError, match=r"^ENOENT: no such file or directory, lstat '"):
        copy_skill(str(tmp_path / "gone"), str(tmp_path / "dest"))


def _swap_after_stat(monkeypatch: pytest.MonkeyPatch, victim: str, swap: Any) -> None:
    """Make the first ``os.stat`` of ``victim`` (relative to a folder) swap it right after."""
    real_stat = os.stat
    swapped: list[bool] = []

    def stat_then_swap(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        result = real_stat(path, *args, **kwargs)
        if path == victim and kwargs.get("dir_fd") is not None and not swapped:
            swapped.append(True)
            swap()
        return result

    monkeypatch.setattr(os, "stat", stat_then_swap)


def test_a_file_swapped_for_a_symlink_mid_copy_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = tmp_path / "host-secret"
    secret.write_text("TOP SECRET")
    src = write_skill(tmp_path / "src")
    (src / "notes.txt").write_text("harmless")

    def swap() -> None:
        (src / "notes.txt").unlink()
        (src / "notes.txt").symlink_to(secret)

    _swap_after_stat(monkeypatch, "notes.txt", swap)
    with pytest.raises(CopyError, match="replaced by a symbolic link"):
        copy_skill(str(src), str(tmp_path / "dest"))
    copied = [p for p in (tmp_path / "dest").rglob("*") if p.is_file()]
    assert all(p.read_text() != "TOP SECRET" for p in copied)


def test_a_folder_swapped_for_a_symlink_mid_copy_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = tmp_path / "host"
    host.mkdir()
    (host / "id_rsa").write_text("KEY")
    src = write_skill(tmp_path / "src")
    (src / "refs").mkdir()

    def swap() -> None:
        (src / "refs").rmdir()
        (src / "refs").symlink_to(host)

    _swap_after_stat(monkeypatch, "refs", swap)
    with pytest.raises(CopyError, match="replaced by a symbolic link"):
        copy_skill(str(src), str(tmp_path / "dest"))
    assert not list((tmp_path / "dest").rglob("id_rsa"))


def test_a_file_replaced_by_another_mid_copy_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = write_skill(tmp_path / "src")
    (src / "data").write_text("one")

    def swap() -> None:
        (src / "data.new").write_text("two")
        os.replace(src / "data.new", src / "data")

    _swap_after_stat(monkeypatch, "data", swap)
    with pytest.raises(CopyError, match="changed during the copy"):
        copy_skill(str(src), str(tmp_path / "dest"))
