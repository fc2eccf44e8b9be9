"""Would parsing in several processes pay? (issue 11 §2: "parse in parallel across
processes for very large trees if it pays").

For a generated workspace of N skills: a cold in-process ``Loader`` build for scale;
the parse alone (every ``SKILL.md`` already in memory, :func:`parse_skill_text` on each,
in this process); and the same parse split over this process and W forked workers, each
worker sending its results back encoded with the parse cache's codec (the cheapest
form skillbook has for a parsed file) and this process decoding them. Also what it
costs to start one worker that is not forked (``spawn``/``forkserver``: a new
interpreter that imports the parser), for processes where forking is not safe.

Wall time and CPU (this process plus its workers) are printed as medians of paired
rounds with the load; nothing is asserted. ``projected`` is the cold build with its
parse replaced by the parallel one.

Usage: ``python benchmarks/bench_parallel_parse.py [--size N] [--repeat R] [--workers W]``.
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing as mp
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_catalog import _loader, make_generated_workspace, make_sandbox

from skillbook.pipeline.cache.parse_codec import decode_parsed, encode_parsed
from skillbook.pipeline.parse.skill_file import parse_skill_text

Files = list[tuple[Path, bytes]]


def _cpu() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)  # joined workers, in microseconds
    return time.process_time() + kids.ru_utime + kids.ru_stime


def _timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    gc.collect()
    c0, t0 = _cpu(), time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, _cpu() - c0, out


def _parse_all(files: Files) -> list[Any]:
    return [parse_skill_text(data, path=path) for path, data in files]


def _worker(files: Files, conn: Connection) -> None:
    encoded = [encode_parsed(parse_skill_text(data, path=path)) for path, data in files]
    conn.send_bytes(msgspec.msgpack.encode(encoded))
    conn.close()


def _parse_split(files: Files, workers: int) -> list[Any]:
    """This process parses the first share; each forked worker one of the others."""
    ctx = mp.get_context("fork")
    share = -(-len(files) // (workers + 1))
    parts = [files[i : i + share] for i in range(0, len(files), share)]
    started = []
    for part in parts[1:]:
        ours, theirs = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_worker, args=(part, theirs))
        proc.start()
        theirs.close()
        started.append((proc, ours, part))
    out = _parse_all(parts[0])
    for proc, conn, part in started:
        encoded = msgspec.msgpack.decode(conn.recv_bytes())
        proc.join()
        # A file the codec cannot hold (None) is parsed here, as the parse cache does.
        out.extend(
            decode_parsed(blob) if blob is not None else parse_skill_text(data, path=path)
            for blob, (path, data) in zip(encoded, part, strict=True)
        )
    return out


def _spawn_cost() -> float:
    argv = [
        sys.executable,
        "-c",
        "import skillbook.pipeline.parse.skill_file, skillbook.pipeline.cache.parse_codec",
    ]
    t0 = time.perf_counter()
    subprocess.run(argv, check=True)
    return time.perf_counter() - t0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--workers", type=int, default=1, help="forked workers besides this process")
    args = p.parse_args(argv)
    med = statistics.median
    with tempfile.TemporaryDirectory(prefix="sb-parallel-") as tmp:
        root = Path(tmp)
        ws = make_generated_workspace(root, args.size, seed=13)
        sb = make_sandbox(root / "sandbox")
        files = [(md, md.read_bytes()) for md in sorted((ws / "skills").glob("*/SKILL.md"))]
        print(
            f"{args.size} skills, {args.repeat} paired rounds, {args.workers} forked "
            f"worker(s) besides this process, {os.cpu_count()} CPUs, "
            f"load {os.getloadavg()[0]:.1f}"
        )
        cold: list[float] = []
        serial: list[tuple[float, float]] = []
        split: list[tuple[float, float]] = []
        for _ in range(args.repeat):
            cold.append(_timed(lambda: _loader(ws, sb).load())[0])
            wall, cpu, one = _timed(lambda: _parse_all(files))
            serial.append((wall, cpu))
            wall, cpu, two = _timed(lambda: _parse_split(files, args.workers))
            split.append((wall, cpu))
            assert one == two, "the parallel parse differs from the serial one"
        spawn = med(_spawn_cost() for _ in range(3))
    c, sw, sc = med(cold), med(w for w, _ in serial), med(c_ for _, c_ in serial)
    pw, pc = med(w for w, _ in split), med(c_ for _, c_ in split)
    print(f"  cold build                 {c * 1000:8.1f} ms wall")
    print(f"  parse, this process only   {sw * 1000:8.1f} ms wall {sc * 1000:8.1f} ms CPU")
    print(
        f"  parse, split (fork)        {pw * 1000:8.1f} ms wall {pc * 1000:8.1f} ms CPU  "
        f"(x{pw / sw:.2f} wall, x{pc / max(sc, 1e-6):.2f} CPU)"
    )
    print(
        f"  projected cold build       {(c - sw + pw) * 1000:8.1f} ms  (x{(c - sw + pw) / c:.2f})"
    )
    print(f"  start of one spawned worker {spawn * 1000:7.1f} ms wall (import of the parser)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
