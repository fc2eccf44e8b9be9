"""The suite runs the same on pytest-xdist workers as in one process: no timed Hypothesis
assertions, and one installer at a time for the tools installed into ``.cache``."""

from __future__ import annotations

import fcntl
import subprocess
import sys
from pathlib import Path

import pytest
from cache_lock import cache_lock
from fuzz_budget import FAST_SHARE, examples
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


def test_a_property_test_draws_a_share_of_its_full_count_unless_asked_for_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SKILLBOOK_FUZZ", raising=False)
    assert examples(3000) == round(3000 * FAST_SHARE) < 3000
    assert examples(12, floor=6) == 6  # a share below the floor draws the floor
    assert examples(3) == 3  # never more than the full count
    monkeypatch.setenv("SKILLBOOK_FUZZ", "full")
    assert examples(3000) == 3000
    assert examples(12, floor=6) == 12


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
        "cached_tools.py": (
            "cache_lock(cache.name",
            'cache_lock("conformance")',
            'cache_lock("fastmcp-venv")',
        ),
    }
    for name, calls in installers.items():
        text = (TESTS / name).read_text(encoding="utf-8")
        for call in calls:
            assert call in text, (name, call)
    # Nowhere else: a test module that installs a tool of its own is not installed in
    # advance by install_tools.py.
    elsewhere = [
        p.relative_to(TESTS).as_posix()
        for p in TESTS.rglob("*.py")
        if "cache_lock(" in p.read_text(encoding="utf-8")
        and p.name not in (*installers, "cache_lock.py", "test_suite_setup.py")
    ]
    assert elsewhere == []


def test_the_advance_installer_installs_every_tool_with_the_tests_own_functions() -> None:
    import cached_tools
    import oracle_support
    from install_tools import installers

    found = installers()
    assert found["openclaw-oracle"] is oracle_support.latest_oracle_dir
    tools = {
        name for name, fn in vars(cached_tools).items() if callable(fn) and not name.startswith("_")
    }
    public = {fn.__name__ for fn in found.values()} - {"latest_oracle_dir"}
    assert public == tools - {"cache_lock", "npm_cli", "Path"}


def test_the_advance_installer_needs_only_the_standard_library() -> None:
    """``.ci/run`` starts it with the system's python3, before the venv exists."""
    import ast

    local = {"cached_tools", "cache_lock", "oracle_support"}
    for name in ("install_tools.py", *(f"{m}.py" for m in local)):
        tree = ast.parse((TESTS / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                roots = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                roots = [node.module.split(".")[0]]
            else:
                continue
            foreign = [r for r in roots if r not in sys.stdlib_module_names and r not in local]
            assert foreign == [], (name, foreign)


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


class _Item:
    """What LaneManifest.record reads of a pytest item."""

    def __init__(self, nodeid: str, *markers: str) -> None:
        self.nodeid = nodeid
        self.markers = markers

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self.markers else None


def _tree(root: Path) -> Path:
    tests = root / "tests"
    for name in ("test_fast.py", "test_rest.py", "test_both.py", "conftest.py", "helper.py"):
        (tests / name).parent.mkdir(parents=True, exist_ok=True)
        (tests / name).write_text(f"# {name}\n")
    (root / "pyproject.toml").write_text("[tool.pytest]\n")
    return tests


def _recorded(root: Path) -> Path:
    from conftest import LaneManifest

    tests, path = _tree(root), root / "cache" / "lanes.json"
    path.parent.mkdir()
    first = LaneManifest.load(path, tests, "fast", root)
    assert first.files == {} and not first.skips(tests / "test_rest.py")
    items = [
        _Item("tests/test_fast.py::a"),
        _Item("tests/test_rest.py::b", "oracle"),
        _Item("tests/test_both.py::c"),
        _Item("tests/test_both.py::d[x]", "e2e"),
    ]
    first.record(items)  # type: ignore[arg-type]
    return path


def test_a_lane_skips_importing_the_files_without_a_test_of_its_own(tmp_path: Path) -> None:
    from conftest import LaneManifest

    path = _recorded(tmp_path)
    tests = tmp_path / "tests"
    rest = LaneManifest.load(path, tests, "rest", tmp_path)
    assert rest.skips(tests / "test_fast.py")
    # Files with a test of the lane, helpers, conftests and files the record never saw
    # (new since) are imported.
    (tests / "test_new.py").write_text("")
    keep = ("test_rest.py", "test_both.py", "conftest.py", "helper.py")
    assert not any(rest.skips(tests / name) for name in keep)
    fast = LaneManifest.load(path, tests, "fast", tmp_path)
    assert fast.files == {}  # test_new.py changed the tree: everything is collected again
    assert not fast.skips(tests / "test_rest.py")
    path = _recorded(tmp_path / "again")
    fast = LaneManifest.load(path, tmp_path / "again" / "tests", "fast", tmp_path / "again")
    assert fast.skips(tmp_path / "again" / "tests" / "test_rest.py")
    assert not fast.skips(tmp_path / "again" / "tests" / "test_both.py")
    # A run of every lane skips nothing.
    every = LaneManifest.load(path, tmp_path / "again" / "tests", "all", tmp_path / "again")
    assert not every.skips(tmp_path / "again" / "tests" / "test_rest.py")


def test_any_change_under_tests_or_to_pyproject_drops_the_record(tmp_path: Path) -> None:
    from conftest import LaneManifest

    for change in ("tests/helper.py", "tests/conftest.py", "pyproject.toml", "tests/test_fast.py"):
        root = tmp_path / change.replace("/", "-")
        path = _recorded(root)
        assert LaneManifest.load(path, root / "tests", "rest", root).skips(
            root / "tests/test_fast.py"
        )
        with (root / change).open("a") as handle:
            handle.write("# a marker or a fixture moved\n")
        again = LaneManifest.load(path, root / "tests", "rest", root)
        assert again.files == {} and not again.skips(root / "tests/test_fast.py"), change


def test_only_a_whole_collection_is_recorded_and_a_broken_record_is_ignored(tmp_path: Path) -> None:
    from conftest import LaneManifest

    path = _recorded(tmp_path)
    tests = tmp_path / "tests"
    before = path.read_bytes()
    rest = LaneManifest.load(path, tests, "rest", tmp_path)
    assert rest.skips(tests / "test_fast.py")
    rest.record([_Item("tests/test_rest.py::b", "oracle")])  # type: ignore[list-item]
    assert path.read_bytes() == before  # a run that skipped files records nothing
    path.write_text("{not json")
    broken = LaneManifest.load(path, tests, "rest", tmp_path)
    assert broken.files == {} and not broken.skips(tests / "test_fast.py")
    assert not list(path.parent.glob("*.tmp"))
