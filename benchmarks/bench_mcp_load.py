#!/usr/bin/env python
"""Load test of ``skillbook serve --transport http`` on 127.0.0.1: start-up, throughput,
latency percentiles, CPU per answer.

Input: command-line options (``--skills``, ``--clients``, ``--workers``, ``--seconds``,
``--max-requests``, ``--quick``). Output: a plain-text report on stdout (and ``--json PATH``):

1. start-up: from spawning ``python -m skillbook serve`` on a workspace of N generated
   skills (the on-disk parse cache primed, as after any earlier run) to its first
   ``skills/list`` answer: wall time, and the server process's CPU time at that moment
   (user + system, from ``/proc``), the figure that does not move with the load of
   other processes;
2. per server (one per ``--workers`` count): every served file read once (no answer
   the server kept can help), then for each client count (protocol 2026-07-28
   JSON-RPC over HTTP, one keep-alive connection each) ``skills/list`` pages (walking
   the cursor) and ``resources/read`` of random files, each for a bounded time and
   count: requests per second, p50/p90/p99/max latency in ms, the server's CPU per
   answer (all its processes) and the load generator's own CPU per request;
3. per server, the same ``resources/read`` load *paced* (open loop): a fixed total rate
   (``--rate``) spread over 1 and then the most clients, each request sent on its
   schedule and its latency counted from that scheduled moment (a late answer delays
   nothing, so slow answers are not hidden). Closed-loop clients queue on a busy
   server (latency = clients / throughput); at the same offered rate, how the p99
   moves from 1 to 16 connections is what the server itself adds.

The load generator is a minimal HTTP/1.1 client (requests encoded up front, answers
checked by their first bytes): it is not what is measured, and it shares the CPUs
with the server, so it should take as little of them as it can. Loopback only,
bounded in time and count; the server is stopped by its pid; the load average is
printed.

``--startup-only`` prints issue 22's row alone: spawn to the first ``skills/list``
answer against a ``skillbook prompt --no-cache`` process on the same tree (its floor),
in ``--repeat`` paired rounds (medians of wall and CPU time, their ratios, the load).

Usage: ``python benchmarks/bench_mcp_load.py [--skills 1000] [--clients 1,4,16]
[--workers 1,2] [--seconds 3] [--max-requests 5000] [--rate 500] [--quick] [--json PATH]
[--startup-only [--repeat 7]]``.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_catalog import generate_skill, make_sandbox, settle  # noqa: E402

REPO = HERE.parent
TITLE = "skillbook MCP load benchmark"
PROTOCOL = "2026-07-28"
DEFAULT_SKILLS = 1000
DEFAULT_CLIENTS = (1, 4, 16)
DEFAULT_SECONDS = 3.0
DEFAULT_MAX_REQUESTS = 5000
STARTUP_TIMEOUT_S = 120.0
REQUEST_TIMEOUT_S = 30.0
#: Targets (issue 11 §3).
TARGET_STARTUP_CPU_S = 1.0
TARGET_LIST_PAGES_PER_S = 500.0
TARGET_READS_PER_S = 1000.0
#: Every served file read once, in order: no answer the server kept can help.
FIRST_READS = "read each once"
#: ``resources/read`` at a fixed total rate (open loop), see the module docstring.
PACED_READS = "read, paced"
DEFAULT_RATE = 500.0
_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": PROTOCOL,
}
_META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
    "io.modelcontextprotocol/clientCapabilities": {},
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def make_workspace(root: Path, size: int, seed: int = 20260413) -> list[str]:
    """``size`` generated skills (every tenth with a reference file); returns names."""
    skills = root / "ws" / "skills"
    skills.mkdir(parents=True)
    rng = random.Random(seed)
    taken: set[str] = set()
    names = []
    for i in range(size):
        name, text = generate_skill(rng, i, taken)
        folder = skills / name
        folder.mkdir()
        (folder / "SKILL.md").write_text(text, encoding="utf-8")
        if i % 10 == 0:
            (folder / "references").mkdir()
            (folder / "references" / "guide.md").write_text("# Guide\n\n" + "Step.\n" * 200)
        names.append(name)
    return names


def _stat(pid: int | str) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def tree_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of a running process and its live children (the
    ``--workers`` processes), from Linux /proc; None where there is no /proc."""
    fields = _stat(pid)
    if fields is None:
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    total = int(fields[11]) + int(fields[12])
    for entry in os.listdir("/proc"):
        child = _stat(entry) if entry.isdigit() and entry != str(pid) else None
        if child is not None and child[1] == str(pid):
            total += int(child[11]) + int(child[12])
    return total / ticks


