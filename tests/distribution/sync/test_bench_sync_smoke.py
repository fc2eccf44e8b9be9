"""Smoke test of ``benchmarks/bench_sync.py --quick``: it runs and prints its table.

No timing is asserted (they depend on the machine).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess

SCRIPT = Path(__file__).resolve().parents[3] / "benchmarks" / "bench_sync.py"


def test_quick_sync_benchmark_prints_its_table() -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--no-oracle"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert lines[0] == "skillbook sync benchmark"
    assert lines[1].split()[:2] == ["workload", "floor"]
    row = lines[2].split()
    assert row[0] == "generated-100" and row[-2:] == ["-", "-"]  # no OpenClaw column
