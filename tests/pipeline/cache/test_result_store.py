"""Kept results on disk (skillbook.pipeline.cache.result_store): where they live, corrupt and torn
files read as misses, the folder stays bounded, concurrent writers leave a whole file."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from skillbook.pipeline.cache import result_store
from skillbook.pipeline.cache.result_store import invocation_key, load, results_folder, save

RECORD = {"env": {"A": "1"}, "roots": [("/r", (1, 2, 3, 4), ("/r/a/SKILL.md",), ((1,) * 7,))]}


def test_the_folder_comes_from_the_environment(tmp_path: Path) -> None:
    assert (
        results_folder({"SKILLBOOK_CACHE_DIR": "/c", "SKILLBOOK_STATE_DIR": "/s"}) == "/c/results"
    )
    assert results_folder({"SKILLBOOK_STATE_DIR": "/s", "HOME": "/h"}) == "/s/cache/results"
    assert results_folder({"HOME": "/h"}) == "/h/.cache/skillbook/results"
    assert results_folder({"HOME": "/h", "XDG_CACHE_HOME": "/x"}) == "/x/skillbook/results"
    assert results_folder({"HOME": "/h", "SKILLBOOK_CACHE": "0"}) is None
    assert results_folder({"HOME": "/h", "SKILLBOOK_CACHE": " Off "}) is None
    assert results_folder({"SKILLBOOK_STATE_DIR": "relative"}) is None
    assert results_folder({}) is None


def test_round_trip_and_other_keys(tmp_path: Path) -> None:
    key = invocation_key(["prompt"], "/cwd")
    save(str(tmp_path), key, "text\u00e9\n", RECORD)
    assert load(str(tmp_path), key) == ("text\u00e9\n", RECORD)
    assert load(str(tmp_path), invocation_key(["prompt"], "/other")) is None
    assert load(str(tmp_path / "absent"), key) is None


def _only_file(folder: Path) -> Path:
    (file,) = folder.glob("*.result")
    return file


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty", "magic", "garbage-with-crc"])
def test_a_damaged_file_is_a_miss_and_is_rewritten(tmp_path: Path, damage: str) -> None:
    key = invocation_key(["prompt"], "/cwd")
    save(str(tmp_path), key, "text", RECORD)
    file = _only_file(tmp_path)
    raw = bytearray(file.read_bytes())
    if damage == "flip":
        raw[-3] ^= 0xFF
    elif damage == "truncate":
        raw = raw[: len(raw) // 2]
    elif damage == "empty":
        raw = bytearray()
    elif damage == "magic":
        raw[0] ^= 0xFF
    else:
        import zlib

        payload = b"\xff\xfe not marshal"
        raw = bytearray(raw[:10] + len(payload).to_bytes(4, "big"))
        raw += zlib.crc32(payload).to_bytes(4, "big") + payload
    file.write_bytes(bytes(raw))
    assert load(str(tmp_path), key) is None
    save(str(tmp_path), key, "text", RECORD)
    assert load(str(tmp_path), key) == ("text", RECORD)


def test_the_folder_keeps_the_newest_results(tmp_path: Path) -> None:
    old = 1_600_000_000_000_000_000
    total = result_store.MAX_RESULTS + 5
    for n in range(total):
        save(str(tmp_path), invocation_key([str(n)], "/cwd"), str(n), RECORD)
        # Date the new file (the only one written now) in order, so "newest" is exact.
        (new,) = (p for p in tmp_path.glob("*.result") if p.stat().st_mtime_ns > old + total)
        os.utime(new, ns=(old + n, old + n))
    kept = [n for n in range(total) if load(str(tmp_path), invocation_key([str(n)], "/cwd"))]
    assert kept == list(range(5, total))
    assert len(list(tmp_path.glob("*.result"))) == result_store.MAX_RESULTS


def _writer(folder: str, n: int) -> None:
    key = invocation_key(["prompt"], "/cwd")
    for i in range(30):
        save(folder, key, f"{n}:{i}:" + "x" * 20_000, RECORD)


@pytest.mark.subprocess
def test_concurrent_writers_leave_one_whole_file(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    workers = [ctx.Process(target=_writer, args=(str(tmp_path), n)) for n in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    assert [w.exitcode for w in workers] == [0, 0, 0, 0]
    found = load(str(tmp_path), invocation_key(["prompt"], "/cwd"))
    assert found is not None and found[0].endswith("x" * 20_000)
    assert [p.name for p in tmp_path.iterdir()] == [_only_file(tmp_path).name]


def test_a_value_marshal_cannot_write_keeps_nothing(tmp_path: Path) -> None:
    save(str(tmp_path), "key", "text", {"bad": object()})
    assert list(tmp_path.glob("*.result")) == []


def test_temporaries_of_dead_writers_are_removed(tmp_path: Path) -> None:
    old, young = tmp_path / ".abc.result.dead1234.tmp", tmp_path / ".abc.result.live1234.tmp"
    for file in (old, young):
        file.write_bytes(b"half")
    os.utime(old, ns=(1_600_000_000_000_000_000,) * 2)
    save(str(tmp_path), "key", "text", RECORD)
    assert not old.exists()
    assert young.exists()  # perhaps a writer at work right now
