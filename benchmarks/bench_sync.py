#!/usr/bin/env python
"""Speed benchmark of sandbox sync: skillbook against a plain copy and against OpenClaw.

Input: command-line options (``--sizes``, ``--repeat``, ``--quick``, ``--no-oracle``,
``--no-corpus``). Output: a plain-text table of medians (ms) and ratios on stdout.

Workloads: generated workspaces (``bench_catalog.generate_skill``, seeded; one
SKILL.md per skill plus a 4 kB script in every tenth) and the public corpus (every
folder holding a SKILL.md, copied into one workspace), in the isolated environment of
``bench_catalog`` (own HOME, state dir, empty bundled dir). Columns:

- ``floor``: ``shutil.copytree`` of ``<ws>/skills`` (links kept, ``.git`` and
  ``node_modules`` ignored): the copy alone, no discovery, no checks;
- ``sb first`` / ``sb again``: ``sync_book`` into a new target, and into a target
  that already holds a synced tree (build, exchange, delete the old tree); the book
  is loaded once beforehand;
- ``sb load+sync``: loading the workspace and syncing, what OpenClaw's op does;
- ``oc opMs``: OpenClaw's ``syncSkillsToWorkspace`` in the oracle (in-process time
  of the op: load entries, ``rm -rf``, ``fs.cp`` of every skill), second run.

Usage: ``python benchmarks/bench_sync.py [--sizes 1000,10000] [--repeat 3] [--quick]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_catalog import (  # noqa: E402
    CORPUS,
    SRC_ON_PATH,
    find_oracle,
    make_corpus_workspace,
    make_generated_workspace,
    make_sandbox,
)

if SRC_ON_PATH:
    sys.path.insert(0, str(HERE.parent / "src"))

from skillbook.config.file import Config  # noqa: E402
from skillbook.distribution.sync.workspace import sync_book  # noqa: E402
from skillbook.pipeline.book import Loader  # noqa: E402

DEFAULT_SIZES = (1000, 10_000)
DEFAULT_REPEAT = 3
DEFAULT_SEED = 20260413
QUICK_SIZES = (100,)
TABLE_TITLE = "skillbook sync benchmark"
COLUMNS = (
    "workload",
    "floor",
    "sb first",
    "sb again",
    "again/floor",
    "sb load+sync",
    "oc opMs",
    "sb/oc",
)


def _median_ms(samples: list[float]) -> float | None:
    return statistics.median(samples) * 1000 if samples else None


def _timed(fn: Callable[[], Any]) -> float:
    gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def add_scripts(workspace: Path) -> None:
    for i, folder in enumerate(sorted((workspace / "skills").iterdir())):
        if i % 10 == 0:
            (folder / "scripts").mkdir(exist_ok=True)
            (folder / "scripts" / "run.sh").write_text("#!/bin/sh\n" + "echo step\n" * 400)


def measure(
    name: str, workspace: Path, root: Path, repeat: int, oracle: Path | None
) -> dict[str, Any]:
    box = make_sandbox(root / f"box-{name}")
    config = Config.from_mapping(box.config)

    def load() -> Any:
        return Loader(workspace, config=config, env=box.env, cwd=root).load()

    def load_and_sync(target: Path) -> Any:
        return sync_book(load(), target)

    book = load()
    ignore = shutil.ignore_patterns(".git", "node_modules")
    floor, first, again, total = [], [], [], []
    for i in range(repeat):
        dest, target = root / f"floor-{name}-{i}", root / f"target-{name}-{i}"
        floor.append(
            _timed(
                partial(shutil.copytree, workspace / "skills", dest, symlinks=True, ignore=ignore)
            )
        )
        first.append(_timed(partial(sync_book, book, target)))
        again.append(_timed(partial(sync_book, book, target)))
        total.append(_timed(partial(load_and_sync, target)))
    row: dict[str, Any] = {
        "workload": f"{name} ({len(book.skills)} skills)",
        "floor": _median_ms(floor),
        "sb first": _median_ms(first),
        "sb again": _median_ms(again),
        "sb load+sync": _median_ms(total),
        "oc opMs": None,
    }
    if oracle is not None:
        request = {
            "op": "sync",
            "workspace": str(workspace),
            "targetWorkspace": str(root / f"oracle-{name}"),
            "home": str(box.home),
            "stateDir": str(box.state),
            "bundledDir": str(box.bundled),
            "path": [str(box.bin_dir)],
            "config": box.config,
            "omitMeta": False,
        }
        proc = subprocess.run(
            ["node", str(oracle / "oracle.mjs")],
            input=json.dumps([request] * (repeat + 1)),
            capture_output=True,
            text=True,
            check=False,
            timeout=1800,
        )
        out = json.loads(proc.stdout)
        failed = [r.get("error") for r in out.get("results", []) if not r.get("ok")]
        if proc.returncode != 0 or failed:
            raise RuntimeError(
                f"the oracle failed: {failed or out.get('error') or proc.stderr[-500:]}"
            )
        results = out["results"][1:]  # the first pays for imports
        row["oc opMs"] = statistics.median(float(r["opMs"]) for r in results)
    return row


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}"


def print_table(rows: list[dict[str, Any]]) -> None:
    print(TABLE_TITLE)
    print("  ".join(f"{c:>14}" if i else f"{c:<26}" for i, c in enumerate(COLUMNS)))
    for r in rows:
        cells = [
            f"{r['workload']:<26}",
            _fmt(r["floor"]),
            _fmt(r["sb first"]),
            _fmt(r["sb again"]),
            _ratio(r["sb again"], r["floor"]),
            _fmt(r["sb load+sync"]),
            _fmt(r["oc opMs"]),
            _ratio(r["sb load+sync"], r["oc opMs"]),
        ]
        print("  ".join(c if i == 0 else f"{c:>14}" for i, c in enumerate(cells)))
    print("times in ms (medians); ratios below 1 mean skillbook is faster")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=None, help="generated workspace sizes, comma-separated")
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT)
    parser.add_argument("--quick", action="store_true", help="100 skills, 1 repeat, no corpus")
    parser.add_argument("--no-oracle", action="store_true", help="skip OpenClaw")
    parser.add_argument("--no-corpus", action="store_true", help="skip the public corpus")
    args = parser.parse_args(argv)
    sizes: tuple[int, ...] = QUICK_SIZES if args.quick else DEFAULT_SIZES
    if args.sizes:
        sizes = tuple(int(s) for s in args.sizes.split(","))
    repeat = 1 if args.quick else args.repeat
    oracle: Path | None = None
    if not args.no_oracle:
        found = find_oracle(allow_install=False)
        if isinstance(found, str):
            print(f"OpenClaw column skipped: {found}", file=sys.stderr)
        else:
            oracle = found
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-sync-") as tmp:
        root = Path(tmp)
        for size in sizes:
            ws = make_generated_workspace(root, size, DEFAULT_SEED)
            add_scripts(ws)
            rows.append(measure(f"generated-{size}", ws, root, repeat, oracle))
        if not args.quick and not args.no_corpus and CORPUS.is_dir():
            ws, _ = make_corpus_workspace(root, CORPUS)
            rows.append(measure("corpus", ws, root, repeat, oracle))
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
