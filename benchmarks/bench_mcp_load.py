#!/usr/bin/env python
"""Load test of ``skillbook serve --transport http`` on 127.0.0.1: start-up, throughput,
latency percentiles.

Input: command-line options (``--skills``, ``--clients``, ``--seconds``, ``--quick``).
Output: a plain-text report on stdout (and ``--json PATH``):

1. start-up: from spawning ``python -m skillbook serve`` on a workspace of N generated
   skills (the on-disk parse cache primed, as after any earlier run) to its first
   ``skills/list`` answer: wall time, and the server process's CPU time at that moment
   (user + system, from ``/proc``), the figure that does not move with the load of
   other processes;
2. for 1, 4 and 16 concurrent clients (protocol 2026-07-28 JSON-RPC over HTTP, one
   keep-alive connection each): ``skills/list`` pages (walking the cursor) and
   ``resources/read`` of random skill files, each for a bounded time and count:
   requests per second, and p50/p90/p99/max latency in ms.

Loopback only, bounded in time and count; the server is stopped by its pid. The load
generator shares the machine's CPUs with the server, so throughput is that of the
pair; the load average is printed.

Usage: ``python benchmarks/bench_mcp_load.py [--skills 1000] [--clients 1,4,16]
[--seconds 3] [--max-requests 5000] [--quick] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import asyncio
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
from bench_catalog import SRC_ON_PATH, generate_skill, make_sandbox, settle  # noqa: E402

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


def process_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of a running process (Linux /proc), else None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def body(method: str, params: dict[str, Any], ident: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "method": method, "params": {**params, "_meta": _META}}


def headers(method: str, params: dict[str, Any]) -> dict[str, str]:
    """2026-07-28 requests name their method (and resource) in headers too."""
    out = {**_HEADERS, "Mcp-Method": method}
    if "uri" in params:
        out["Mcp-Name"] = params["uri"]
    return out


def served_uris(url: str) -> list[str]:
    """Every file URI the server lists (gated-out skills are not served)."""
    import httpx

    uris: list[str] = []
    cursor: str | None = None
    with httpx.Client(timeout=REQUEST_TIMEOUT_S) as client:
        while True:
            params: dict[str, Any] = {"cursor": cursor} if cursor else {}
            got = client.post(
                url, headers=headers("skills/list", params), json=body("skills/list", params, 1)
            )
            result = got.json()["result"]
            uris += [r["uri"] for skill in result["skills"] for r in skill["resources"]]
            cursor = result.get("nextCursor")
            if not cursor:
                return uris


def startup(argv: list[str], env: dict[str, str], cwd: Path, url: str) -> dict[str, Any]:
    import httpx

    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = t0 + STARTUP_TIMEOUT_S
    with httpx.Client(timeout=REQUEST_TIMEOUT_S) as client:
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"server exited: {proc.stderr.read().decode()[-500:]}")  # type: ignore[union-attr]
            try:
                r = client.post(
                    url, headers=headers("skills/list", {}), json=body("skills/list", {}, 1)
                )
                if r.status_code == 200 and "skills" in r.text:
                    break
            except httpx.TransportError:
                pass
            if time.perf_counter() > deadline:
                raise SystemExit("server did not answer in time")
            time.sleep(0.02)
    return {"proc": proc, "wall_s": time.perf_counter() - t0, "cpu_s": process_cpu_s(proc.pid)}


async def _client(
    url: str,
    kind: str,
    uris: Sequence[str],
    stop_at: float,
    budget: list[int],
    latencies: list[float],
    errors: list[str],
    seed: int,
) -> None:
    import httpx

    rng = random.Random(seed)
    cursor: str | None = None
    ident = 0
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    async with httpx.AsyncClient(timeout=REQUEST_TIMEOUT_S, limits=limits) as client:
        while time.perf_counter() < stop_at and budget[0] > 0:
            budget[0] -= 1
            ident += 1
            if kind == "skills/list":
                params: dict[str, Any] = {"cursor": cursor} if cursor else {}
            else:
                params = {"uri": rng.choice(uris)}
            payload = body(kind, params, ident)
            t0 = time.perf_counter()
            r = await client.post(url, headers=headers(kind, params), json=payload)
            latencies.append(time.perf_counter() - t0)
            data = r.json() if r.status_code == 200 else {"error": r.status_code}
            if "error" in data:
                errors.append(str(data["error"])[:200])
                continue
            if kind == "skills/list":
                cursor = data["result"].get("nextCursor")


def run_load(
    url: str, kind: str, uris: Sequence[str], clients: int, seconds: float, max_requests: int
) -> dict[str, Any]:
    latencies: list[float] = []
    errors: list[str] = []
    budget = [max_requests]

    async def main() -> float:
        t0 = time.perf_counter()
        stop_at = t0 + seconds
        await asyncio.gather(
            *(
                _client(url, kind, uris, stop_at, budget, latencies, errors, seed)
                for seed in range(clients)
            )
        )
        return time.perf_counter() - t0

    elapsed = asyncio.run(main())
    ordered = sorted(latencies)

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000 if ordered else 0.0

    return {
        "kind": kind,
        "clients": clients,
        "requests": len(latencies),
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        "per_s": len(latencies) / elapsed if elapsed else 0.0,
        "p50_ms": pct(0.50),
        "p90_ms": pct(0.90),
        "p99_ms": pct(0.99),
        "max_ms": ordered[-1] * 1000 if ordered else 0.0,
        "mean_ms": statistics.fmean(ordered) * 1000 if ordered else 0.0,
    }


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
        "kind              clients  requests   req/s   p50 ms   p90 ms   p99 ms   max ms  errors"
        "  cpu ms  per core/s",
        "-" * 108,
    ]
    for row in result["phases"]:
        cpu_ms = row.get("server_cpu_ms")
        per_core = f"{cpu_ms:>6.2f}  {1000 / cpu_ms:>10,.0f}" if cpu_ms else f"{'-':>6}  {'-':>10}"
        lines.append(
            f"{row['kind']:<16}  {row['clients']:>7}  {row['requests']:>8}  {row['per_s']:>6,.0f}"
            f"  {row['p50_ms']:>7.1f}  {row['p90_ms']:>7.1f}  {row['p99_ms']:>7.1f}"
            f"  {row['max_ms']:>7.1f}  {row['errors']:>6}  {per_core}"
        )
    lines += ["", "targets (issue 11 §3):"]
    if cpu is not None:
        ok = "ok" if cpu <= TARGET_STARTUP_CPU_S else "MISSED"
        lines.append(f"  start-up CPU <= {TARGET_STARTUP_CPU_S} s: {cpu:.2f} s: {ok}")
    for kind, target in (
        ("skills/list", TARGET_LIST_PAGES_PER_S),
        ("resources/read", TARGET_READS_PER_S),
    ):
        rows = [r for r in result["phases"] if r["kind"] == kind]
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
        if len(rows) > 1:
            low, high = rows[0], rows[-1]
            growth = high["p99_ms"] / low["p99_ms"] if low["p99_ms"] else 0.0
            lines.append(
                f"  {kind} p99 from {low['clients']} to {high['clients']} clients: "
                f"{low['p99_ms']:.1f} -> {high['p99_ms']:.1f} ms ({growth:.1f}x)"
            )
    for row in result["phases"]:
        if row["first_error"]:
            lines.append(f"  error [{row['kind']} x{row['clients']}]: {row['first_error']}")
    load = result["loadavg"]
    lines.append(
        f"\nmachine: {os.cpu_count()} CPUs, load average {load[0]:.1f} at start, "
        f"{load[1]:.1f} at end (client and server share them)"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--skills", type=int, default=DEFAULT_SKILLS)
    parser.add_argument("--clients", default=",".join(map(str, DEFAULT_CLIENTS)))
    parser.add_argument("--seconds", type=float, default=DEFAULT_SECONDS)
    parser.add_argument("--max-requests", type=int, default=DEFAULT_MAX_REQUESTS)
    parser.add_argument("--quick", action="store_true", help="50 skills, 1 and 2 clients, 0.5 s")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    if args.quick:
        args.skills, args.clients, args.seconds, args.max_requests = 50, "1,2", 0.5, 200
    clients = [int(c) for c in str(args.clients).split(",") if c.strip()]
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
        root = Path(tmp)
        sb = make_sandbox(root / "sandbox")
        make_workspace(root, args.skills)
        ws = root / "ws"
        env = dict(sb.env)
        env["PATH"] = sb.env["PATH"]
        if SRC_ON_PATH:
            env["PYTHONPATH"] = str(REPO / "src")
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
        port = free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        argv = [*base, "serve", "--transport", "http", "--port", str(port)]
        started = startup(argv, env, root, url)
        proc = started.pop("proc")
        try:
            uris = served_uris(url)
            phases = []
            for kind in ("skills/list", "resources/read"):
                for count in clients:
                    before = process_cpu_s(proc.pid)
                    row = run_load(url, kind, uris, count, args.seconds, args.max_requests)
                    after = process_cpu_s(proc.pid)
                    # CPU per answer: what the load of other processes does not move.
                    row["server_cpu_ms"] = (
                        (after - before) * 1000 / row["requests"]
                        if before is not None and after is not None and row["requests"]
                        else None
                    )
                    phases.append(row)
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
    result = {
        "skills": args.skills,
        "seconds": args.seconds,
        "max_requests": args.max_requests,
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
