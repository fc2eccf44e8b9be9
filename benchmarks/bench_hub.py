#!/usr/bin/env python
"""Load benchmark of ``skillbook registry serve``: downloads and searches per second, as ratios to a floor.

Input: command-line options. Output: a table on stdout (requests per second, median
and 95th-percentile latency, errors, the ratio to the floor, the servers' CPU per
request, and rate limits on/off: the median of the rounds' paired ratios)
and the raw numbers as JSON in ``benchmarks/out/bench_hub-<date>-<time>.json``.

Everything is on 127.0.0.1 and bounded: each measurement runs for ``--seconds``
(at most ``--max-requests`` requests) from ``--concurrency`` client threads, each
with a minimal keep-alive HTTP/1.1 client (:class:`Wire`), and each request names a
client address from a pool of 4,096 (``X-Forwarded-For``, believed from 127.0.0.1)
as a registry's many clients would. The registry holds ``--skills`` generated
skills (published through the library's publish pipeline: validated, scanned,
zipped). Replicas are separate ``skillbook registry serve`` processes on one
database (SQLite by default, or ``--db URL``) and one blob folder, with rate limits
off (``--limit KIND.ip=0``) or at their defaults; the client spreads requests over
them round-robin, as a load balancer would. Each replica is warmed first (every
archive downloaded once, the search index built). The floor is uvicorn and
Starlette answering the registry's own bytes (one archive, one search answer) with
no database: what the ASGI stack costs on this machine. Measurements run in
``--rounds`` interleaved rounds and each row is its median round, so the machine's
other load falls on the floor and the registry alike.

Usage: ``python benchmarks/bench_hub.py [--skills 300] [--seconds 3] [--rounds 3]
[--concurrency 8] [--limits off|on|both] [--replicas 1 2] [--search bm25|hybrid]
[--db URL] [--baseline-src DIR] [--quick]``. The servers run this tree's
``src`` (``PYTHONPATH``); ``--baseline-src`` adds another tree's servers to the same
rounds (rows marked ``@base``): before and after under the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

WORDS = [
    "pdf",
    "merge",
    "split",
    "weather",
    "forecast",
    "git",
    "branch",
    "deploy",
    "docker",
    "image",
    "resize",
    "translate",
    "invoice",
    "email",
    "calendar",
    "slack",
    "notes",
    "search",
    "database",
    "backup",
    "csv",
    "chart",
    "markdown",
    "lint",
    "test",
    "coverage",
    "release",
    "audit",
    "secrets",
    "kubernetes",
]

FLOOR_APP = """
import sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route
ZIP = open(sys.argv[2], "rb").read()
JSON = open(sys.argv[3], "rb").read()
async def download(request):
    return Response(ZIP, media_type="application/zip")
async def search(request):
    return Response(JSON, media_type="application/json")
routes = [Route("/api/v1/download", download), Route("/api/v1/search", search)]
uvicorn.run(Starlette(routes=routes), host="127.0.0.1", port=int(sys.argv[1]),
            log_level="warning", server_header=False)
"""
#: ``--in-process``: one child per tree and round drives the registry's ASGI app directly
#: (no sockets, no uvicorn) with new BM25 queries and prints each step's thread CPU per
#: query in microseconds, as JSON. Only names both trees have: the before and after of a
#: change are measured alike.
STEPS_APP = """
import asyncio, json, random, statistics, sys, time, dataclasses
from skillbook.distribution.hub import routes_read
from skillbook.distribution.hub.app import create_app
from skillbook.distribution.hub.http import Hub
from skillbook.distribution.hub.server_config import HubSettings, RateLimits
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route
db_url, blobs, count, words = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split()
settings = HubSettings(database_url=db_url, blob_url=blobs, search_backend="bm25",
                       rate_limits=RateLimits(read_per_ip=0, download_per_ip=0),
                       catalog_poll_seconds=3600)