def body(method: str, params: dict[str, Any], ident: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "method": method, "params": {**params, "_meta": _META}}


def headers(method: str, params: dict[str, Any]) -> dict[str, str]:
    """2026-07-28 requests name their method (and resource) in headers too."""
    out = {**_HEADERS, "Mcp-Method": method}
    if "uri" in params:
        out["Mcp-Name"] = params["uri"]
    return out


def post(port: int, method: str, params: dict[str, Any]) -> tuple[int, bytes]:
    """One request on a new connection (start-up and set-up, not the measured load)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)
    try:
        conn.request("POST", "/mcp", json.dumps(body(method, params, 1)), headers(method, params))
        got = conn.getresponse()
        return got.status, got.read()
    finally:
        conn.close()


def served_uris(port: int) -> list[str]:
    """Every file URI the server lists (gated-out skills are not served)."""
    uris: list[str] = []
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"cursor": cursor} if cursor else {}
        result = json.loads(post(port, "skills/list", params)[1])["result"]
        uris += [r["uri"] for skill in result["skills"] for r in skill["resources"]]
        cursor = result.get("nextCursor")
        if not cursor:
            return uris


def startup(argv: list[str], env: dict[str, str], cwd: Path, port: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = t0 + STARTUP_TIMEOUT_S
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"server exited: {proc.stderr.read().decode()[-500:]}")  # type: ignore[union-attr]
        try:
            status, got = post(port, "skills/list", {})
            if status == 200 and b'"skills"' in got:
                break
        except OSError:
            pass
        if time.perf_counter() > deadline:
            raise SystemExit("server did not answer in time")
        time.sleep(0.02)
    return {"proc": proc, "wall_s": time.perf_counter() - t0, "cpu_s": tree_cpu_s(proc.pid)}


class Connection:
    """A minimal HTTP/1.1 keep-alive client: the load generator is not what is measured,
    so it does as little per request as it can (requests pre-encoded, responses
    checked by their first bytes, ``Content-Length`` bodies only)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, port: int) -> Connection:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return cls(reader, writer)

    async def post(self, request: bytes) -> tuple[int, bytes]:
        self.writer.write(request)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        length = 0
        for line in head.split(b"\r\n"):
            if line[:15].lower() == b"content-length:":
                length = int(line[15:])
        return status, await self.reader.readexactly(length)

    def close(self) -> None:
        self.writer.close()


