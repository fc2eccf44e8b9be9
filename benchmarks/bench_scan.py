#!/usr/bin/env python
"""Security scanner benchmark: detection, false positives and speed, against OpenClaw's scan.

Input: command-line options (``--repeat``, ``--quick``, ``--no-oracle``, ``--out``).
Output: three plain-text tables on stdout and the same figures as JSON in
``benchmarks/out/bench_scan-<date>-<time>.json`` (gitignored).

1. **Detection** on the malicious fixture skills (``tests/security/fixtures/malicious``,
   one per rule family, made whole by ``tests/security/fixture_tree.py``): does
   skillbook raise the expected rule, does it block (a critical finding), and does
   OpenClaw's ruleset (``ScanReport.openclaw_findings()``) block or warn?
2. **False positives** on ``../shared/corpus``: every folder holding a SKILL.md is
   scanned; how many get a critical or high finding from skillbook, how many a
   critical (blocking) or any finding from OpenClaw's ruleset, and which and why.
3. **Speed**: the whole corpus scanned cold (no cache; median of ``--repeat`` runs),
   rescanned with a warm content-hash cache (a fresh ``ScanCache`` object each run,
   so the cache is read from disk), and the floor of merely reading every file. With
   the oracle, OpenClaw's own scanner is timed on the same folders (it reads only
   JavaScript/TypeScript files, so its files/s are not comparable one to one).
4. **Processes** (issue 22's figure): ``skillbook scan --no-cache --json <corpus>`` as
   a whole process against a Python process that only walks the corpus and reads every
   file, in paired rounds (``--repeat``), medians of wall and CPU time (the children's
   ``getrusage``) and their ratios, with the load average before and after. The goal is
   a wall ratio of at most 5. ``--process-only`` runs this part alone.

   ``--baseline-src DIR`` adds the scan process of another source tree (an export of
   main) to the same rounds, for a before/after measured under the same load. The
   processes keep their compiled modules (``PYTHONDONTWRITEBYTECODE`` is dropped from
   their environment), as an installed package does.

Usage: ``python benchmarks/bench_scan.py [--repeat N] [--quick] [--no-oracle]
[--process-only] [--baseline-src DIR] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CORPUS = (REPO / ".." / "shared" / "corpus").resolve()
OUT_DIR = REPO / "benchmarks" / "out"
sys.path.insert(0, str(REPO / "tests" / "security"))
sys.path.insert(0, str(REPO / "tests"))

from fixture_tree import EXPECTED, materialize  # noqa: E402

from skillbook.security.cache import ScanCache  # noqa: E402
from skillbook.security.findings import ScanReport, Severity  # noqa: E402
from skillbook.security.scanner import scan_path  # noqa: E402

DEFAULT_REPEAT = 5

_NODE_SCAN = """
import fs from "node:fs";
const dist = process.argv[1];
const file = fs.readdirSync(dist).find((f) => /^skill-scanner-.*\\.js$/.test(f));
const { t: scan } = await import(`${dist}/${file}`);
const dirs = JSON.parse(fs.readFileSync(0, "utf8"));
const t0 = performance.now();
let files = 0;
for (const dir of dirs) files += (await scan(dir)).scannedFiles;
console.log(JSON.stringify({ ms: performance.now() - t0, files }));
"""


def _median_s(fn: Callable[[], object], repeat: int) -> tuple[float, list[float]]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), samples


def _skill_dirs(root: Path) -> list[Path]:
    return sorted({p.parent for p in root.rglob("SKILL.md")})


def _openclaw_blocks(report: ScanReport) -> bool:
    return any(f.severity is Severity.CRITICAL for f in report.openclaw_findings())


# --------------------------------------------------------------------------- detection


def detection(workdir: Path) -> dict[str, Any]:
    fixtures = materialize(workdir / "malicious")
    rows = []
    for folder, (rule, least) in sorted(EXPECTED.items()):
        report = scan_path(fixtures / folder)
        hits = [f for f in report.findings if f.rule == rule]
        rows.append(
            {
                "fixture": folder,
                "rule": rule,
                "detected": any(f.severity.at_least(Severity(least)) for f in hits),
                "blocked": bool(report.blocking()),
                "openclaw_blocked": _openclaw_blocks(report),
                "openclaw_any": bool(report.openclaw_findings()),
                "worst": None if report.worst() is None else str(report.worst()),
            }
        )
    n = len(rows)
    return {
        "fixtures": n,
        "rows": rows,
        "skillbook_detected": sum(r["detected"] for r in rows),
        "skillbook_blocked": sum(r["blocked"] for r in rows),
        "openclaw_blocked": sum(r["openclaw_blocked"] for r in rows),
        "openclaw_any": sum(r["openclaw_any"] for r in rows),
    }


def print_detection(d: dict[str, Any]) -> None:
    print("\n== Detection: malicious fixtures (one per rule family) ==")
    print(
        f"{'fixture':22s} {'rule':20s} {'sb detect':>9s} {'sb block':>8s} {'oc block':>8s} {'oc any':>6s}"
    )
    for r in d["rows"]:
        marks = [
            "yes" if r[k] else "-"
            for k in ("detected", "blocked", "openclaw_blocked", "openclaw_any")
        ]
        print(
            f"{r['fixture']:22s} {r['rule']:20s} {marks[0]:>9s} {marks[1]:>8s} {marks[2]:>8s} {marks[3]:>6s}"
        )
    n = d["fixtures"]
    print(
        f"skillbook: detected {d['skillbook_detected']}/{n}, blocked {d['skillbook_blocked']}/{n}; "
        f"OpenClaw's rules: blocked {d['openclaw_blocked']}/{n}, any finding {d['openclaw_any']}/{n}"
    )


# --------------------------------------------------------------------------- false positives


def false_positives(corpus: Path) -> dict[str, Any]:
    dirs = _skill_dirs(corpus)
    flagged = []
    sb_critical = sb_high = oc_block = oc_any = 0
    for folder in dirs:
        report = scan_path(folder)
        worst = report.worst()
        sb_critical += worst is Severity.CRITICAL
        sb_high += worst is Severity.HIGH
        oc_block += _openclaw_blocks(report)
        oc_any += bool(report.openclaw_findings())
        top = report.at_least(Severity.HIGH)
        theirs = [f for f in report.openclaw_findings() if f.severity is Severity.CRITICAL]
        if top or theirs:
            flagged.append(
                {
                    "skill": folder.relative_to(corpus).as_posix(),
                    "skillbook": [
                        f"{f.severity} {f.rule} {f.location(folder)}: {f.message}" for f in top
                    ],
                    "openclaw": [f"{f.rule} {f.location(folder)}" for f in theirs],
                }
            )
    return {
        "skills": len(dirs),
        "skillbook_critical": sb_critical,
        "skillbook_high": sb_high,
        "openclaw_blocked": oc_block,
        "openclaw_any": oc_any,
        "flagged": flagged,
    }


def print_false_positives(fp: dict[str, Any]) -> None:
    n = fp["skills"]
    print(f"\n== False positives: {n} real skills of ../shared/corpus ==")
    both = fp["skillbook_critical"] + fp["skillbook_high"]
    print(
        f"skillbook: {fp['skillbook_critical']} critical (blocked), {fp['skillbook_high']} high "
        f"-> {both}/{n} = {100 * both / n:.1f} % with a critical or high finding, "
        f"{100 * fp['skillbook_critical'] / n:.1f} % blocked"
    )
    print(
        f"OpenClaw's rules: {fp['openclaw_blocked']}/{n} = {100 * fp['openclaw_blocked'] / n:.1f} % blocked, "
        f"{fp['openclaw_any']}/{n} with any finding"
    )
    for row in fp["flagged"]:
        print(f"  {row['skill']}")
        for line in row["skillbook"]:
            print(f"    skillbook: {line}")
        for line in row["openclaw"]:
            print(f"    openclaw blocks: {line}")


# --------------------------------------------------------------------------- speed


def _read_all(dirs: list[Path]) -> int:
    total = 0
    for folder in dirs:
        for base, _subdirs, files in os.walk(folder):
            for name in files:
                path = os.path.join(base, name)
                if not os.path.islink(path):
                    with open(path, "rb") as fh:
                        total += len(fh.read())
    return total


def speed(corpus: Path, repeat: int, workdir: Path, oracle: Path | None) -> dict[str, Any]:
    dirs = _skill_dirs(corpus)
    files = sum(scan_path(d).files_scanned for d in dirs)
    cold, cold_samples = _median_s(lambda: [scan_path(d) for d in dirs], repeat)
    cache_dir = workdir / "cache"
    warm_cache = ScanCache(cache_dir)
    for d in dirs:
        scan_path(d, cache=warm_cache)
    warm, warm_samples = _median_s(
        lambda: [scan_path(d, cache=ScanCache(cache_dir)) for d in dirs], repeat
    )
    size = _read_all(dirs)
    floor, _ = _median_s(lambda: _read_all(dirs), repeat)
    out: dict[str, Any] = {
        "skills": len(dirs),
        "files": files,
        "bytes": size,
        "cold_s": cold,
        "cold_samples": cold_samples,
        "warm_s": warm,
        "warm_samples": warm_samples,
        "read_floor_s": floor,
        "files_per_s_cold": files / cold,
        "files_per_s_warm": files / warm,
        "openclaw": None,
    }
    if oracle is not None:
        dist = oracle / "node_modules" / "openclaw" / "dist"
        samples = []
        oc_files = 0
        for _ in range(repeat):
            proc = subprocess.run(
                ["node", "--input-type=module", "-e", _NODE_SCAN, str(dist)],
                input=json.dumps([str(d) for d in dirs]),
                capture_output=True,
                text=True,
                timeout=600,
                check=True,
            )
            result = json.loads(proc.stdout)
            samples.append(result["ms"] / 1000)
            oc_files = result["files"]
        out["openclaw"] = {"s": statistics.median(samples), "files": oc_files, "samples": samples}
    return out


def print_speed(s: dict[str, Any]) -> None:
    print(
        f"\n== Speed: whole corpus ({s['skills']} skills, {s['files']} files, {s['bytes'] / 1e6:.1f} MB) =="
    )
    print(
        f"cold scan (no cache)   {s['cold_s'] * 1000:8.0f} ms  {s['files_per_s_cold']:8.0f} files/s"
    )
    print(
        f"cached rescan          {s['warm_s'] * 1000:8.0f} ms  {s['files_per_s_warm']:8.0f} files/s"
        f"  (warm/cold {s['warm_s'] / s['cold_s']:.2f})"
    )
    print(
        f"read every file (floor){s['read_floor_s'] * 1000:8.0f} ms  (cold/floor {s['cold_s'] / s['read_floor_s']:.1f})"
    )
    oc = s["openclaw"]
    if oc is None:
        print("OpenClaw's scanner     (oracle not used)")
    else:
        print(
            f"OpenClaw's scanner     {oc['s'] * 1000:8.0f} ms  on its {oc['files']} JS/TS files only "
            "(in-process, caches cleared per process)"
        )


# --------------------------------------------------------------------------- processes

_READ_EVERY_FILE = """
import os, sys
total = 0
for base, _dirs, files in os.walk(sys.argv[1]):
    for name in files:
        path = os.path.join(base, name)
        if not os.path.islink(path):
            with open(path, "rb") as fh:
                total += len(fh.read())
