"""The suite runs the same on pytest-xdist workers as in one process: no timed Hypothesis
assertions, and one installer at a time for the tools installed into ``.cache``."""

from __future__ import annotations

import fcntl
import subprocess
import sys
from pathlib import Path

from cache_lock import cache_lock
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

TESTS = Path(__file__).resolve().parent

#: Tries the lock without waiting: "busy" while another process holds it, else "free".
_PROBE = """
import fcntl, sys
with open(sys.argv[1], "a+b") as handle:
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print("busy")
    else:
        print("free")
"""


def _probe(lock: Path) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, str(lock)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return proc.stdout.strip()


def test_hypothesis_has_no_deadline_and_no_too_slow_check() -> None:
    profile = settings.default
    assert profile is not None
    assert profile.deadline is None
    assert HealthCheck.too_slow in profile.suppress_health_check


@given(st.integers())
def test_a_given_test_inherits_the_profile(n: int) -> None:
    profile = settings.default
    assert profile is not None and profile.deadline is None
    assert isinstance(n, int)


def test_the_cache_lock_shuts_out_other_processes_until_released(tmp_path: Path) -> None:
    lock = tmp_path / "cache" / "tool.lock"
    with cache_lock("tool", tmp_path / "cache"):
        assert lock.is_file()
        assert _probe(lock) == "busy"
    assert _probe(lock) == "free"


def test_the_cache_lock_is_released_when_the_block_raises(tmp_path: Path) -> None:
    try:
        with cache_lock("tool", tmp_path):
            raise RuntimeError("install failed")
    except RuntimeError:
        pass
    with (tmp_path / "tool.lock").open("a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises if it were still held


def test_every_installer_into_the_cache_takes_the_lock() -> None:
    # Where a test support module installs into .cache, it does so under cache_lock.
    installers = {
        "oracle_support.py": ('cache_lock("oracle"', 'cache_lock("latest"'),
        "distribution/hub/processes.py": ("cache_lock(cache.name",),
        "distribution/registry/test_registry_oracle.py": ("cache_lock(CLI_CACHE.name",),
        "mcp/test_conformance.py": ('cache_lock("conformance"', 'cache_lock("fastmcp-venv"'),
    }
    for name, calls in installers.items():
        text = (TESTS / name).read_text(encoding="utf-8")
        for call in calls:
            assert call in text, (name, call)


def test_every_longest_first_file_exists() -> None:
    """A renamed or split file in conftest.LONGEST_FIRST would silently go back to the end
    of the pytest-xdist queue."""
    from conftest import LONGEST_FIRST

    assert [name for name in LONGEST_FIRST if not (TESTS / name).is_file()] == []
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)


def test_longest_first_puts_listed_files_first_and_keeps_each_files_order() -> None:
    from conftest import LONGEST_FIRST, longest_first

    class Item:
        def __init__(self, nodeid: str) -> None:
            self.nodeid = nodeid

    first, second = (f"{TESTS.name}/{name}" for name in LONGEST_FIRST[:2])
    items = [
        Item("tests/a_test.py::t1"),
        Item("tests/b_test.py::t1"),
        Item("tests/b_test.py::t2"),
        Item(f"{second}::x"),
        Item(f"{first}::y[2]"),
        Item(f"{first}::y[1]"),
    ]
    ordered = longest_first(items)  # type: ignore[arg-type]
    assert [i.nodeid for i in ordered] == [
        f"{first}::y[2]",
        f"{first}::y[1]",
        f"{second}::x",
        "tests/b_test.py::t1",
        "tests/b_test.py::t2",
        "tests/a_test.py::t1",
    ]
