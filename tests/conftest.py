"""Shared fixtures (the public corpus, OpenClaw's own code) and the test lanes.

The corpus and the oracle live in ``../shared`` beside the checkout. Where it is
absent (a fresh clone elsewhere) the tests that need them skip with a message saying so.

Lanes: a plain ``pytest`` runs the **fast lane**: unit, property, conformance and
in-process CLI tests. Tests marked with one of :data:`SLOW_MARKERS` (oracle
comparisons, corpus runs, subprocess end-to-end and MCP process tests, lint and type
checks) form the **rest**: ``pytest --lane rest`` runs only them, ``pytest --lane all``
everything; ``.ci/run`` runs the fast lane, then the rest, each on pytest-xdist workers
(``-n``; a test file goes whole to one worker, ``--dist=loadfile`` in pyproject.toml, the
files of :data:`LONGEST_FIRST` first). Naming test files or node
ids, or selecting with ``-m``, runs what was named whatever its lane; a bare run of one
lane does not import the files that hold none of its tests, as the last whole collection
recorded them (:class:`LaneManifest`). A test that uses
the ``oracle``, ``latest_oracle`` or ``corpus_dir`` fixture is marked ``oracle`` /
``corpus`` by that alone.

What tests write on disk (skill folders, plugins, stand-in executables, isolated homes)
and how they wait for something asynchronous comes from ``factories.py``. Tools installed
into ``.cache`` on first use are installed under ``cache_lock.py``'s lock, so that workers
(and checkouts sharing one ``.cache``) never install at once.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from oracle_support import CORPUS, Oracle, latest_oracle_dir, oracle_dir

# One BLAS thread per process, set before any test module imports numpy (and so for
# every subprocess a test starts): the lanes run two to four workers on two cores, where
# OpenBLAS's own threads spin waiting for each other. Measured 2026-11-29: the
# labelled-sets comparison of the plain select path took 138 s of user CPU and 72 s of
# wall with them, 57 s and 57 s with one; `.ci/run` had grown to 1,946 s of user CPU.
# The product limits BLAS where it matters itself (selection/_blas.py); a caller's own
# setting wins.
for _blas in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_blas, "1")

# No timed assertions, Hypothesis's included: its 200 ms deadline per example (and its
# too-slow check on generating them) fail at random on two shared cores running pytest-xdist
# workers beside six other suites, where an example can take ten times its quiet time.
# A test's own @settings still wins.
settings.register_profile("skillbook", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("skillbook")

#: Markers that take a test out of the fast lane (registered in pyproject.toml).
SLOW_MARKERS = ("oracle", "corpus", "e2e", "subprocess", "lint")
LANES = ("fast", "rest", "all")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--lane",
        choices=LANES,
        default=None,
        help="fast (default for a plain `pytest`): no oracle/corpus/e2e/subprocess/lint "
        "tests; rest: only those; all: everything",
    )


def lane_of(config: pytest.Config) -> str:
    """The lane this run runs: ``--lane``, else fast for a bare run and all otherwise."""
    lane: str | None = config.getoption("--lane")
    if lane is None:
        # Named files or a -m expression say what to run; only the bare run is the fast lane.
        lane = "fast" if _bare(config) and not config.getoption("markexpr") else "all"
    return lane


def _bare(config: pytest.Config) -> bool:
    return config.args_source is pytest.Config.ArgsSource.TESTPATHS


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_MANIFEST] = LaneManifest.for_run(config)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Skip importing a test file that holds no test of this lane (:class:`LaneManifest`)."""
    return True if config.stash[_MANIFEST].skips(collection_path) else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        names = getattr(item, "fixturenames", ())
        if "oracle" in names or "latest_oracle" in names:
            item.add_marker(pytest.mark.oracle)
        if "corpus_dir" in names:
            item.add_marker(pytest.mark.corpus)
    config.stash[_MANIFEST].record(items)
    lane = lane_of(config)
    if lane != "all":
        keep: list[pytest.Item] = []
        dropped: list[pytest.Item] = []
        for item in items:
            (keep if _slow(item) == (lane == "rest") else dropped).append(item)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = keep
    items[:] = longest_first(items)


def _slow(item: pytest.Item) -> bool:
    return any(item.get_closest_marker(m) is not None for m in SLOW_MARKERS)


