"""Smoke tests of the speed benchmarks (``benchmarks/*.py --quick``).

They check that each script runs end to end and prints its tables; they assert no
timings, which depend on the machine. With the oracle the catalog benchmark's own
byte-identity verdict is checked too (spec §12: the prompt is byte-identical to
OpenClaw's) on its generated 100-skill workspace.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "bench_catalog.py"
TABLE_TITLE = "skillbook catalog benchmark"
#: The three tables (in-process, ratios, processes) and columns each must have.
TABLE_HEADERS = (
    ("workload", "sb cold", "sb warm", "sb edit1", "sb disk", "stat fl", "oc opMs", "pi opMs"),
    ("workload", "cold/oc", "cold/pi", "cold/read", "warm/stat", "edit1/cold", "edit1h/cold"),
    ("workload", "sb proc", "sb nocache", "stat proc", "oc wall", "proc/stat"),
)
TIMEOUT_S = 600


def _run(
    args: list[str], out: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--out", str(out), *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
        env=env,
        cwd=REPO,
    )


def _results(out: Path) -> dict[str, Any]:
    files = sorted(out.glob("bench_catalog-*-quick.json"))
    assert len(files) == 1, f"expected one JSON result in {out}, found {files}"
    data = json.loads(files[0].read_text())
    assert isinstance(data, dict)
    return data


def _assert_table(stdout: str) -> None:
    assert TABLE_TITLE in stdout
    headers = [line for line in stdout.splitlines() if line.startswith("workload")]
    assert len(headers) == len(TABLE_HEADERS), headers
    for header, columns in zip(headers, TABLE_HEADERS, strict=True):
        for column in columns:
            assert column in header, f"column {column!r} missing from {header!r}"
    assert "start-up: `skillbook --version`" in stdout
    assert "targets (issue 11):" in stdout


@pytest.mark.subprocess
def test_quick_benchmark_without_oracle_prints_table(tmp_path: Path) -> None:
    proc = _run(["--no-oracle"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    _assert_table(proc.stdout)
    data = _results(tmp_path)
    (workload,) = data["workloads"]
    assert workload["label"] == "100"
    assert workload["loaded"] == 100, "all generated skills load (limits raised in the config)"
    assert workload["warm_matches"] is True
    assert workload["cli_matches"] is True
    assert workload["disk_matches"] is True
    assert workload["edit_matches"] is True
    assert workload["identical"] is None
    medians = workload["medians_ms"]
    for key in (
        "sb_cold",
        "sb_warm",
        "sb_edit1",
        "sb_edit1_hinted",
        "sb_disk",
        "stat_floor",
        "read_floor",
    ):
        assert medians[key] is not None, key
    for key in ("sb_process", "sb_process_nocache", "stat_process"):
        assert medians[key] is not None, key


@pytest.mark.oracle
def test_quick_benchmark_with_oracle_prompt_byte_identical(tmp_path: Path, oracle: Any) -> None:
    """§12: the catalog prompt is byte-identical to OpenClaw's (benchmark workspace)."""
    env = {**os.environ, "SKILLBOOK_ORACLE_DIR": str(oracle.root)}
    proc = _run(["--no-install"], tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    _assert_table(proc.stdout)
    assert "oracle unavailable" not in proc.stdout
    (workload,) = _results(tmp_path)["workloads"]
    assert workload["identical"] is True, workload.get("first_difference")
    assert workload["medians_ms"]["oc_op"] is not None


@pytest.mark.subprocess
def test_quick_mcp_load_benchmark_prints_its_report(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    out = tmp_path / "mcp.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "bench_mcp_load.py"),
            "--quick",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "skillbook MCP load benchmark" in proc.stdout
    assert "start-up to the first skills/list answer" in proc.stdout
    data = json.loads(out.read_text())
    kinds = {(p["kind"], p["clients"]) for p in data["phases"]}
    assert kinds == {
        ("read each once", 1),
        ("skills/list", 1),
        ("skills/list", 2),
        ("resources/read", 1),
        ("resources/read", 2),
        ("read, paced", 1),
        ("read, paced", 2),
    }
    # The paced reads keep to their rate (100/s in all for --quick), however many clients.
    paced = [p for p in data["phases"] if p["kind"] == "read, paced"]
    assert all(p["rate"] == 100.0 and p["per_s"] < 150 for p in paced)
    assert "paced reads at 100/s, p99 from 1 to 2 clients" in proc.stdout
    assert all(p["requests"] > 0 and p["errors"] == 0 for p in data["phases"])
    # The server's CPU per answer (load-robust), from /proc where there is one, and
    # the load generator's own.
    assert "per core/s" in proc.stdout
    assert all(p["client_cpu_ms"] is not None and p["workers"] == 1 for p in data["phases"])
    if Path("/proc/self/stat").is_file():
        assert all(p["server_cpu_ms"] is not None for p in data["phases"])


def _script(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / name), *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
        cwd=REPO,
    )


def test_quick_reload_benchmark_prints_its_report(tmp_path: Path) -> None:
    out = tmp_path / "reload.json"
    proc = _script("bench_reload.py", "--quick", "--no-watch", "--json", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "skillbook reload benchmark" in proc.stdout
    samples = json.loads(out.read_text())["samples"]
    assert {"cold", "refresh", "unchanged", "rebuild_edit1"} <= set(samples)


@pytest.mark.subprocess
def test_footprint_benchmark_runs_both_roots() -> None:
    proc = _script("bench_footprint.py", "--size", "40", "--repeat", "1")
    assert proc.returncode == 0, proc.stderr[-2000:]
    for line in ("plain root:", "linked root:", "cold build, recorded", "check of the record"):
        assert line in proc.stdout


@pytest.mark.subprocess
def test_parallel_parse_benchmark_runs_and_checks_both_parses_agree() -> None:
    proc = _script("bench_parallel_parse.py", "--size", "40", "--repeat", "1")
    # The script asserts that the split parse equals the serial one on every round.
    assert proc.returncode == 0, proc.stderr[-2000:]
    for line in ("parse, this process only", "parse, split (fork)", "projected cold build"):
        assert line in proc.stdout