def encode_request(port: int, method: str, params: dict[str, Any], ident: int) -> bytes:
    payload = json.dumps(body(method, params, ident), separators=(",", ":")).encode()
    lines = ["POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    lines += [f"{k}: {v}" for k, v in headers(method, params).items()]
    lines.append(f"Content-Length: {len(payload)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + payload


async def _client(
    port: int,
    kind: str,
    uris: Sequence[str],
    stop_at: float,
    budget: list[int],
    latencies: list[float],
    errors: list[str],
    seed: int,
    schedule: tuple[float, float] | None = None,
) -> None:
    """One connection's requests, back to back; or, with ``schedule`` (first send time,
    interval), each at its own moment, its latency counted from that moment."""
    rng = random.Random(seed)
    cursor: str | None = None
    ident = 0
    answered = 0.0
    conn = await Connection.open(port)
    try:
        while time.perf_counter() < stop_at and budget[0] > 0:
            budget[0] -= 1
            ident += 1
            due: float | None = None
            if schedule is not None:
                due = schedule[0] + (ident - 1) * schedule[1]
                wait = due - time.perf_counter()
                if wait > 0:
                    await asyncio.sleep(wait)
            if kind == "skills/list":
                params: dict[str, Any] = {"cursor": cursor} if cursor else {}
            elif kind == FIRST_READS:
                params = {"uri": uris[ident - 1]}
            else:
                params = {"uri": rng.choice(uris)}
            method = "resources/read" if kind in (FIRST_READS, PACED_READS) else kind
            request = encode_request(port, method, params, ident)
            t0 = time.perf_counter()
            if due is not None and answered > due:
                # The previous answer came after this request was due: the server made it
                # late, so that wait counts (a timer waking late is the client's own).
                t0 = due
            status, got = await conn.post(request)
            answered = time.perf_counter()
            latencies.append(answered - t0)
            if status != 200 or b'"result":' not in got[:40]:
                errors.append(f"{status}: {got[:200]!r}")
                continue
            if kind == "skills/list":
                # The cursor follows the page's skills (the result's last keys).
                at = got.rfind(b',"nextCursor":"')
                cursor = got[at + 15 : got.index(b'"', at + 15)].decode() if at >= 0 else None
    finally:
        conn.close()


def run_load(
    port: int,
    kind: str,
    uris: Sequence[str],
    clients: int,
    seconds: float,
    max_requests: int,
    rate: float | None = None,
) -> dict[str, Any]:
    """``clients`` connections for ``seconds``; ``rate`` paces them (requests per second
    in all, each connection's sends evenly staggered against the others')."""
    latencies: list[float] = []
    errors: list[str] = []
    budget = [max_requests]

    async def main() -> float:
        t0 = time.perf_counter()
        stop_at = t0 + seconds

        def schedule(seed: int) -> tuple[float, float] | None:
            if rate is None:
                return None
            interval = clients / rate
            return t0 + 0.05 + seed * interval / clients, interval

        await asyncio.gather(
            *(
                _client(port, kind, uris, stop_at, budget, latencies, errors, seed, schedule(seed))
                for seed in range(clients)
            )
        )
        return time.perf_counter() - t0

    cpu0 = time.process_time()
    elapsed = asyncio.run(main())
    client_cpu = time.process_time() - cpu0
    ordered = sorted(latencies)

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000 if ordered else 0.0

    return {
        "kind": kind,
        "clients": clients,
        "rate": rate,
        "requests": len(latencies),
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        "per_s": len(latencies) / elapsed if elapsed else 0.0,
        "p50_ms": pct(0.50),
        "p90_ms": pct(0.90),
        "p99_ms": pct(0.99),
        "max_ms": ordered[-1] * 1000 if ordered else 0.0,
        "mean_ms": statistics.fmean(ordered) * 1000 if ordered else 0.0,
        "client_cpu_ms": client_cpu * 1000 / len(latencies) if latencies else None,
    }


def _p99_growth(result: dict[str, Any], kind: str, label: str) -> list[str]:
    """How the p99 of ``kind`` moves from the fewest to the most clients, per worker count."""
    out = []
    for workers in result["workers"]:
        rows = [r for r in result["phases"] if r["kind"] == kind and r["workers"] == workers]
        if len(rows) > 1:
            low, high = rows[0], rows[-1]
            growth = high["p99_ms"] / low["p99_ms"] if low["p99_ms"] else 0.0
            out.append(
                f"  {label} p99 from {low['clients']} to {high['clients']} clients "
                f"({workers} worker{'s' if workers > 1 else ''}): "
                f"{low['p99_ms']:.1f} -> {high['p99_ms']:.1f} ms ({growth:.1f}x)"
            )
    return out


def render(result: dict[str, Any]) -> str:
    s = result["startup"]
    cpu = s["cpu_s"]
    lines = [
        f"{TITLE}: {result['skills']} skills, {result['seconds']} s per phase "
        f"(at most {result['max_requests']} requests), loopback",
        "",
        f"start-up to the first skills/list answer: {s['wall_s'] * 1000:,.0f} ms wall, "
        + (f"{cpu:.2f} s CPU of the server" if cpu is not None else "CPU not measurable here"),
        "",
        "kind            workers clients requests   req/s  p50 ms  p90 ms  p99 ms  max ms errors"
        "  server ms  per core/s  client ms",
        "-" * 120,
    ]
    for row in result["phases"]:
        cpu_ms = row.get("server_cpu_ms")
        per_core = f"{cpu_ms:>9.2f}  {1000 / cpu_ms:>10,.0f}" if cpu_ms else f"{'-':>9}  {'-':>10}"
        client = row.get("client_cpu_ms")
        lines.append(
            f"{row['kind']:<16}{row['workers']:>7} {row['clients']:>7} {row['requests']:>8}"
            f"  {row['per_s']:>6,.0f}  {row['p50_ms']:>6.1f}  {row['p90_ms']:>6.1f}"
            f"  {row['p99_ms']:>6.1f}  {row['max_ms']:>6.1f} {row['errors']:>6}  {per_core}"
            f"  {client if client is not None else 0:>9.2f}"
        )
    lines += [
        "",
        "server ms: the server's CPU per answer (all its processes, from /proc); client ms:",
        "the load generator's own CPU per request. Both share the machine's CPUs.",
        "",
        "targets (issue 11 §3):",
    ]
    if cpu is not None:
        ok = "ok" if cpu <= TARGET_STARTUP_CPU_S else "MISSED"
        lines.append(f"  start-up CPU <= {TARGET_STARTUP_CPU_S} s: {cpu:.2f} s: {ok}")
    for kind, target in (
        ("skills/list", TARGET_LIST_PAGES_PER_S),
        ("resources/read", TARGET_READS_PER_S),
    ):
        rows = [r for r in result["phases"] if r["kind"] == kind and r["workers"] == 1]
        one = next((r for r in rows if r["clients"] == 1), None)
        if one is not None:
            ok = "ok" if one["per_s"] >= target else "MISSED"
            lines.append(f"  {kind} >= {target:.0f}/s for one client: {one['per_s']:,.0f}/s: {ok}")
            if one.get("server_cpu_ms"):
                core = 1000 / one["server_cpu_ms"]
                verdict = "ok" if core >= target else "MISSED"
                lines.append(
                    f"    the server's CPU per answer allows {core:,.0f}/s on one free core: "
                    f"{verdict}"
                )
        lines += _p99_growth(result, kind, kind)
    lines += _p99_growth(result, PACED_READS, f"paced reads at {result['rate']:,.0f}/s,")
    for row in result["phases"]:
        if row["first_error"]:
            lines.append(f"  error [{row['kind']} x{row['clients']}]: {row['first_error']}")
    load = result["loadavg"]
    lines.append(
        f"\nmachine: {os.cpu_count()} CPUs, load average {load[0]:.1f} at start, "
        f"{load[1]:.1f} at end (client and server share them)"
    )
    return "\n".join(lines)


def measure(
    base: list[str], env: dict[str, str], cwd: Path, workers: int, args: argparse.Namespace
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Start one server (``--workers N`` when N > 1), then run every phase against it."""
    clients = [int(c) for c in str(args.clients).split(",") if c.strip()]
    port = free_port()
    argv = [*base, "serve", "--transport", "http", "--port", str(port)]
    if workers > 1:
        argv += ["--workers", str(workers)]
    started = startup(argv, env, cwd, port)
    proc = started.pop("proc")
    phases = []
    try:
        uris = served_uris(port)
        paced = sorted({min(clients), max(clients)})
        for kind, counts in (
            (FIRST_READS, [1]),
            ("skills/list", clients),
            ("resources/read", clients),
            (PACED_READS, paced),
        ):
            for count in counts:
                before = tree_cpu_s(proc.pid)
                # The first reads are bounded by their count (each file once).
                first = kind == FIRST_READS
                seconds = STARTUP_TIMEOUT_S if first else args.seconds
                limit = len(uris) if first else args.max_requests
                rate = args.rate if kind == PACED_READS else None
                row = run_load(port, kind, uris, count, seconds, limit, rate)
                after = tree_cpu_s(proc.pid)
                # CPU per answer: what the load of other processes does not move.
                row["server_cpu_ms"] = (
                    (after - before) * 1000 / row["requests"]
                    if before is not None and after is not None and row["requests"]
                    else None
                )
                row["workers"] = workers
                phases.append(row)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    return started, phases


def _process(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, from ``os.wait4``) of one process."""
    t0 = time.perf_counter()
    pid = os.posix_spawn(
        argv[0],
        argv,
        env,
        file_actions=[
            (os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, "/dev/null", os.O_WRONLY, 0),
        ],
    )
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv[3:]} exited {os.waitstatus_to_exitcode(status)}")
    return wall, usage.ru_utime + usage.ru_stime


def startup_rounds(base: list[str], env: dict[str, str], cwd: Path, repeat: int) -> str:
    """Issue 22's row: spawn to the first ``skills/list`` answer of ``serve --transport
    http`` against a ``prompt --no-cache`` process on the same tree, in paired rounds."""
    load0 = os.getloadavg()[0]
    serve: list[tuple[float, float]] = []
    floor: list[tuple[float, float]] = []
    for _ in range(repeat):
        port = free_port()
        started = startup(
            [*base, "serve", "--transport", "http", "--port", str(port)], env, cwd, port
        )
        proc = started["proc"]
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        serve.append((started["wall_s"], started["cpu_s"] or 0.0))
        floor.append(_process([*base[:4], *base[4:], "--no-cache", "prompt"], env, cwd))
    med = [[statistics.median(x[i] for x in rows) for i in (0, 1)] for rows in (serve, floor)]
    load1 = os.getloadavg()[0]
    return "\n".join(
        [
            f"serve start-up against `prompt --no-cache` ({repeat} paired rounds, medians):",
            f"  serve: spawn to the first skills/list answer {med[0][0] * 1000:,.0f} ms wall, "
            f"{med[0][1] * 1000:,.0f} ms CPU",
            f"  prompt --no-cache: {med[1][0] * 1000:,.0f} ms wall, {med[1][1] * 1000:,.0f} ms CPU",
            f"  ratio: wall {med[0][0] / med[1][0]:.2f}x, CPU {med[0][1] / med[1][1]:.2f}x "
            "(goal <= 1.5x, issue 22)",
            f"  load average {load0:.2f} -> {load1:.2f} (1 min), {os.cpu_count()} CPUs",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--skills", type=int, default=DEFAULT_SKILLS)
    parser.add_argument("--clients", default=",".join(map(str, DEFAULT_CLIENTS)))
    parser.add_argument(
        "--workers", default="1", help="server processes, e.g. 1,2: one server run per count"
    )
    parser.add_argument("--seconds", type=float, default=DEFAULT_SECONDS)
    parser.add_argument("--max-requests", type=int, default=DEFAULT_MAX_REQUESTS)
    parser.add_argument(
        "--rate",
        type=float,
        default=DEFAULT_RATE,
        help="requests per second of the paced reads, all clients together",
    )
    parser.add_argument("--quick", action="store_true", help="50 skills, 1 and 2 clients, 0.5 s")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument(
        "--startup-only",
        action="store_true",
        help="only the start-up against `prompt --no-cache` (issue 22), --repeat rounds",
    )
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    if args.quick:
        args.skills, args.clients, args.seconds, args.max_requests = 50, "1,2", 0.5, 200
        args.rate = 100.0
    worker_counts = [int(w) for w in str(args.workers).split(",") if w.strip()]
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
        root = Path(tmp)
        sb = make_sandbox(root / "sandbox")
        make_workspace(root, args.skills)
        ws = root / "ws"
        env = dict(sb.env)
        env["PATH"] = sb.env["PATH"]
        # The server runs the code this process imports (this checkout's src/, or
        # another tree's on PYTHONPATH: how a "before" figure is measured).
        import skillbook

        env["PYTHONPATH"] = str(Path(skillbook.__file__).resolve().parents[1])
        base = [
            sys.executable,
            "-m",
            "skillbook",
            "--workspace",
            str(ws),
            "--config",
            str(sb.config_path),
        ]
        settle(sorted(ws.glob("skills/*/SKILL.md")))
        subprocess.run([*base, "prompt"], env=env, cwd=root, capture_output=True, check=True)
        if args.startup_only:
            print(f"{TITLE}: {args.skills} skills")
            print(startup_rounds(base, env, root, args.repeat))
            return 0
        phases: list[dict[str, Any]] = []
        started: dict[str, Any] = {}
        for workers in worker_counts:
            first, rows = measure(base, env, root, workers, args)
            started = started or first  # start-up is the first server's (one process)
            phases += rows
    result = {
        "skills": args.skills,
        "seconds": args.seconds,
        "max_requests": args.max_requests,
        "rate": args.rate,
        "workers": worker_counts,
        "startup": started,
        "phases": phases,
        "loadavg": (load_start, os.getloadavg()[0]),
    }
    print(render(result))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2))
    return 1 if any(p["errors"] for p in phases) else 0


if __name__ == "__main__":
    sys.exit(main())