class LaneManifest:
    """Which test files hold tests of which lane, as the last whole collection found.

    A lane's run deselects the other lane's tests only after importing every test file,
    and importing is most of collecting: the integration tests import the Anthropic,
    OpenAI Agents, LangChain and PydanticAI SDKs (together about 8 s of CPU), and every
    pytest-xdist worker collects the whole suite. Measured 2026-11-29: 15 s of CPU per
    worker, the rest lane's four workers 60 s, its first test starting after 31 s. A
    bare run that imported every file records each file's lanes here; a later bare run
    of one lane does not import the files without a test of that lane, as long as no
    file under ``tests/`` and not ``pyproject.toml`` changed since (the key is their
    hash: a marker, a fixture or a new test changes it, and the next run collects
    everything again and records anew). ``.ci/run`` runs the fast lane, which records,
    then the rest, which reads.
    """

    def __init__(
        self, path: Path | None, key: str, lane: str, files: dict[str, list[str]], root: Path
    ) -> None:
        self.path = path
        self.key = key
        self.lane = lane
        #: Test file (relative to ``root``) -> the lanes of its tests, from the last record.
        self.files = files
        self.root = root
        self.skipped = 0

    @classmethod
    def for_run(cls, config: pytest.Config) -> LaneManifest:
        cache = getattr(config, "cache", None)
        if cache is None or not _bare(config) or config.getoption("markexpr"):
            return cls(None, "", "all", {}, config.rootpath)
        path = Path(cache.mkdir("skillbook")) / "lanes.json"
        return cls.load(path, Path(__file__).parent, lane_of(config), config.rootpath)

    @classmethod
    def load(cls, path: Path, tests: Path, lane: str, root: Path) -> LaneManifest:
        """The record at ``path`` if it was made from this very ``tests`` tree, else none."""
        digest = hashlib.sha256()
        for source in sorted([*tests.rglob("*.py"), tests.parent / "pyproject.toml"]):
            if "__pycache__" not in source.parts and source.is_file():
                digest.update(source.relative_to(tests.parent).as_posix().encode() + b"\0")
                digest.update(source.read_bytes() + b"\0")
        files: dict[str, list[str]] = {}
        try:
            saved = json.loads(path.read_text("utf-8"))
            if saved.get("key") == digest.hexdigest():
                files = saved["files"]
        except (OSError, ValueError, KeyError, AttributeError):
            pass  # none yet, or unreadable: collect everything and record
        return cls(path, digest.hexdigest(), lane, files, root)

    def skips(self, path: Path) -> bool:
        if self.lane not in ("fast", "rest") or not path.name.startswith("test_"):
            return False
        if not path.is_file() or not path.is_relative_to(self.root):
            return False
        lanes = self.files.get(path.relative_to(self.root).as_posix())
        if lanes is None or self.lane in lanes:
            return False
        self.skipped += 1
        return True

    def record(self, items: list[pytest.Item]) -> None:
        """Write the files' lanes when this run imported every file (atomically: xdist
        workers all write the same record)."""
        if self.path is None or self.skipped or self.files:
            return
        lanes: dict[str, set[str]] = {}
        for item in items:
            path = item.nodeid.split("::", 1)[0]
            lanes.setdefault(path, set()).add("rest" if _slow(item) else "fast")
        record = {"key": self.key, "files": {k: sorted(v) for k, v in sorted(lanes.items())}}
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(record), "utf-8")
            tmp.replace(self.path)
        except OSError:
            tmp.unlink(missing_ok=True)


_MANIFEST = pytest.StashKey[LaneManifest]()


#: The files that take longest (wall time, fixtures included), longest first: measured
#: per test (wall, and CPU of the worker and its reaped children) on both lanes on
#: 2026-11-29 on two quiet cores. pytest-xdist hands out whole files (``--dist
#: loadfile``) in the order of the collection; its own order (most tests first,
#: pyproject.toml turns it off with ``--no-loadscope-reorder``) started files of one to
#: three slow tests last, and one worker ran them alone while the others sat idle.
#: Started first, they run beside the many short files. ``.ci/run`` runs both lanes in
#: one session each, so the fast lane's longest files are listed too, by the same measure.
LONGEST_FIRST = (
    # mypy strict over src and tests with no cache (a clean checkout): ~85 s of CPU.
    "test_quality.py",
    # Each scenario starts both OpenClaw releases (about 4 s of CPU): 33 scenarios.
    "conformance/test_compat_oracle.py",
    "conformance/test_compat_oracle_shard1.py",
    # On a clean checkout the first test installs the clawhub CLI and OpenClaw with npm.
    "distribution/hub/test_real_clients.py",
    "selection/test_saved_selector.py",
    "e2e/test_run_chat_cli.py",
    "conformance/test_oracle_catalog_latest.py",
    "pipeline/parse/test_yaml_simple.py",
    "distribution/hub/test_deployment.py",
    "distribution/agents/test_agents_twins.py",
    "selection/test_plain.py",
    "cli/test_result_cache_differential.py",
    "e2e/test_experience_cli.py",
    "distribution/hub/test_web_pages.py",
    "e2e/test_cli.py",
    "mcp/test_conformance.py",
    "conformance/test_oracle_catalog.py",
    "distribution/sync/test_sync_oracle.py",
    "mcp/test_client.py",
    "distribution/registry/test_registry_oracle.py",
    "pipeline/parse/test_metadata_reload.py",
    "selection/test_corpus_recall.py",
    "test_benchmark_smoke.py",
    "security/test_bench_scan.py",
    "distribution/agents/test_agents_peer.py",
    "distribution/registry/test_registry_oracle9.py",
    "pipeline/validation/test_validate_skills_ref.py",
)


def longest_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """``items`` with the files of :data:`LONGEST_FIRST` first, in its order, then the
    other files by their number of tests, most first (pytest-xdist's own order); a file's
    tests keep their order. The order depends on the items alone, so every worker
    collects the same list (pytest-xdist requires it)."""
    here = Path(__file__).parent
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    rank = {
        (here / name).relative_to(here.parent).as_posix(): i for i, name in enumerate(LONGEST_FIRST)
    }
    order = sorted(
        enumerate(files.items()),
        key=lambda e: (rank.get(e[1][0], len(rank)), -len(e[1][1]), e[0]),
    )
    return [item for _, (_, group) in order for item in group]


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"public corpus not found at {CORPUS} (needs ../shared beside the checkout)")
    return CORPUS


@pytest.fixture(scope="session")
def oracle() -> Iterator[Oracle]:
    found = oracle_dir()
    if isinstance(found, str):
        pytest.skip(f"OpenClaw oracle unavailable: {found}")
    yield Oracle(found)


@pytest.fixture(scope="session")
def latest_oracle() -> Iterator[Oracle]:
    """OpenClaw 2026.9.6 (the oracle's ``latest``), installed on first use."""
    found = latest_oracle_dir()
    if isinstance(found, str):
        pytest.skip(f"OpenClaw oracle (latest) unavailable: {found}")
    yield Oracle(found, "latest")
