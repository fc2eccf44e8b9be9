"""Smoke test of ``benchmarks/bench_scan.py --quick --no-oracle``: it runs and prints its tables.

No timing is asserted; the detection line is, since it is deterministic.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.subprocess
def test_quick_benchmark_runs(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_scan.py"), "--quick", "--no-oracle",
         "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=600, check=False, cwd=REPO,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "== Detection: malicious fixtures" in proc.stdout
    assert "skillbook: detected 20/20" in proc.stdout
    (result,) = tmp_path.glob("bench_scan-*-quick.json")
    data = json.loads(result.read_text())
    assert data["detection"]["skillbook_detected"] == data["detection"]["fixtures"]
    if (REPO / ".." / "shared" / "corpus").is_dir():
        assert "== False positives:" in proc.stdout and "== Speed:" in proc.stdout
        assert "== Processes: skillbook scan --no-cache" in proc.stdout
        assert data["processes"]["scan_exit_codes"] == [0]
        assert data["processes"]["ratio_wall"] > 0
        # The lower bounds run in the same rounds and exit cleanly.
        bounds = data["processes"]["bounds"]
        assert bounds["imports"]["exit_codes"] == [0]
        assert bounds["prefilter"]["exit_codes"] == [0]
        assert "(b) (a) + the cheapest prefilter" in proc.stdout
        assert data["false_positives"]["skillbook_critical"] == 0