hub = Hub.open(settings, migrate=False)
app = create_app(settings, hub=hub, migrate=False)
search = hub.search
entries = search.entries()
rng = random.Random(5)
def query():
    return " ".join(rng.sample(words, 2)) + f" {rng.randrange(10**9)}"
body = routes_read._search_body(search, search.search("pdf merge"))
async def answer(request):
    return Response(body, media_type="application/json")
floor = Starlette(routes=[Route("/api/v1/search", answer)])
async def receive():
    return {"type": "http.request", "body": b"", "more_body": False}
async def send(message):
    pass
def drive(target):
    loop = asyncio.new_event_loop()
    scopes = [{"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
               "method": "GET", "scheme": "http", "path": "/api/v1/search",
               "raw_path": b"/api/v1/search", "root_path": "", "headers": [(b"host", b"x")],
               "query_string": ("q=" + query().replace(" ", "+")).encode(),
               "client": ("10.0.0.1", 1), "server": ("127.0.0.1", 80), "state": {},
               "app": target} for _ in range(count)]
    started = time.thread_time()
    for scope in scopes:
        loop.run_until_complete(target(scope, receive, send))
    spent = time.thread_time() - started
    loop.close()
    return spent
def timed(step):
    texts = [query() for _ in range(count)]
    started = time.thread_time()
    for text in texts:
        step(text)
    return time.thread_time() - started
hits = [search.search(query()) for _ in range(count)]
def assemble():
    started = time.thread_time()
    for found in hits:
        routes_read._search_body(search, found)
    return time.thread_time() - started
steps = {
    "request": lambda: drive(app),
    "floor": lambda: drive(floor),
    "rank": lambda: timed(lambda t: search._selector.rank(t, depth=25)),
    "search": lambda: timed(lambda t: search._search(entries, t, 25, False)),
    "body": assemble,
}
for step in steps.values():
    step()
out = {name: [] for name in steps}
for _ in range(3):
    for name, step in steps.items():
        out[name].append(1e6 * step() / count)
print(json.dumps({name: statistics.median(v) for name, v in out.items()}))
hub.close()
"""
#: Simulated client addresses (``X-Forwarded-For`` from a trusted 127.0.0.1): a registry
#: has many clients, each far below its limit; one address would hit its limit at once.
ADDRESSES = 4096


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: process exited")
        try:
            httpx.get(url, timeout=2)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not start")


def seed(db_url: str, blobs: str, count: int, rng: random.Random) -> list[str]:
    """Publish ``count`` generated skills through the library's pipeline; returns slugs."""
    from skillbook.distribution.hub.blobs import open_blob_store
    from skillbook.distribution.hub.db import Database
    from skillbook.distribution.hub.publish import publish_version
    from skillbook.distribution.hub.server_config import HubSettings
    from skillbook.distribution.hub.tokens import authenticate, create_token

    settings = HubSettings(database_url=db_url, blob_url=blobs, search_backend="bm25")
    db = Database.open(db_url)
    store = open_blob_store(blobs)
    with db.session() as session:
        token = create_token(session, "bench")
    with db.session() as session:
        caller = authenticate(session, token)
    assert caller is not None
    slugs = []
    for i in range(count):
        words = rng.sample(WORDS, 4)
        slug = f"{words[0]}-{words[1]}-{i}"
        text = (
            f"---\nname: {slug}\ndescription: {' '.join(words)} helper number {i}.\n---\n"
            f"# {slug}\n\n" + " ".join(rng.choices(WORDS, k=200)) + "\n"
        )
        files = {"SKILL.md": text.encode(), "references/notes.md": os.urandom(2048).hex().encode()}
        publish_version(
            db, store, settings, caller, {"slug": slug, "version": "1.0.0"}, direct=files
        )
        slugs.append(slug)
    db.close()
    return slugs


