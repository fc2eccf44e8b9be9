#!/usr/bin/env python
"""Speed benchmark of ``skillbook install``/``update``/``verify`` against a local registry.

Input: command-line options (``--skills N``, ``--repeat``, ``--quick``, ``--no-peer``).
Output: a plain-text table of medians (ms) and ratios on stdout.

The registry is the tests' ClawHub-compatible server on 127.0.0.1 serving the public
corpus's skills (``../shared/corpus``, the first N folders with a ``SKILL.md``), so the
network costs little and what is measured is the client. Rows:

- ``floor``: per skill, the bare minimum: ``GET /api/v1/download`` and unzipping into a
  folder (httpx + zipfile), no checks, no scan, no records;
- ``sb install``: per skill, ``Installer.install`` (detail, the registry's security
  verdict, download, ``/verify``, the archive rules, the security scan, fingerprint,
  tree digest and manifest, journal, atomic swap, lock);
- ``sb update (current)``: ``update --all`` when nothing changed: the drift check and one
  detail request per skill, no download;
- ``sb verify``: ``verify`` of every installed skill (hashing their files);
- ``cli install``: the real ``clawhub`` CLI 0.23.3 (node), per skill, when the tests
  installed it into ``.cache/clawhub-cli`` (``--no-peer`` skips it).

Usage: ``python benchmarks/bench_registry.py [--skills 30] [--repeat 3] [--quick]``.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))

from distribution.registry.clawhub_server import ClawHub, folder_files  # noqa: E402

from skillbook.distribution.registry.endpoint import Endpoint  # noqa: E402
from skillbook.distribution.registry.installer import Installer, InstallOptions  # noqa: E402
from skillbook.distribution.registry.updater import update_skills  # noqa: E402
from skillbook.distribution.registry.verify import verify_skills  # noqa: E402
from skillbook.distribution.registry.workdir import Workdir  # noqa: E402

CORPUS = (REPO / ".." / "shared" / "corpus").resolve()
CLI = REPO / ".cache" / "clawhub-cli" / "node_modules" / "clawhub" / "bin" / "clawdhub.js"


def corpus_skills(count: int) -> list[tuple[str, dict[str, bytes]]]:
    out: list[tuple[str, dict[str, bytes]]] = []
    seen: set[str] = set()
    for md in sorted(CORPUS.rglob("SKILL.md")):
        slug = md.parent.name.lower()
        if slug in seen or not slug.replace("-", "").isalnum():
            continue
        files = folder_files(md.parent)
        if sum(len(b) for b in files.values()) > 2_000_000:
            continue
        seen.add(slug)
        out.append((slug, files))
        if len(out) == count:
            break
    return out


def timed(func: Callable[[], object]) -> float:
    start = time.perf_counter()
    func()
    return (time.perf_counter() - start) * 1000


def floor(hub: ClawHub, slugs: list[str], into: Path) -> float:
    import httpx

    start = time.perf_counter()
    with httpx.Client() as client:
        for slug in slugs:
            body = client.get(f"{hub.url}/api/v1/download", params={"slug": slug}).content
            with zipfile.ZipFile(io.BytesIO(body)) as zf:
                zf.extractall(into / slug)
    return (time.perf_counter() - start) * 1000


def one_round(hub: ClawHub, slugs: list[str], root: Path, *, peer: bool) -> dict[str, float]:
    """Milliseconds per skill of each workload, in a fresh folder."""
    out = {"floor": floor(hub, slugs, root / "floor") / len(slugs)}
    ws = root / "ws"
    ws.mkdir()
    installer = Installer(Workdir(ws), Endpoint(hub.url))
    options = InstallOptions(state_dir=root / "state", force_reason="benchmark")
    out["sb install"] = statistics.median(
        timed(partial(installer.install, slug, options)) for slug in slugs
    )
    out["sb update (current)"] = timed(partial(update_skills, installer, None, options)) / len(
        slugs
    )
    out["sb verify"] = timed(partial(verify_skills, installer.workdir)) / len(slugs)
    if CLI.is_file() and shutil.which("node") and peer:
        cli_ws = root / "cli"
        cli_ws.mkdir()
        env = {**os.environ, "HOME": str(root / "home"), "CLAWHUB_REGISTRY": hub.url,
               "CLAWHUB_DISABLE_TELEMETRY": "1", "XDG_CONFIG_HOME": str(root / "cfg")}  # fmt: skip
        cmd = ["node", str(CLI), "--workdir", str(cli_ws), "--no-input", "install"]
        run = partial(subprocess.run, env=env, capture_output=True, check=True)
        out["cli install"] = statistics.median(timed(partial(run, [*cmd, slug])) for slug in slugs)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--skills", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="5 skills, 1 repeat")
    parser.add_argument("--no-peer", action="store_true", help="skip the clawhub CLI")
    args = parser.parse_args()
    count, repeat = (5, 1) if args.quick else (args.skills, args.repeat)
    if not CORPUS.is_dir():
        sys.exit(f"the corpus is not at {CORPUS}")
    skills = corpus_skills(count)
    slugs = [s for s, _ in skills]
    rows: dict[str, list[float]] = {}
    hub = ClawHub()
    try:
        for slug, files in skills:
            hub.state.publish(slug, "1.0.0", files)
        for _ in range(repeat):
            with tempfile.TemporaryDirectory() as tmp:
                for name, value in one_round(hub, slugs, Path(tmp), peer=not args.no_peer).items():
                    rows.setdefault(name, []).append(value)
    finally:
        hub.close()
    base = statistics.median(rows["floor"])
    print(
        f"skillbook registry benchmark: {len(slugs)} corpus skills, {repeat} repeat(s), ms per skill"
    )
    print(f"{'workload':<22}{'median ms':>12}{'x floor':>10}")
    for name, samples in rows.items():
        value = statistics.median(samples)
        print(f"{name:<22}{value:>12.1f}{value / base:>10.1f}")


if __name__ == "__main__":
    main()