print(total)
"""

#: Lower bound (b): what ``scan`` imports (the command line run on an empty folder, in
#: this process), then one pass over every file of the corpus with the cheapest
#: prefilter measured: the file's bytes lower-cased and one byte-level automaton over
#: every rule keyword (0.05 s over the corpus, against 0.15 s for decoding, lower-casing
#: and the scanner's ``str`` automaton, and 1.8 s for one ``re`` alternation of them).
#: It only tells which files hold a keyword: any scanner that must look at every file
#: for the rules' literals pays at least this.
_PREFILTER = """
import os, sys
import ahocorasick_rs
from skillbook.cli.app import main
try:
    main(["scan", "--no-cache", "--json", sys.argv[2]])
except SystemExit:
    pass
from skillbook.security.scanner import INDEX
words = sorted(w.encode() for w in INDEX.words)
automaton = ahocorasick_rs.BytesAhoCorasick(words, implementation=ahocorasick_rs.Implementation.DFA)
holding = 0
for base, _dirs, files in os.walk(sys.argv[1]):
    for name in files:
        path = os.path.join(base, name)
        if not os.path.islink(path):
            with open(path, "rb") as fh:
                holding += bool(automaton.find_matches_as_indexes(fh.read().lower()))
print(holding, file=sys.stderr)
"""


def _run_timed(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Wall and CPU seconds (user + system, from the children's rusage) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          check=False, timeout=900)  # fmt: skip
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.returncode


def _scan_env(workdir: Path, src: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["HOME"] = str(workdir / "home")
    env["SKILLBOOK_STATE_DIR"] = str(workdir / "state")
    env["PYTHONPATH"] = os.pathsep.join([str(src), *filter(None, [os.environ.get("PYTHONPATH")])])
    # Compiled modules are kept, as for an installed package: with this set (as in some
    # shells and CI images) every process would compile every module it imports anew.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def processes(
    corpus: Path, repeat: int, workdir: Path, baseline_src: Path | None = None
) -> dict[str, Any]:
    """``skillbook scan --no-cache`` over the corpus against a process reading every file;
    with ``baseline_src`` (another source tree, e.g. an export of main), that tree's
    scan process too, in the same rounds. Two lower bounds are timed in the same rounds:
    (a) ``scan`` of an empty folder (Python, click, the command line and the scanner's
    modules, nothing read) and (b) that plus the cheapest prefilter pass over every file
    (:data:`_PREFILTER`)."""
    env = _scan_env(workdir, REPO / "src")
    empty = workdir / "empty"
    empty.mkdir(exist_ok=True)
    scan = [sys.executable, "-m", "skillbook", "scan", "--no-cache", "--json", str(corpus)]
    floor = [sys.executable, "-c", _READ_EVERY_FILE, str(corpus)]
    imports = [sys.executable, "-m", "skillbook", "scan", "--no-cache", "--json", str(empty)]
    prefilter = [sys.executable, "-c", _PREFILTER, str(corpus), str(empty)]
    base_env = _scan_env(workdir, baseline_src) if baseline_src is not None else None
    load_before = os.getloadavg()
    # Warm the page cache and each tree's compiled modules.
    _run_timed(floor, env)
    _run_timed(scan, env)
    _run_timed(prefilter, env)
    if base_env is not None:
        _run_timed(scan, base_env)
    scans: list[tuple[float, float, int]] = []
    floors: list[tuple[float, float, int]] = []
    bases: list[tuple[float, float, int]] = []
    base_imports: list[tuple[float, float, int]] = []
    bounds: dict[str, list[tuple[float, float, int]]] = {"imports": [], "prefilter": []}
    for _ in range(repeat):
        scans.append(_run_timed(scan, env))
        floors.append(_run_timed(floor, env))
        bounds["imports"].append(_run_timed(imports, env))
        bounds["prefilter"].append(_run_timed(prefilter, env))
        if base_env is not None:
            bases.append(_run_timed(scan, base_env))
            base_imports.append(_run_timed(imports, base_env))
    load_after = os.getloadavg()
    scan_wall = statistics.median(w for w, _, _ in scans)
    scan_cpu = statistics.median(c for _, c, _ in scans)
    floor_wall = statistics.median(w for w, _, _ in floors)
    floor_cpu = statistics.median(c for _, c, _ in floors)
    out: dict[str, Any] = {
        "scan_wall_s": scan_wall,
        "scan_cpu_s": scan_cpu,
        "floor_wall_s": floor_wall,
        "floor_cpu_s": floor_cpu,
        "ratio_wall": scan_wall / floor_wall,
        "ratio_cpu": scan_cpu / floor_cpu,
        "scan_samples": scans,
        "floor_samples": floors,
        "scan_exit_codes": sorted({rc for _, _, rc in scans}),
        "load_before": load_before,
        "load_after": load_after,
        "repeat": repeat,
        "bounds": {
            name: {
                "wall_s": statistics.median(w for w, _, _ in runs),
                "cpu_s": statistics.median(c for _, c, _ in runs),
                "ratio_wall": statistics.median(w for w, _, _ in runs) / floor_wall,
                "ratio_cpu": statistics.median(c for _, c, _ in runs) / floor_cpu,
                "samples": runs,
                "exit_codes": sorted({rc for _, _, rc in runs}),
            }
            for name, runs in bounds.items()
        },
    }
    if bases:
        base_wall = statistics.median(w for w, _, _ in bases)
        base_cpu = statistics.median(c for _, c, _ in bases)
        out["baseline"] = {
            "src": str(baseline_src),
            "scan_wall_s": base_wall,
            "scan_cpu_s": base_cpu,
            "ratio_wall": base_wall / floor_wall,
            "ratio_cpu": base_cpu / floor_cpu,
            "samples": bases,
            "exit_codes": sorted({rc for _, _, rc in bases}),
            # Its bound (a): the same empty-folder scan, imports only.
            "imports_cpu_s": statistics.median(c for _, c, _ in base_imports),
            "imports_ratio_cpu": statistics.median(c for _, c, _ in base_imports) / floor_cpu,
        }
    return out


def print_processes(p: dict[str, Any]) -> None:
    print(
        f"\n== Processes: skillbook scan --no-cache against reading every file (median of {p['repeat']}) =="
    )
    print(f"scan process   {p['scan_wall_s'] * 1000:8.0f} ms wall {p['scan_cpu_s'] * 1000:8.0f} ms CPU"
          f"  (exit codes {p['scan_exit_codes']})")  # fmt: skip
    base = p.get("baseline")
    if base is not None:
        print(f"baseline scan  {base['scan_wall_s'] * 1000:8.0f} ms wall {base['scan_cpu_s'] * 1000:8.0f} ms CPU"
              f"  (exit codes {base['exit_codes']}; {base['src']})")  # fmt: skip
    print(
        f"read process   {p['floor_wall_s'] * 1000:8.0f} ms wall {p['floor_cpu_s'] * 1000:8.0f} ms CPU"
    )
    print(
        f"ratio          {p['ratio_wall']:8.1f}x wall {p['ratio_cpu']:8.1f}x CPU  (goal: <= 5x wall)"
    )
    if base is not None:
        print(f"baseline ratio {base['ratio_wall']:8.1f}x wall {base['ratio_cpu']:8.1f}x CPU")
    print("lower bounds, each against the read process (same rounds):")
    labels = {"imports": "(a) imports only: `scan` of an empty folder",
              "prefilter": "(b) (a) + the cheapest prefilter over every file"}  # fmt: skip
    for name, label in labels.items():
        b = p["bounds"][name]
        print(f"  {label:50s} {b['cpu_s'] * 1000:6.0f} ms CPU {b['ratio_cpu']:5.1f}x CPU "
              f"{b['ratio_wall']:5.1f}x wall")  # fmt: skip
    if base is not None:
        print(f"  {'(a) for the baseline':50s} {base['imports_cpu_s'] * 1000:6.0f} ms CPU "
              f"{base['imports_ratio_cpu']:5.1f}x CPU")  # fmt: skip
    print(f"  {'(c) the scan':50s} {p['scan_cpu_s'] * 1000:6.0f} ms CPU {p['ratio_cpu']:5.1f}x CPU "
          f"{p['ratio_wall']:5.1f}x wall")  # fmt: skip
    lb, la = p["load_before"], p["load_after"]
    print(
        f"load average   {lb[0]:.2f} {lb[1]:.2f} {lb[2]:.2f} -> {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}"
    )


def _oracle_dir(use: bool) -> Path | None:
    if not use or shutil.which("node") is None:
        return None
    from oracle_support import oracle_dir

    found = oracle_dir()
    return found if isinstance(found, Path) else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT)
    parser.add_argument("--quick", action="store_true", help="one repeat")
    parser.add_argument(
        "--no-oracle", action="store_true", help="do not run OpenClaw's own scanner"
    )
    parser.add_argument(
        "--process-only", action="store_true", help="only the process comparison (part 4)"
    )
    parser.add_argument(
        "--baseline-src",
        type=Path,
        help="part 4 also times the scan process of this source tree (e.g. "
        "`git archive main src | tar -x -C /tmp/main`, then /tmp/main/src), in the same rounds",
    )
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    args = parser.parse_args(argv)
    repeat = 1 if args.quick else max(1, args.repeat)
    print("skillbook security scanner benchmark")
    results: dict[str, Any] = {"repeat": repeat}
    with tempfile.TemporaryDirectory(prefix="bench-scan-") as tmp:
        work = Path(tmp)
        if args.process_only:
            if not CORPUS.is_dir():
                print(f"\n(corpus not found at {CORPUS}: nothing to time)")
                return 1
            results["processes"] = processes(CORPUS, repeat, work, args.baseline_src)
            print_processes(results["processes"])
            return _write(results, args)
        results["detection"] = detection(work)
        print_detection(results["detection"])
        if CORPUS.is_dir():
            results["false_positives"] = false_positives(CORPUS)
            print_false_positives(results["false_positives"])
            results["speed"] = speed(CORPUS, repeat, work, _oracle_dir(not args.no_oracle))
            print_speed(results["speed"])
            results["processes"] = processes(CORPUS, repeat, work, args.baseline_src)
            print_processes(results["processes"])
        else:
            print(f"\n(corpus not found at {CORPUS}: false positives and speed skipped)")
    return _write(results, args)


def _write(results: dict[str, Any], args: argparse.Namespace) -> int:
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    suffix = "-quick" if args.quick else ""
    (args.out / f"bench_scan-{stamp}{suffix}.json").write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
