"""``skillbook serve --transport http`` against an unfriendly network, as real processes.

Binding before announcing (a busy port is one line and exit code 2), refusing to bind
beyond loopback without a token, bearer-token auth (401), an ``Origin`` on another
port (403), and the bound on live handshake-era sessions (the least recently used
idle one is closed).
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from serve_process import ServeProcess, free_port
from test_server import LAUNCH, Workspace

pytestmark = [pytest.mark.e2e, pytest.mark.subprocess]

TOKEN = "s3cret-t0ken-for-tests"
ACCEPT = "application/json, text/event-stream"
LEGACY = "2025-11-25"


def serve_argv(space: Workspace, *args: str) -> list[str]:
    return [
        sys.executable,
        *LAUNCH,
        "--workspace",
        str(space.ws),
        "serve",
        "--transport",
        "http",
        *args,
    ]


def initialize(url: str, **headers: str) -> httpx2.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "0"},
        },
    }
    return httpx2.post(url, json=body, headers={"Accept": ACCEPT, **headers}, timeout=20)


def call(url: str, session: str, method: str, **headers: str) -> httpx2.Response:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 2, "method": method, "params": {}}
    all_headers = {
        "Accept": ACCEPT,
        "mcp-session-id": session,
        "mcp-protocol-version": LEGACY,
        **headers,
    }
    return httpx2.post(url, json=body, headers=all_headers, timeout=20)


def run_once(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


# --------------------------------------------------------------------------- binding


def test_a_busy_port_is_one_line_and_exit_code_2(tmp_path: Path) -> None:
    space = Workspace(tmp_path)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = run_once(serve_argv(space, "--port", str(port)), space.env(), tmp_path)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0] == (
        f"skillbook: cannot serve on http://127.0.0.1:{port}/mcp: port {port} on 127.0.0.1 "
        "is already in use; stop the other server or pick another port with --port"
    )


def test_binding_beyond_loopback_needs_a_token(tmp_path: Path) -> None:
    space = Workspace(tmp_path)
    out = run_once(serve_argv(space, "--host", "0.0.0.0", "--port", "0"), space.env(), tmp_path)
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1
    assert "reachable from other machines" in out.stderr and "--token-env" in out.stderr


def test_an_unset_token_variable_is_an_error(tmp_path: Path) -> None:
    space = Workspace(tmp_path)
    out = run_once(serve_argv(space, "--token-env", "NOPE_TOKEN"), space.env(), tmp_path)
    assert out.returncode == 2
    assert "--token-env NOPE_TOKEN: that environment variable is not set or empty" in out.stderr


# --------------------------------------------------------------------------- a running server


class Served(ServeProcess):
    def __init__(self, space: Workspace, *args: str, env: dict[str, str] | None = None) -> None:
        port = free_port()
        super().__init__(
            serve_argv(space, "--port", str(port), *args),
            port=port,
            env=env or space.env(),
            cwd=space.tmp,
            log=space.tmp / "serve-stderr.log",
        )


@pytest.fixture
def with_token(tmp_path: Path) -> Iterator[Served]:
    space = Workspace(tmp_path)
    server = Served(
        space,
        "--token-env",
        "SKILLBOOK_TEST_TOKEN",
        env={**space.env(), "SKILLBOOK_TEST_TOKEN": TOKEN},
    )
    try:
        server.wait_listening()
        yield server
    finally:
        server.stop()


def test_requests_without_the_bearer_token_get_401(with_token: Served) -> None:
    refused = initialize(with_token.url)
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == 'Bearer realm="skillbook"'
    assert initialize(with_token.url, Authorization="Bearer wrong").status_code == 401
    assert initialize(with_token.url, Authorization=f"Bearer {TOKEN}").status_code == 200


def test_an_mcp_client_with_the_token_works(with_token: Served) -> None:
    async def main() -> list[str]:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            Client(streamable_http_client(with_token.url, http_client=http)) as client,
        ):
            return [t.name for t in (await client.list_tools()).tools]

    assert anyio.run(main) == ["read_skill"]


@pytest.fixture
def plain(tmp_path: Path) -> Iterator[Served]:
    server = Served(Workspace(tmp_path))
    try:
        server.wait_listening()
        yield server
    finally:
        server.stop()


def test_an_origin_on_another_port_is_refused(plain: Served) -> None:
    other = free_port()
    refused = initialize(plain.url, Origin=f"http://127.0.0.1:{other}")
    assert refused.status_code == 403
    assert f"Origin port {other} is not this server's port {plain.port}" in refused.text
    assert initialize(plain.url, Origin="http://localhost").status_code == 403  # port 80
    assert initialize(plain.url, Origin=f"http://evil.example:{plain.port}").status_code == 403
    assert initialize(plain.url, Origin=f"http://localhost:{plain.port}").status_code == 200
    assert initialize(plain.url).status_code == 200  # no Origin: not a browser


# --------------------------------------------------------------------------- sessions

SESSIONS_SCRIPT = """
import sys, anyio
from skillbook import Loader
from skillbook.mcp.server import bind_http, build_server
sock = bind_http("127.0.0.1", int(sys.argv[2]))
server = build_server(Loader(sys.argv[1]), watch=False)
anyio.run(lambda: server.run_http(sock=sock, max_sessions=2))
"""


def test_the_least_recently_used_idle_session_is_closed_to_make_room(tmp_path: Path) -> None:
    space = Workspace(tmp_path)
    script = tmp_path / "sessions.py"
    script.write_text(SESSIONS_SCRIPT)
    port = free_port()
    server = ServeProcess(
        [sys.executable, str(script), str(space.ws), str(port)],
        port=port,
        env=space.env(),
        cwd=tmp_path,
        log=tmp_path / "sessions.log",
    )
    try:
        server.wait_listening()
        ids = []
        for _ in range(2):
            opened = initialize(server.url)
            assert opened.status_code == 200
            ids.append(opened.headers["mcp-session-id"])
        assert call(server.url, ids[0], "tools/list").status_code == 200  # ids[1] is now LRU
        third = initialize(server.url)
        assert third.status_code == 200
        ids.append(third.headers["mcp-session-id"])
        assert call(server.url, ids[1], "tools/list").status_code == 404  # evicted
        assert call(server.url, ids[0], "tools/list").status_code == 200
        assert call(server.url, ids[2], "tools/list").status_code == 200
    finally:
        server.stop()


def test_bind_http_refuses_beyond_loopback_without_a_token() -> None:
    from skillbook.errors import SkillbookError
    from skillbook.mcp import PortInUse, ServeError
    from skillbook.mcp._transports import bind_http

    with pytest.raises(ServeError, match="reachable from other machines"):
        bind_http("0.0.0.0", 0)
    kws: list[dict[str, Any]] = [{"token": TOKEN}, {"allow_unauthenticated": True}]
    for kw in kws:
        bind_http("0.0.0.0", 0, **kw).close()
    with bind_http("127.0.0.1", 0) as taken, pytest.raises(PortInUse) as info:
        bind_http("127.0.0.1", taken.getsockname()[1])
    assert isinstance(info.value, SkillbookError) and isinstance(info.value, OSError)