class Wire:
    """A minimal HTTP/1.1 keep-alive client, one connection per server and thread.

    httpx spends several times what a small request costs the server; on two shared
    cores the load generator's cost would flatten every ratio toward 1. This one reads
    the status, the headers and ``Content-Length`` bytes, and nothing more.
    """

    def __init__(self) -> None:
        self._conns: dict[str, tuple[socket.socket, Any]] = {}

    def get(self, url: str, headers: dict[str, str]) -> int:
        """The status of ``GET url`` (0 when the connection failed)."""
        rest = url.removeprefix("http://")
        host, _, path = rest.partition("/")
        try:
            sock, reader = self._conns.get(host) or self._connect(host)
            lines = [f"GET /{path} HTTP/1.1", f"Host: {host}"]
            lines += [f"{k}: {v}" for k, v in headers.items()]
            sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
            status_line = reader.readline()
            status = int(status_line.split()[1])
            length, close = 0, False
            while (line := reader.readline()) not in (b"\r\n", b"\n", b""):
                name, _, value = line.partition(b":")
                name = name.strip().lower()
                if name == b"content-length":
                    length = int(value)
                elif name == b"connection" and value.strip().lower() == b"close":
                    close = True
            reader.read(length)
            if close:
                self._drop(host)
            return status
        except (OSError, ValueError, IndexError):
            self._drop(host)
            return 0

    def _connect(self, host: str) -> tuple[socket.socket, Any]:
        name, _, port = host.partition(":")
        sock = socket.create_connection((name, int(port)), timeout=30)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._conns[host] = (sock, sock.makefile("rb"))
        return self._conns[host]

    def _drop(self, host: str) -> None:
        found = self._conns.pop(host, None)
        if found is not None:
            found[1].close()
            found[0].close()

    def close(self) -> None:
        for host in list(self._conns):
            self._drop(host)


