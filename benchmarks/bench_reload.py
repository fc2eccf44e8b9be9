#!/usr/bin/env python
"""Speed benchmark of hot reload: a cold build against a refresh after one edit.

Input: command-line options (``--size``, ``--repeat``, ``--quick``, ``--no-watch``).
Output: a plain-text table of medians (ms) and the refresh/cold ratio on stdout; with
``--json PATH`` the same figures and every raw sample as JSON.

The workspace holds N generated skills (``bench_catalog.generate_skill``, seeded) in
``<ws>/skills``, with ``skills.limits`` raised so that every skill loads and lands in
the prompt, in an isolated environment (own HOME, state dir, empty bundled dir, stub
binaries on PATH). It times:

1. ``cold``: a new ``Loader`` (no parse cache on disk) and ``.load()`` (list, stat,
   read, parse, gate, prompt);
2. ``refresh``: one SKILL.md rewritten, the version bumped, ``SkillSession.refresh()``
   on the same loader (list and stat everything again, parse one file, gate, prompt,
   snapshot, and the diff of the reload report);
3. ``unchanged``: ``SkillSession.reload()`` with nothing changed;
   then the same for the ``Loader`` alone (``rebuild_edit1``, ``rebuild_unchanged``),
   and the stat floor (list the skills folder, stat every SKILL.md) for reference;
   ``rebuild_hinted``: the ``Loader`` after one edit, told which file changed (a
   :class:`~skillbook.pipeline.cache.change_hint.ChangeHint`, what a session derives from its watcher);
4. with the watcher: the time to arm it on N folders, the time from writing a
   SKILL.md to the version bump (which includes the 250 ms debounce), and
   ``refresh_hinted``: a ``SkillSession`` with its own running watcher, timed from
   ``refresh()`` after the watcher reported one edit (the reported paths drive it;
   the reload report and the snapshot are patched at the edited position).

Usage: ``python benchmarks/bench_reload.py [--size 10000] [--repeat 5] [--quick]``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_catalog import SRC_ON_PATH, generate_skill, make_sandbox  # noqa: E402

if SRC_ON_PATH:
    sys.path.insert(0, str(HERE.parent / "src"))

import random  # noqa: E402

DEFAULT_SIZE = 10_000
DEFAULT_REPEAT = 5
DEFAULT_SEED = 20260413
QUICK_SIZE = 200
QUICK_REPEAT = 2
WATCH_WAIT_S = 30.0
TABLE_TITLE = "skillbook reload benchmark"


def make_workspace(root: Path, size: int, seed: int) -> tuple[Path, list[Path]]:
    ws = root / f"ws-{size}"
    skills = ws / "skills"
    skills.mkdir(parents=True)
    rng = random.Random(seed + size)
    taken: set[str] = set()
    files: list[Path] = []
    for i in range(size):
        folder, text = generate_skill(rng, i, taken)
        path = skills / folder / "SKILL.md"
        path.parent.mkdir()
        path.write_text(text, encoding="utf-8")
        files.append(path)
    return ws, files


def edit(path: Path, n: int) -> None:
    """Change the description (the prompt changes) and the size (a new cache identity)."""
    text = path.read_text(encoding="utf-8")
    head, sep, rest = text.partition("\ndescription: ")
    line, nl, tail = rest.partition("\n")
    path.write_text(f"{head}{sep}Edited {n} times. {line.lstrip('>-| ')}{nl}{tail}", "utf-8")


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, value


def median_ms(samples: Sequence[float]) -> float:
    return statistics.median(samples) * 1000


def run(size: int, repeat: int, seed: int, watch: bool) -> dict[str, Any]:
    from skillbook.pipeline.book import Loader
    from skillbook.pipeline.cache.change_hint import ChangeHint
    from skillbook.pipeline.snapshot import SnapshotVersions
    from skillbook.runtime._watch_parts import IGNORED_SEGMENTS
    from skillbook.runtime.session import SkillSession
    from skillbook.runtime.watch import SkillsWatcher

    out: dict[str, Any] = {"size": size, "repeat": repeat, "samples": {}, "facts": {}}
    out["facts"]["loadavg_start"] = os.getloadavg()[0]
    samples: dict[str, list[float]] = out["samples"]
    with tempfile.TemporaryDirectory(prefix="bench-reload-") as tmp:
        root = Path(tmp)
        sb = make_sandbox(root / "sandbox")
        ws, files = make_workspace(root, size, seed)

        def new_loader() -> Loader:
            # Memory only: "cold" must parse every file, and the edits below measure the
            # rebuild, not the on-disk cache's rewrite of one shard.
            return Loader(ws, config=sb.config_path, env=sb.env, cwd=sb.root, cache=False)

        new_loader().load()  # pays the one-off lazy imports (YAML, JSON5) and warms the OS cache
        for _ in range(repeat):
            seconds, book = timed(lambda: new_loader().load())
            samples.setdefault("cold", []).append(seconds)
        out["facts"]["loaded"] = len(book.skills)
        out["facts"]["in_prompt"] = len(book.catalog.kept)
        out["facts"]["prompt_chars"] = len(book.prompt)

        versions = SnapshotVersions()
        loader = new_loader()
        with SkillSession(loader, versions=versions, watch=False) as session:
            session.current()
            rng = random.Random(seed)
            for n in range(repeat):
                edit(files[rng.randrange(len(files))], n + 1)
                versions.bump(ws, reason="watch")
                seconds, report = timed(session.refresh)
                assert report is not None and len(report.changed) == 1, report
                samples.setdefault("refresh", []).append(seconds)
                out["facts"]["reparsed"] = report.reparsed
            for _ in range(repeat):
                seconds, report = timed(session.reload)
                assert report.empty
                samples.setdefault("unchanged", []).append(seconds)
            # The Loader alone (no snapshot, no report diff): one edit, then a rebuild.
            for n in range(repeat):
                edit(files[rng.randrange(len(files))], 50 + n)
                seconds, _book = timed(loader.load)
                samples.setdefault("rebuild_edit1", []).append(seconds)
            for _ in range(repeat):
                seconds, _book = timed(loader.load)
                samples.setdefault("rebuild_unchanged", []).append(seconds)
            # The Loader told which file changed: nothing else is listed or stat-ed.
            for n in range(repeat):
                path = files[rng.randrange(len(files))]
                edit(path, 70 + n)
                hint = ChangeHint.of([str(path)], [str(ws / "skills")], IGNORED_SEGMENTS)
                seconds, hinted = timed(lambda hint=hint: loader.load(hint=hint))
                assert hinted.prompt == new_loader().load().prompt, "hinted build differs"
                samples.setdefault("rebuild_hinted", []).append(seconds)

        def stat_all() -> None:
            for entry in os.scandir(ws / "skills"):
                with contextlib.suppress(OSError):
                    os.stat(entry.path + "/SKILL.md")

        for _ in range(repeat):
            samples.setdefault("stat_floor", []).append(timed(stat_all)[0])

        if watch:
            bumped = threading.Event()
            versions.subscribe(lambda _e: bumped.set())
            watcher = SkillsWatcher([ws / "skills"], versions=versions, workspace=ws)
            t0 = time.perf_counter()
            with watcher:
                if not watcher.wait_ready(WATCH_WAIT_S):
                    raise SystemExit("the watcher did not start")
                samples["arm"] = [time.perf_counter() - t0]
                for n in range(repeat):
                    bumped.clear()
                    t0 = time.perf_counter()
                    edit(files[n], 100 + n)
                    if not bumped.wait(WATCH_WAIT_S):
                        raise SystemExit("no bump seen")
                    samples.setdefault("bump", []).append(time.perf_counter() - t0)
                    time.sleep(0.1)
            out["facts"]["debounce_ms"] = watcher.debounce_ms
            # End to end: a session whose own watcher reports the edits.
            with SkillSession(new_loader(), versions=versions, watch=True) as session:
                session.current()
                own = session.watcher
                if own is None or not own.wait_ready(WATCH_WAIT_S):
                    raise SystemExit("the session's watcher did not start")
                session.reload()  # a build with the watches armed: the base of hints
                for n in range(repeat):
                    before = versions.get(ws)
                    bumped.clear()
                    edit(files[rng.randrange(len(files))], 200 + n)
                    if not bumped.wait(WATCH_WAIT_S):
                        raise SystemExit("no bump seen")
                    while versions.get(ws) == before:
                        time.sleep(0.01)
                    time.sleep(0.3)  # a second event of the same write lands in this batch
                    seconds, report = timed(session.refresh)
                    assert report is not None and report.hinted is not None, report
                    samples.setdefault("refresh_hinted", []).append(seconds)
    out["facts"]["loadavg_end"] = os.getloadavg()[0]
    return out


def render(result: dict[str, Any]) -> str:
    s, f = result["samples"], result["facts"]
    cold, refresh = median_ms(s["cold"]), median_ms(s["refresh"])
    edit1, same = median_ms(s["rebuild_edit1"]), median_ms(s["rebuild_unchanged"])
    floor = median_ms(s["stat_floor"])
    lines = [
        f"{TABLE_TITLE}: {result['size']} skills ({f['loaded']} loaded, {f['in_prompt']} in "
        f"a {f['prompt_chars']}-char prompt), median of {result['repeat']}",
        "",
        f"  cold build (new Loader, no cache)    {cold:10.1f} ms",
        f"  session refresh after one edit       {refresh:10.1f} ms   "
        f"(re-parsed {f['reparsed']} file; snapshot and report diff included)",
        f"  session reload, nothing changed      {median_ms(s['unchanged']):10.1f} ms",
        f"  Loader rebuild after one edit        {edit1:10.1f} ms",
        f"  Loader rebuild, nothing changed      {same:10.1f} ms",
        f"  stat floor (list + stat every file)  {floor:10.1f} ms",
        "",
        f"  session refresh / cold               {refresh / cold:10.3f}",
        f"  Loader rebuild after one edit / cold {edit1 / cold:10.3f}   (target <= 0.020)",
        f"  Loader rebuild unchanged / stat floor{same / floor:10.2f}   (target <= 1.5)",
        f"  Loader rebuild after one edit, hinted{median_ms(s['rebuild_hinted']):10.1f} ms   "
        f"= {median_ms(s['rebuild_hinted']) / cold:.4f} of cold (target <= 0.020)",
    ]
    if "arm" in s:
        lines += [
            f"  watcher start on {result['size']} folders      {median_ms(s['arm']):10.1f} ms",
            f"  write → version bump                 {median_ms(s['bump']):10.1f} ms   "
            f"(includes the {f['debounce_ms']} ms debounce)",
            f"  session refresh, watcher-hinted      {median_ms(s['refresh_hinted']):10.1f} ms   "
            f"= {median_ms(s['refresh_hinted']) / cold:.4f} of cold (target <= 0.020; "
            "snapshot and report included)",
        ]
    lines.append(
        f"  load average {f['loadavg_start']:.1f} at start, {f['loadavg_end']:.1f} at end "
        f"({os.cpu_count()} cores)"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=DEFAULT_SIZE)
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--quick", action="store_true", help="200 skills, 2 repeats")
    parser.add_argument("--no-watch", action="store_true", help="skip the watcher timings")
    parser.add_argument("--json", type=Path, help="write figures and raw samples here")
    args = parser.parse_args(argv)
    size = QUICK_SIZE if args.quick else args.size
    repeat = QUICK_REPEAT if args.quick else max(1, args.repeat)
    result = run(size, repeat, args.seed, watch=not args.no_watch)
    print(render(result))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
