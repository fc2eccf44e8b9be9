"""What recording a build's footprint costs (the recorder of the result cache, active
only in CLI ``prompt`` runs), and what checking the record costs.

For a generated workspace of N skills, as generated (a *plain* root: recorded as its
folder state and one identity per SKILL.md) and with one symbolic link added among
its skill folders (not plain: every read of the scan is recorded one by one, the most
a build can record): a cold in-process ``Loader`` build (nothing on disk: every file
read and parsed) without a recorder, and the same build inside
``skillbook.pipeline.cache.footprint.recording()`` plus making the record. Then
:func:`skillbook.pipeline.cache.footprint.still_valid` on that record against listing the folder and
``stat``-ing every SKILL.md in the same process. Rounds are paired; medians and
ratios are printed, never asserted.

Usage: ``python benchmarks/bench_footprint.py [--size N] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_catalog import _loader, make_generated_workspace, make_sandbox

from skillbook.pipeline.cache import footprint


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _measure(kind: str, ws: Path, sb: Any, repeat: int) -> None:
    skills = str(ws / "skills")
    plain: list[float] = []
    recorded: list[float] = []
    checks: list[float] = []
    floors: list[float] = []
    size = 0

    def build_recorded() -> dict[str, Any] | None:
        with footprint.recording() as fp:
            _loader(ws, sb).load()
        fp.reasons.clear()  # "the parse cache is off": the record is made all the same
        fp.started = time.time_ns() + footprint.RACY_NS  # files written just now
        return fp.record()

    def stat_floor() -> None:
        for entry in os.scandir(skills):
            with contextlib.suppress(OSError):
                os.stat(entry.path + "/SKILL.md")

    for round_ in range(repeat):
        # Alternate which build goes first: the second of a pair runs on a warmer heap.
        if round_ % 2:
            seconds, record = _timed(build_recorded)
            plain.append(_timed(lambda: _loader(ws, sb).load())[0])
        else:
            plain.append(_timed(lambda: _loader(ws, sb).load())[0])
            seconds, record = _timed(build_recorded)
        recorded.append(seconds)
        assert record is not None, "the footprint is open"
        roots = sum(len(files) for _, _, files, _ in record["roots"])
        size = roots + len(record["paths"]) + len(record["reals"])
        checks.append(_timed(lambda r=record, e=sb.env: footprint.still_valid(r, e))[0])
        floors.append(_timed(stat_floor)[0])
    ratios = [r / p_ for r, p_ in zip(recorded, plain, strict=True)]
    med = statistics.median
    print(f"{kind} root:")
    print(f"  cold build            {med(plain) * 1000:9.1f} ms")
    print(
        f"  cold build, recorded  {med(recorded) * 1000:9.1f} ms  "
        f"(x{med(ratios):.3f}; {size} entries in the record)"
    )
    print(
        f"  check of the record   {med(checks) * 1000:9.1f} ms  "
        f"(x{med(checks) / med(floors):.2f} the stat floor, {med(floors) * 1000:.1f} ms)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="sb-footprint-") as tmp:
        root = Path(tmp)
        ws = make_generated_workspace(root, args.size, seed=11)
        sb = make_sandbox(root / "sandbox")
        skills = ws / "skills"
        first = min(skills.iterdir())
        print(f"{args.size} skills, {args.repeat} paired rounds, load {os.getloadavg()[0]:.1f}")
        for kind in ("plain", "linked"):
            if kind == "linked":
                (skills / "zz-linked").symlink_to(first)
            _measure(kind, ws, sb, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
