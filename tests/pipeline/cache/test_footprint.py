"""The footprint of a build (skillbook.pipeline.cache.footprint): what is recorded while active, nothing
while inactive, and when a record stops holding."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from factories import stub_bins, write_file, write_skill

from skillbook.base.env import own_env
from skillbook.pipeline.book import Loader
from skillbook.pipeline.cache import footprint
from skillbook.pipeline.cache.footprint import RecordedEnv, recording, still_valid
from skillbook.pipeline.cache.realpath_memo import RealpathMemo
from skillbook.pipeline.cache.scan_reads import scanning, stated, touch
from skillbook.pipeline.discovery import scan_fs

OLD = 1_600_000_000_000_000_000


@pytest.fixture(autouse=True)
def no_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(footprint, "RACY_NS", -(10**18))


def test_inactive_reports_are_dropped(tmp_path: Path) -> None:
    assert footprint.current() is None
    footprint.probe(tmp_path)
    footprint.binary("x", True)
    footprint.make_open("nobody listens")
    assert footprint.real(tmp_path, strict=True) == os.path.realpath(tmp_path)
    with recording() as fp:
        assert footprint.current() is fp
    assert footprint.current() is None
    assert fp.paths == {} and fp.bins == {} and fp.reasons == []


def test_recorded_env_records_reads_and_absences() -> None:
    with recording() as fp:
        env = RecordedEnv({"A": "1", "B": "2"}, fp)
        assert env.get("A") == "1"
        assert "MISSING" not in env
        assert own_env(env) is env
    assert fp.env == {"A": "1", "MISSING": None}
    assert fp.whole_env is None
    record = fp.record()
    assert record is not None
    assert still_valid(record, {"A": "1", "B": "changed"})
    assert not still_valid(record, {"A": "2"})
    assert not still_valid(record, {"A": "1", "MISSING": ""})


def test_iterating_the_env_makes_all_of_it_count() -> None:
    with recording() as fp:
        env = RecordedEnv({"A": "1"}, fp)
        assert dict(env) == {"A": "1"}
    record = fp.record()
    assert record is not None
    assert still_valid(record, {"A": "1"})
    assert not still_valid(record, {"A": "1", "NEW": "x"})


def _probed(*paths: Path) -> dict[str, object]:
    with recording() as fp:
        for path in paths:
            footprint.probe(path)
    record = fp.record()
    assert record is not None and still_valid(record, {})
    return record


def test_probes_catch_appearing_changing_and_relinked_paths(tmp_path: Path) -> None:
    file, link = tmp_path / "config.json", tmp_path / "link"
    record = _probed(file, link)
    write_file(file, "{}")
    assert not still_valid(record, {})
    record = _probed(file, link)
    os.utime(file, ns=(OLD, OLD))
    assert not still_valid(record, {})
    # A broken link where nothing was: is_file says the same, lexists does not.
    record = _probed(file, link)
    link.symlink_to(tmp_path / "nowhere")
    assert not still_valid(record, {})


def test_real_paths_are_recomputed(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    link = tmp_path / "home"
    link.symlink_to(tmp_path / "a")
    with recording() as fp:
        assert footprint.real(link, strict=True) == str(tmp_path / "a")
    record = fp.record()
    assert record is not None and still_valid(record, {})
    link.unlink()
    link.symlink_to(tmp_path / "b")
    assert not still_valid(record, {})


def test_binaries_are_looked_up_again(tmp_path: Path) -> None:
    bin_dir = stub_bins(tmp_path / "bin", ["tool"])
    env = {"PATH": str(bin_dir)}
    with recording() as fp:
        footprint.binary("tool", True)
        footprint.binary("absent", False)
    record = fp.record()
    assert record is not None and still_valid(record, env)
    (bin_dir / "tool").chmod(0o644)
    assert not still_valid(record, env)
    (bin_dir / "tool").chmod(0o755)
    stub_bins(bin_dir, ["absent"])
    assert not still_valid(record, env)


def test_a_loader_build_records_its_roots_config_and_bins(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write_skill(ws / "skills" / "one", raw='metadata: {"openclaw": {"requires": {"bins": ["t"]}}}')
    config = write_file(tmp_path / "openclaw.json", "{}")
    base = {"HOME": str(tmp_path / "home"), "SKILLBOOK_STATE_DIR": str(tmp_path / "state")}
    with recording() as fp:
        env = RecordedEnv({**base, "PATH": str(tmp_path / "bin")}, fp)
        Loader(ws, config=config, env=env, cwd=tmp_path).load()
    # The package's bundled skills and the workspace's: plain roots; the rest absent.
    assert [r[0] for r in fp.roots][-1] == str(ws / "skills")
    assert str(ws / ".agents" / "skills") in fp.paths
    assert str(config) in fp.paths
    assert fp.bins["t"] is False  # and the bundled skills' bins
    assert {"HOME", "PATH", "SKILLBOOK_STATE_DIR"} <= set(fp.env)
    assert fp.reasons == []
    assert fp.record() is not None


def test_open_and_racy_footprints_give_no_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with recording() as fp:
        footprint.make_open("a remote node")
    assert fp.record() is None
    monkeypatch.setattr(footprint, "RACY_NS", 2_000_000_000)
    fresh = write_file(tmp_path / "new", "x")
    with recording() as fp:
        footprint.probe(fresh)
    assert fp.record() is None
    old = write_file(tmp_path / "old", "x")
    os.utime(old, ns=(OLD, OLD))
    time.sleep(0)  # the ctime of `old` is still now: racy as well
    with recording() as fp:
        footprint.probe(old)
    assert fp.record() is None


def test_a_damaged_record_is_not_valid() -> None:
    with recording() as fp:
        pass
    record = fp.record()
    assert record is not None
    assert not still_valid({**record, "host": ("other",)}, {})
    assert not still_valid({"host": record["host"]}, {})
    assert not still_valid({**record, "modules": [("/nonexistent/module.py", 1, 1)]}, {})


def test_a_scan_reports_what_it_lists_and_resolves_to_its_footprint(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write_skill(root / "real")
    (root / "link").symlink_to(root / "real")
    memo = RealpathMemo()
    memo.note(str(root / "noted"), str(root / "noted"))
    with recording() as fp, scanning() as scan:
        listing = scan_fs.list_child_dirs(str(root))
        assert memo.realpath(str(root / "link")) == str(root / "real")
        memo.realpath(str(root / "noted"))
        assert scan_fs.has_file(str(root / "real" / "SKILL.md"))
    assert listing.linked == {"link"}
    # The folder (its listing), the link entry (its target), the file checked.
    assert scan.paths == {str(root), str(root / "link"), str(root / "real" / "SKILL.md")}
    # A real path the scan took; a noted one is a fact of a listing, recorded with it.
    assert scan.reals == {str(root / "link"): str(root / "real")}
    assert fp.touched == set() and fp.covered == 0
    fp.scanned(scan)
    assert fp.reals[str(root / "link"), True] == str(root / "real")
    assert fp.covered == 1
    with scanning() as scan:  # no footprint recorded: a scan costs nothing
        pass
    assert footprint.current() is None


def test_a_touched_path_gone_before_the_record_signs_its_nearest_folder(tmp_path: Path) -> None:
    gone = write_file(tmp_path / "sub" / "deeper" / "SKILL.md", "x")
    dangling = tmp_path / "sub" / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    with recording() as fp:
        with scanning() as scan:
            touch(str(gone))
            touch(str(dangling))
        fp.scanned(scan)
        gone.unlink()
        gone.parent.rmdir()
        record = fp.record()
    assert record is not None
    paths = record["paths"]
    assert paths[str(gone)] is None and paths[str(gone.parent)] is None
    assert paths[str(dangling)] is not None and len(paths[str(dangling)]) == 2
    # Their removal (or creation) changed the folder holding them.
    assert paths[str(tmp_path / "sub")] == footprint.signature(str(tmp_path / "sub"))
    assert still_valid(record, {})
    write_file(gone, "x")
    assert not still_valid(record, {})


def test_a_loader_build_of_a_root_with_links_and_groups_is_recorded(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write_skill(ws / "skills" / "one")
    write_skill(ws / "skills" / "group" / "leaf")
    (ws / "skills" / "alias").symlink_to(ws / "skills" / "one")
    base = {"HOME": str(tmp_path / "home"), "SKILLBOOK_STATE_DIR": str(tmp_path / "state")}
    with recording() as fp:
        Loader(ws, env=RecordedEnv(base, fp), cwd=tmp_path).load()
    assert fp.reasons == []
    record = fp.record()
    assert record is not None
    assert str(ws / "skills") not in [r[0] for r in fp.roots]  # not plain
    assert {str(ws / "skills"), str(ws / "skills" / "alias")} <= set(record["paths"])
    assert str(ws / "skills" / "group") in record["paths"]  # listed for its leaves
    assert still_valid(record, base)
    (ws / "skills" / "alias").unlink()
    (ws / "skills" / "alias").symlink_to(ws / "skills" / "group" / "leaf")
    assert not still_valid(record, base)


def test_a_file_stated_by_the_scan_is_signed_from_that_lstat(tmp_path: Path) -> None:
    md = write_file(tmp_path / "one" / "SKILL.md", "a")
    os.utime(md, ns=(OLD, OLD))
    with recording() as fp:
        with scanning() as scan:
            stated(str(md), os.lstat(md))
        fp.scanned(scan)
        unchanged = fp.record()
    assert unchanged is not None
    assert unchanged["paths"][str(md)] == footprint.signature(str(md))
    with recording() as fp:
        with scanning() as scan:
            stated(str(md), os.lstat(md))
        fp.scanned(scan)
        write_file(md, "bb")  # changed after the scan looked, before the record
        os.utime(md, ns=(OLD, OLD))
        changed = fp.record()
    assert changed is not None and not still_valid(changed, {})


def test_a_record_holds_for_another_link_to_the_same_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The console script runs `.venv/bin/python3`, `python -m skillbook` `.venv/bin/python`:
    # links to one interpreter, so one record serves both (no re-record on each switch).
    real = Path(os.path.realpath(sys.executable))
    for name in ("python", "python3"):
        (tmp_path / name).symlink_to(real)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python3"))
    with recording() as fp:
        pass
    record = fp.record()
    assert record is not None
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    assert still_valid(record, {})
    other = tmp_path / "other-python"
    other.write_bytes(b"")
    monkeypatch.setattr(sys, "executable", str(other))
    assert not still_valid(record, {})
