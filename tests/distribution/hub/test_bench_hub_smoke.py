"""Smoke test of the registry load benchmark: it runs end to end; no timing is asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .processes import REPO

pytestmark = pytest.mark.subprocess


def test_bench_hub_runs_and_reports_every_workload(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "bench_hub.py"),
            "--skills",
            "8",
            "--seconds",
            "0.4",
            "--concurrency",
            "2",
            "--replicas",
            "1",
            "2",
            "--rounds",
            "1",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "skillbook registry load" in proc.stdout
    (result,) = tmp_path.glob("bench_hub-*.json")
    rows = json.loads(result.read_text())["rows"]
    seen = {(r["workload"], r["limits"], r["replicas"]) for r in rows}
    assert seen == {
        ("floor-download", "-", 1),
        ("floor-search", "-", 1),
        *(
            (w, limits, n)
            for w in ("download", "search", "search-20")
            for limits in ("off", "on")
            for n in (1, 2)
        ),
    }
    assert all(r["requests"] > 0 and r["errors"] == 0 for r in rows)
    # Issue 22: the limits' on/off ratio of every workload, paired rounds and CPU alike.
    assert all(r["on_off"] > 0 and r["on_off_cpu"] > 0 for r in rows if r["limits"] == "on")
    assert proc.stdout.count("limits on/off") == 6
    assert all(r["cpu_ms"] > 0 for r in rows)


def test_bench_hub_in_process_reports_each_step(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "bench_hub.py"),
            "--skills",
            "8",
            "--rounds",
            "1",
            "--max-requests",
            "20",
            "--in-process",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "new BM25 queries in process" in proc.stdout
    (row,) = [line for line in proc.stdout.splitlines() if line.startswith("this")]
    assert len(row.split()) == 7  # the tree, five steps and the request beyond the floor
