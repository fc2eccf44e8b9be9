"""``skillbook serve --transport http``: streamable HTTP on 127.0.0.1, a free port.

The same checks as over stdio (SEP-2640 checklist §9 "Server"), a handshake-era
client over HTTP, the default bind address, DNS-rebinding protection, and a
list-changed notification on a ``subscriptions/listen`` stream after a new skill.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import mcp_types as types
import pytest
from factories import write_skill
from mcp import Client
from serve_process import ServeProcess, free_port
from test_server import (
    EXT,
    LAUNCH,
    WAIT_S,
    Workspace,
    all_skills,
    changes_after,
    check_escapes,
    check_extension,
    check_fallbacks,
    error_of,
    list_skills,
)

pytestmark = pytest.mark.subprocess


class HttpServer(ServeProcess):
    def __init__(self, space: Workspace, port: int) -> None:
        args = ["--workspace", str(space.ws), "serve", "--transport", "http", "--port", str(port)]
        super().__init__(
            [sys.executable, *LAUNCH, *args],
            port=port,
            env=space.env(),
            cwd=space.tmp,
            log=space.tmp / "http-stderr.log",
        )


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[tuple[Workspace, HttpServer]]:
    space = Workspace(tmp_path)
    server = HttpServer(space, free_port())
    try:
        server.wait_listening()
        yield space, server
    finally:
        server.stop()


@pytest.mark.e2e
def test_http_serve_with_skills_extension(http_server: tuple[Workspace, HttpServer]) -> None:
    space, server = http_server

    async def main() -> None:
        async with Client(server.url, mode="auto") as client:
            assert EXT in (client.server_capabilities.extensions or {})
            await check_extension(client, space)
            await check_escapes(client)
            await check_fallbacks(client, space, skills={"alpha", "beta"})
            seen = await changes_after(client, lambda: write_skill(space.skills / "gamma"))
            assert seen == {"ResourcesListChanged", "PromptsListChanged"}
            uris = [e["uri"] for e in await all_skills(client.session)]
            assert "skill://gamma/SKILL.md" in uris
        async with Client(server.url, mode="legacy") as legacy:
            assert EXT not in (legacy.server_capabilities.extensions or {})
            err = await error_of(list_skills(legacy.session))
            assert err.code == types.METHOD_NOT_FOUND
            names = {p.name for p in (await legacy.list_prompts()).prompts}
            assert names == {"alpha", "beta", "gamma"}

    try:
        anyio.run(main)
    except BaseException:
        print(server.log.read_text())
        raise
    assert f"http://127.0.0.1:{server.port}/mcp" in server.log.read_text()


@pytest.mark.e2e
def test_http_binds_loopback_and_refuses_foreign_host_headers(
    http_server: tuple[Workspace, HttpServer],
) -> None:
    _, server = http_server
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "0"},
        },
    }
    headers = {"Accept": "application/json, text/event-stream", "Host": "evil.example"}
    response = httpx2.post(server.url, json=body, headers=headers, timeout=10)
    assert response.status_code >= 400  # DNS-rebinding protection on loopback
    out = subprocess.run(["ss", "-ltn"], capture_output=True, text=True, check=False)
    if out.returncode == 0:
        bound = [line for line in out.stdout.splitlines() if f":{server.port} " in line]
        assert bound and all("127.0.0.1:" in line for line in bound)


@pytest.mark.e2e
@pytest.mark.parametrize("workers", [[], ["--workers", "2"]], ids=["one-process", "workers"])
def test_a_stop_signal_closes_open_listen_streams_gracefully(
    tmp_path: Path, workers: list[str]
) -> None:
    """SIGTERM with a client listening: the stream gets the server's final result
    (a graceful close, not a drop) and the server exits. uvicorn's graceful stop
    waited for the stream as for any unfinished response, so the server ran on."""
    space = Workspace(tmp_path)
    port = free_port()
    args = ["--workspace", str(space.ws), "serve", "--transport", "http", "--port", str(port)]
    server = ServeProcess(
        [sys.executable, *LAUNCH, *args, *workers],
        port=port,
        env=space.env(),
        cwd=space.tmp,
        log=space.tmp / "http-stderr.log",
    )
    ended: list[str] = []

    async def main() -> None:
        async with (
            Client(server.url, mode="auto") as client,
            client.listen(resources_list_changed=True) as sub,
        ):
            server.proc.send_signal(signal.SIGTERM)
            with anyio.fail_after(WAIT_S):
                async for event in sub:
                    ended.append(type(event).__name__)
            ended.append("closed")  # SubscriptionLost is raised on a drop instead

    try:
        server.wait_listening()
        anyio.run(main)
        assert ended == ["closed"]
        assert server.proc.wait(WAIT_S) in (0, -signal.SIGTERM)
    finally:
        server.stop()