def load(
    urls: list[str], make_path: Any, seconds: float, concurrency: int, max_requests: int
) -> dict[str, Any]:
    """Requests from ``concurrency`` threads for ``seconds``; throughput and latencies."""
    latencies: list[float] = []
    errors = 0
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds
    budget = [max_requests]

    def worker(seed_value: int) -> None:
        nonlocal errors
        rng = random.Random(seed_value)
        mine: list[float] = []
        bad = 0
        turn = seed_value
        client = Wire()
        while time.monotonic() < stop_at:
            with lock:
                if budget[0] <= 0:
                    break
                budget[0] -= 1
            turn += 1
            url = urls[turn % len(urls)] + make_path(rng)
            address = f"10.{rng.randrange(16)}.{rng.randrange(16)}.{rng.randrange(16)}"
            started = time.perf_counter()
            ok = client.get(url, {"X-Forwarded-For": address}) == 200
            mine.append(time.perf_counter() - started)
            bad += not ok
        client.close()
        with lock:
            latencies.extend(mine)
            errors += bad

    began = time.monotonic()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - began
    latencies.sort()
    return {
        "requests": len(latencies),
        "rps": len(latencies) / elapsed if elapsed else 0.0,
        "p50_ms": 1000 * statistics.median(latencies) if latencies else 0.0,
        "p95_ms": 1000 * latencies[int(0.95 * (len(latencies) - 1))] if latencies else 0.0,
        "errors": errors,
    }


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds the processes have used so far (Linux ``/proc``)."""
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return float("nan")
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def start_replica(
    db_url: str, blobs: str, search: str, limits: str, env: dict[str, str]
) -> tuple[subprocess.Popen[bytes], str]:
    """One ``registry serve`` process, its search index built; rate limits off or default."""
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "skillbook",
        "registry",
        "serve",
        "--port",
        str(port),
        "--db",
        db_url,
        "--blobs",
        blobs,
        "--search",
        search,
        "--forwarded-allow-ips",
        "127.0.0.1",
    ]
    if limits == "off":
        argv += ["--limit", "read.ip=0", "--limit", "download.ip=0"]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    wait(url + "/healthz", proc)
    httpx.get(url + "/api/v1/search?q=warm", timeout=120)  # build the index once
    return proc, url


def warm(urls: list[str], paths: list[str]) -> None:
    """Each path once on each replica: what is measured is the steady state."""
    client = Wire()
    for url in urls:
        for path in paths:
            client.get(url + path, {})
    client.close()


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(15)
    procs.clear()


def in_process(args: Any, db_url: str, blobs: str, envs: dict[str, dict[str, str]]) -> None:
    """``--in-process``: the steps of a new query, each tree in its own child per round
    (the trees alternate, so the machine's other load falls on both), medians of rounds."""
    runs: dict[str, list[dict[str, float]]] = {tag: [] for tag in envs}
    count = max(1, min(1000, args.max_requests))  # queries per step and inner round
    for turn in range(args.rounds):
        order = list(envs) if turn % 2 == 0 else list(reversed(list(envs)))
        for tag in order:
            done = subprocess.run(
                [sys.executable, "-c", STEPS_APP, db_url, blobs, str(count), " ".join(WORDS)],
                env=envs[tag],
                capture_output=True,
                text=True,
                check=True,
            )
            runs[tag].append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(
        f"\nnew BM25 queries in process ({args.skills} skills, {args.rounds} rounds, "
        f"thread CPU per query in µs, medians; load average {os.getloadavg()[0]:.2f})"
    )
    steps = list(runs[next(iter(runs))][0])
    print(f"{'tree':<8}" + "".join(f"{name:>10}" for name in steps) + f"{'req-floor':>11}")
    for tag, found in runs.items():
        median = {name: statistics.median(r[name] for r in found) for name in steps}
        print(
            f"{tag or 'this':<8}"
            + "".join(f"{median[name]:>10.1f}" for name in steps)
            + f"{median['request'] - median['floor']:>11.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skills", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--max-requests", type=int, default=50_000)
    parser.add_argument("--search", choices=["bm25", "hybrid"], default="bm25")
    parser.add_argument("--db", help="database URL (default: a SQLite file in a temp folder)")
    parser.add_argument(
        "--limits",
        choices=["off", "on", "both"],
        default="both",
        help="rate limits off, at their defaults, or both (default)",
    )
    parser.add_argument(
        "--replicas", type=int, nargs="+", default=[1, 2], help="replica counts to measure"
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="interleaved rounds; each row is the median"
    )
    parser.add_argument("--quick", action="store_true", help="50 skills, 1.5 s per measurement")
    parser.add_argument(
        "--baseline-src",
        type=Path,
        help="also measure the servers of this source tree (rows marked @base), same rounds",
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="instead: each tree's registry app driven in process with new BM25 queries, "
        "the thread CPU of each step (whole request, a bare app, ranking, hits, body)",
    )
    parser.add_argument("--out", type=Path, default=HERE / "out")
    args = parser.parse_args()
    if args.quick:
        args.skills, args.seconds, args.rounds = 50, 1.5, 1
    rng = random.Random(20261126)
    root = Path(tempfile.mkdtemp(prefix="bench-hub-"))
    db_url = args.db or f"sqlite:///{root / 'metadata.sqlite3'}"
    blobs = str(root / "blobs")
    began = time.monotonic()
    slugs = seed(db_url, blobs, args.skills, rng)
    print(f"seeded {len(slugs)} skills in {time.monotonic() - began:.1f} s", file=sys.stderr)
    env = {**os.environ, "SKILLBOOK_STATE_DIR": str(root / "state"), "HOME": str(root)}
    # The servers run this tree's code (or --baseline-src's), not whatever skillbook
    # the interpreter has installed: a subprocess does not see the sys.path above.
    trees = {"": HERE.parent / "src"}
    if args.baseline_src:
        trees["@base"] = args.baseline_src.resolve()
    envs = {
        tag: {
            **env,
            "PYTHONPATH": os.pathsep.join(
                [str(src), *env.get("PYTHONPATH", "").split(os.pathsep)]
            ).rstrip(os.pathsep),
        }
        for tag, src in trees.items()
    }

    if args.in_process:
        in_process(args, db_url, blobs, envs)
        return

    def download(r: random.Random) -> str:
        return f"/api/v1/download?slug={r.choice(slugs)}&version=1.0.0"

    def search(r: random.Random) -> str:
        # A number makes every query new: this measures ranking, not the answer cache.
        return "/api/v1/search?q=" + "+".join(r.sample(WORDS, 2)) + f"+{r.randrange(10**9)}"

    popular = [" ".join(rng.sample(WORDS, 2)) for _ in range(20)]

    def search_again(r: random.Random) -> str:
        return "/api/v1/search?q=" + r.choice(popular).replace(" ", "+")

    limit_modes = ["off", "on"] if args.limits == "both" else [args.limits]
    procs: list[subprocess.Popen[bytes]] = []
    # (workload, limits, replicas) -> (base URLs, path maker, server pids); floors first.
    plan: dict[tuple[str, str, int], tuple[list[str], Any, list[int]]] = {}
    pids: dict[str, int] = {}
    try:
        # The floor answers with the registry's own bytes: one skill's archive and one
        # search answer, fetched from a replica, so only the work around them differs.
        servers: dict[str, list[str]] = {}
        for tag in trees:
            for mode in limit_modes:
                servers[mode + tag] = []
                for _ in range(max(args.replicas)):
                    proc, url = start_replica(db_url, blobs, args.search, mode, envs[tag])
                    procs.append(proc)
                    pids[url] = proc.pid
                    warm([url], [f"/api/v1/download?slug={s}&version=1.0.0" for s in slugs])
                    servers[mode + tag].append(url)
        first = servers[limit_modes[0]][0]
        sample_zip = root / "sample.zip"
        sample_zip.write_bytes(httpx.get(first + download(random.Random(1))).content)
        sample_json = root / "sample.json"
        sample_json.write_bytes(httpx.get(first + search_again(random.Random(1))).content)
        port = free_port()
        floor = subprocess.Popen(
            [sys.executable, "-c", FLOOR_APP, str(port), str(sample_zip), str(sample_json)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        procs.append(floor)
        floor_url = f"http://127.0.0.1:{port}"
        wait(floor_url + "/api/v1/download", floor)
        plan[("floor-download", "-", 1)] = ([floor_url], download, [floor.pid])
        plan[("floor-search", "-", 1)] = ([floor_url], search_again, [floor.pid])
        makers = {"download": download, "search": search, "search-20": search_again}
        for replicas in args.replicas:
            for workload, maker in makers.items():
                # Limits on and off of one workload side by side: their paired ratio
                # compares measurements seconds apart, not a round apart.
                for limits in servers:
                    urls = servers[limits][:replicas]
                    plan[(workload, limits, replicas)] = (urls, maker, [pids[u] for u in urls])
        # Rounds interleave every measurement, so a change in the machine's other load
        # falls on all of them alike; each row reports its median round.
        measured: dict[tuple[str, str, int], list[dict[str, Any]]] = {k: [] for k in plan}
        for turn in range(args.rounds):
            order = list(plan)
            if turn % 2 and len(limit_modes) == 2:
                # Every other round measures "on" first: neither side of a pair always
                # runs second (in an A/A run the second server differed by 10 %).
                for i in range(2, len(order), 2):
                    order[i], order[i + 1] = order[i + 1], order[i]
            for key in order:
                urls, path, server = plan[key]
                before = cpu_seconds(server)
                run = load(urls, path, args.seconds, args.concurrency, args.max_requests)
                # The servers' CPU per request: steadier than req/s when other work
                # shares the cores (it counts only what the server did).
                spent = cpu_seconds(server) - before
                run["cpu_ms"] = 1000 * spent / run["requests"] if run["requests"] else 0.0
                measured[key].append(run)
    finally:
        stop(procs)
    rows: list[dict[str, Any]] = []
    for (workload, limits, replicas), runs in measured.items():
        ordered = sorted(runs, key=lambda r: r["rps"])
        median = ordered[len(ordered) // 2]
        rows.append(
            {
                "replicas": replicas,
                "limits": limits,
                "workload": workload,
                **median,
                "cpu_ms": statistics.median(r["cpu_ms"] for r in runs),
                "errors": sum(r["errors"] for r in runs),
                # In round order: the limits' on/off ratio pairs the same rounds.
                "rounds_rps": [round(r["rps"], 1) for r in runs],
            }
        )
    floors = {
        "download": rows[0]["rps"] or 1.0,
        "search": rows[1]["rps"] or 1.0,
    }
    print(
        f"\nskillbook registry load ({args.skills} skills, {args.concurrency} clients, "
        f"{args.seconds:g} s x {args.rounds} rounds, search={args.search}, "
        f"db={db_url.split(':')[0]}, "
        f"load average {os.getloadavg()[0]:.2f})"
    )
    # The median round, and the best one: on a shared machine the best round is the
    # one the other load disturbed least.
    floor_best = {
        "download": max(rows[0]["rounds_rps"]) or 1.0,
        "search": max(rows[1]["rounds_rps"]) or 1.0,
    }
    print(
        f"{'workload':<14}{'limits':>9}{'replicas':>9}{'req/s':>8}{'p50 ms':>8}{'p95 ms':>8}"
        f"{'errors':>7}{'vs floor':>9}{'best':>7}{'vs best':>8}{'cpu ms/req':>11}"
    )
    for r in rows:
        kind = "download" if r["workload"].endswith("download") else "search"
        r["best_rps"] = max(r["rounds_rps"])
        r["vs_floor"] = r["rps"] / floors[kind]
        r["best_vs_floor"] = r["best_rps"] / floor_best[kind]
        print(
            f"{r['workload']:<14}{r['limits']:>9}{r['replicas']:>9}{r['rps']:>8.0f}"
            f"{r['p50_ms']:>8.1f}{r['p95_ms']:>8.1f}{r['errors']:>7}{r['vs_floor']:>9.2f}"
            f"{r['best_rps']:>7.0f}{r['best_vs_floor']:>8.2f}{r['cpu_ms']:>11.3f}"
        )
    if len(limit_modes) == 2:
        # Issue 22's goal: with the default limits on, within 20 % of limits off. Rounds
        # interleave on and off, so each round's on/off ratio compares like with like;
        # the servers' CPU per request says the same without the client's share.
        for r in rows:
            if r["limits"].startswith("on"):
                off = next(
                    o
                    for o in rows
                    if o["limits"] == r["limits"].replace("on", "off", 1)
                    and (o["workload"], o["replicas"]) == (r["workload"], r["replicas"])
                )
                paired = [
                    a / b for a, b in zip(r["rounds_rps"], off["rounds_rps"], strict=True) if b
                ]
                r["on_off"] = statistics.median(paired) if paired else 0.0
                r["on_off_cpu"] = off["cpu_ms"] / r["cpu_ms"] if r["cpu_ms"] else 0.0
                print(
                    f"limits on/off{r['limits'][2:]:<6} {r['workload']:<10} "
                    f"{r['replicas']} replica(s): "
                    f"req/s {r['on_off']:.2f} (median of paired rounds), "
                    f"CPU per request {r['on_off_cpu']:.2f} (off/on)"
                )
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    suffix = "-quick" if args.quick else ""
    (args.out / f"bench_hub-{stamp}{suffix}.json").write_text(
        json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "rows": rows}, indent=2)
    )


if __name__ == "__main__":
    main()
