"""The staged swap behind every extraction: clone, merge, exchange, recover."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from skillbook.base.atomic import exchange
from skillbook.distribution import InstallError, swap
from skillbook.distribution.swap import StagedTarget, recover


def tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): p.read_text() if p.is_file() else "<dir>"
        for p in sorted(root.rglob("*"))
    }


def make_target(tmp_path: Path) -> Path:
    target = tmp_path / "target"
    (target / "sub").mkdir(parents=True)
    (target / "a.txt").write_text("old a")
    (target / "sub" / "b.txt").write_text("old b")
    return target


def stage(staged: StagedTarget, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = staged.staging / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux-only")
def test_exchange_swaps_two_folders(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "x").write_text("from a")
    assert exchange(a, b)
    assert (b / "x").read_text() == "from a" and not (a / "x").exists()


@pytest.mark.parametrize("atomic", [True, False])
def test_commit_replaces_the_tree_and_never_writes_the_old_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, atomic: bool
) -> None:
    if not atomic:
        monkeypatch.setattr(swap, "swap_paths", lambda a, b: False)
    target = make_target(tmp_path)
    old_a = target / "a.txt"
    inode = old_a.stat().st_ino
    with StagedTarget(target) as staged:
        stage(staged, {"a.txt": "new a", "c/d.txt": "new d"})
        staged.merge_staging()
        # Until the commit, the target is untouched (the clone's a.txt was replaced, not written).
        assert tree(target) == {"a.txt": "old a", "sub": "<dir>", "sub/b.txt": "old b"}
        held = old_a.open()
        staged.commit()
    assert held.read() == "old a" and os.fstat(held.fileno()).st_ino == inode
    held.close()
    assert tree(target) == {
        "a.txt": "new a",
        "c": "<dir>",
        "c/d.txt": "new d",
        "sub": "<dir>",
        "sub/b.txt": "old b",
    }
    assert [p.name for p in tmp_path.iterdir()] == ["target"]


def test_leaving_without_commit_keeps_the_old_tree(tmp_path: Path) -> None:
    target = make_target(tmp_path)
    before = tree(target)
    with StagedTarget(target) as staged:
        stage(staged, {"a.txt": "new"})
        staged.merge_staging()
    assert tree(target) == before
    assert [p.name for p in tmp_path.iterdir()] == ["target"]


def test_recover_after_a_crash_between_two_renames(tmp_path: Path) -> None:
    target = make_target(tmp_path)
    before = tree(target)
    old = tmp_path / ".target.old-abcd1234"
    target.rename(old)  # the target went aside, the clone was not renamed in yet
    (tmp_path / ".target.tmp-abcd1234").mkdir()
    recover(target)
    assert tree(target) == before
    assert [p.name for p in tmp_path.iterdir()] == ["target"]


def test_merge_refuses_files_over_folders_and_links(tmp_path: Path) -> None:
    target = make_target(tmp_path)
    with StagedTarget(target) as staged, pytest.raises(InstallError) as info:
        stage(staged, {"sub": "a file where a folder is"})
        staged.merge_staging()
    assert info.value.message == "archive entry conflicts with an existing folder: sub"
    (target / "link").symlink_to(tmp_path)
    with StagedTarget(target) as staged, pytest.raises(InstallError) as info:
        stage(staged, {"link/x": "through the link"})
        staged.merge_staging()
    assert info.value.message == "archive entry traverses symlink in destination: link"


def test_special_files_in_the_target_stop_the_clone(tmp_path: Path) -> None:
    target = make_target(tmp_path)
    os.mkfifo(target / "pipe")
    with (
        pytest.raises(InstallError, match=r"cannot stage .*pipe: not a file, folder or link"),
        StagedTarget(target),
    ):
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == ["target"]
    assert (target / "a.txt").read_text() == "old a"
