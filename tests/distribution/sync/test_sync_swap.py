"""Replacing a folder in one step, cleaning up after crashes, and the per-folder lock."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from distribution.sync.sync_world import listing, lock_held_elsewhere
from skillbook.base import locks
from skillbook.distribution import swap


def tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def staged(dest: Path, files: dict[str, str]) -> Path:
    return tree(swap.make_staging(dest), files)


def test_staging_is_a_hidden_sibling_with_umask_permissions(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        staging = swap.make_staging(tmp_path / "skills")
    finally:
        os.umask(old)
    assert staging.parent == tmp_path
    assert staging.name.startswith(".skills.tmp-") and len(staging.name) == len(".skills.tmp-") + 8
    assert stat.S_IMODE(staging.stat().st_mode) == 0o755


def test_first_sync_is_a_plain_rename(tmp_path: Path) -> None:
    dest = tmp_path / "skills"
    assert swap.replace_tree(staged(dest, {"a/SKILL.md": "new"}), dest) == "rename"
    assert (dest / "a" / "SKILL.md").read_text() == "new"


@pytest.mark.parametrize("exchange", [True, False])
def test_replacing_keeps_the_new_tree_and_removes_the_old(tmp_path: Path, exchange: bool) -> None:
    dest = tree(tmp_path / "skills", {"old/SKILL.md": "old", "old/deep/x": "x"})
    staging = staged(dest, {"new/SKILL.md": "new"})
    inode = staging.stat().st_ino
    how = swap.replace_tree(staging, dest, exchange=exchange)
    assert how == ("exchange" if exchange else "two-step")
    assert [e["path"] for e in listing(dest)] == ["new", "new/SKILL.md"]
    assert dest.stat().st_ino == inode  # the built tree itself, not a copy of it
    assert sorted(os.listdir(tmp_path)) == ["skills"]


def test_a_symlink_in_the_way_is_replaced_not_followed(tmp_path: Path) -> None:
    elsewhere = tree(tmp_path / "elsewhere", {"precious.txt": "keep me"})
    dest = tmp_path / "skills"
    dest.symlink_to(elsewhere)
    swap.replace_tree(staged(dest, {"a/SKILL.md": "new"}), dest)
    assert not dest.is_symlink() and (dest / "a" / "SKILL.md").is_file()
    assert (elsewhere / "precious.txt").read_text() == "keep me"


def test_recover_removes_every_kind_of_leftover(tmp_path: Path) -> None:
    dest = tree(tmp_path / "skills", {"a": "current"})
    for kind in ("tmp", "old", "new"):
        tree(swap.staging_name(dest, kind, f"{kind}00000"), {"f": kind})
    left = swap.recover(dest)
    assert sorted(x.action for x in left) == ["removed"] * 3
    assert sorted(os.listdir(tmp_path)) == ["skills"]
    assert (dest / "a").read_text() == "current"


def test_recover_leaves_lookalikes_alone(tmp_path: Path) -> None:
    dest = tmp_path / "skills"
    dest.mkdir()
    names = [
        ".skills.tmp-ABCDEFGH",
        ".skills.tmp-short",
        ".other.tmp-abcdefgh",
        ".skills.tmp-abcdefgh.x",
    ]
    for name in names:
        (tmp_path / name).mkdir()
    assert swap.recover(dest) == []
    assert sorted(os.listdir(tmp_path)) == sorted([*names, "skills"])


def test_recover_unlinks_a_planted_link_without_touching_its_target(tmp_path: Path) -> None:
    victim = tree(tmp_path / "victim", {"data": "keep"})
    dest = tmp_path / "skills"
    dest.mkdir()
    swap.staging_name(dest, "tmp", "abcdefgh").symlink_to(victim)
    assert [x.action for x in swap.recover(dest)] == ["removed"]
    assert (victim / "data").read_text() == "keep"


def test_recover_completes_a_two_step_swap_cut_short(tmp_path: Path) -> None:
    """Crash after ``dest`` went aside and before the new tree came in: roll forward."""
    dest = tmp_path / "skills"
    tree(swap.staging_name(dest, "old", "abcdefgh"), {"x": "old"})
    tree(swap.staging_name(dest, "new", "abcdefgh"), {"x": "new"})
    actions = [x.action for x in swap.recover(dest)]
    assert actions == ["completed", "removed"]
    assert (dest / "x").read_text() == "new"
    assert sorted(os.listdir(tmp_path)) == ["skills"]


def test_recover_restores_the_old_tree_when_no_complete_new_one_exists(tmp_path: Path) -> None:
    dest = tmp_path / "skills"
    tree(swap.staging_name(dest, "old", "abcdefgh"), {"x": "old"})
    tree(swap.staging_name(dest, "tmp", "ijklmnop"), {"x": "half"})
    actions = [x.action for x in swap.recover(dest)]
    assert actions == ["restored", "removed"]
    assert (dest / "x").read_text() == "old"


@pytest.mark.parametrize("workers", [1, 4])
def test_remove_tree_handles_files_links_and_absent_paths(tmp_path: Path, workers: int) -> None:
    target = tree(tmp_path / "target", {"f": "keep"})
    (tmp_path / "link").symlink_to(target)
    swap.remove_tree(tmp_path / "link", workers=workers)
    swap.remove_tree(tmp_path / "absent", workers=workers)
    big = tree(tmp_path / "big", {f"d{i}/f": "x" for i in range(20)})
    (big / "to-target").symlink_to(target)
    (big / "top-file").write_text("x")
    swap.remove_tree(big, workers=workers)
    (tmp_path / "file").write_text("x")
    swap.remove_tree(tmp_path / "file")
    assert sorted(os.listdir(tmp_path)) == ["target"]
    assert (target / "f").read_text() == "keep"


@pytest.fixture
def nobody_dir() -> Iterator[Path]:
    """A folder an unprivileged user can reach (pytest's tmp_path is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="skillbook-sync-"))
    folder.chmod(0o777)
    try:
        yield folder
    finally:
        swap.remove_tree(folder)


@pytest.mark.parametrize("workers", [1, 4])
def test_remove_tree_clears_read_only_folders(nobody_dir: Path, workers: int) -> None:
    """A tree of read-only folders (say, OpenClaw's copy of read-only sources) is removed.

    Root may delete anything, so when the tests run as root the removal runs in a
    forked child that has dropped to an unprivileged user.
    """
    top = tree(nobody_dir / "old", {"a/b/f": "x", "a/g": "y", "c/h": "z"})
    for folder in (top / "a" / "b", top / "a", top / "c"):
        folder.chmod(0o500)
    (top / "c").chmod(0o000)
    if os.geteuid() != 0:
        swap.remove_tree(top, workers=workers)
    else:
        for path in [top, *top.rglob("*")]:
            os.chown(path, 65534, 65534, follow_symlinks=False)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child reports through its exit code
            code = 1
            try:
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
                swap.remove_tree(top, workers=workers)
                code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    assert not top.exists()


@pytest.mark.subprocess
def test_the_folder_lock_excludes_other_processes(tmp_path: Path) -> None:
    with (
        lock_held_elsewhere(tmp_path),
        pytest.raises(locks.FolderBusy),
        locks.folder_lock(tmp_path, wait=False),
    ):
        pass
    with locks.folder_lock(tmp_path, wait=False):
        pass


@pytest.mark.subprocess
def test_the_lock_is_released_when_its_holder_is_killed(tmp_path: Path) -> None:
    with lock_held_elsewhere(tmp_path) as proc:
        proc.kill()
        proc.wait()
        with locks.folder_lock(tmp_path, wait=False):
            pass


def test_a_failed_cleanup_is_reported_and_the_new_tree_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dest = tree(tmp_path / "skills", {"x": "old"})
    staging = staged(dest, {"x": "new"})
    real_remove = swap.remove_tree

    def refuse(path: object, **_: object) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(swap, "remove_tree", refuse)
    failures: list[tuple[Path, OSError]] = []
    swap.replace_tree(staging, dest, on_cleanup_error=lambda p, e: failures.append((p, e)))
    assert (dest / "x").read_text() == "new"
    assert [p.name for p, _ in failures] == [staging.name]  # the old tree, after the exchange
    with pytest.raises(PermissionError):
        swap.replace_tree(staged(dest, {"x": "newer"}), dest)
    monkeypatch.setattr(swap, "remove_tree", real_remove)
    assert [x.action for x in swap.recover(dest)] == ["removed", "removed"]
