"""Smoke test of the speed benchmark (``benchmarks/bench_catalog.py --quick``).

It checks that the script runs end to end and prints its table; it asserts no
timings, which depend on the machine. With the oracle it also checks the
benchmark's own byte-identity verdict (spec §12: the prompt is byte-identical to
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
TABLE_HEADER = ("workload", "sb cold", "sb warm", "warm/cold", "oc opMs", "identical")
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
    header = next((line for line in stdout.splitlines() if line.startswith("workload")), "")
    for column in TABLE_HEADER:
        assert column in header, f"column {column!r} missing from {header!r}"


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
    assert workload["identical"] is None


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
