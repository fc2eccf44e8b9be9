"""Kept answers over real HTTP with the real SDK: byte for byte what the SDK sends.

One :class:`SkillServer` behind two HTTP servers on 127.0.0.1: the application
``skillbook serve`` runs (kept answers on) and the same one without them. Every
cacheable request gets the same status, content type and body from both, the first
time and again from kept bytes; after a skill changes, the new bytes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
import uvicorn
from mcp import Client
from test_server import WAIT_S, Workspace

from skillbook.mcp._answers import CachedAnswers
from skillbook.mcp._http import build_app
from skillbook.mcp._transports import bind_http
from skillbook.mcp.server import SkillServer, build_server

pytestmark = pytest.mark.subprocess

VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
}


class Served:
    """One application of ``server`` on its own port: kept answers on, or the SDK alone."""

    def __init__(self, server: SkillServer, *, kept: bool) -> None:
        self.sock = bind_http("127.0.0.1", 0)
        port = int(self.sock.getsockname()[1])
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.app = (
            server.http_app(port=port)
            if kept
            else build_app(server, host="127.0.0.1", port=port, path="/mcp", token=None)
        )

    @property
    def answers(self) -> CachedAnswers:
        inner = self.app.app  # the Guard's application
        assert isinstance(inner, CachedAnswers)
        return inner


@asynccontextmanager
async def serving(server: SkillServer) -> AsyncIterator[tuple[Served, Served]]:
    """The application ``skillbook serve`` runs and the SDK's alone, both serving."""
    pair = (Served(server, kept=True), Served(server, kept=False))
    running = [
        uvicorn.Server(uvicorn.Config(s.app, log_level="warning", lifespan="on", ws="none"))
        for s in pair
    ]
    try:
        async with anyio.create_task_group() as tg:
            for served, http in zip(pair, running, strict=True):
                tg.start_soon(partial(http.serve, sockets=[served.sock]))
            with anyio.fail_after(WAIT_S):
                while not all(h.started for h in running):
                    await anyio.sleep(0.01)
            try:
                yield pair
            finally:
                for http in running:
                    http.should_exit = True
    finally:
        for served in pair:
            served.sock.close()


async def post(
    client: httpx2.AsyncClient, url: str, method: str, params: dict[str, Any], ident: object
) -> tuple[int, str, bytes]:
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": method,
    }
    if "uri" in params:
        headers["Mcp-Name"] = params["uri"]
    body = {"jsonrpc": "2.0", "id": ident, "method": method, "params": {**params, "_meta": META}}
    got = await client.post(url, content=json.dumps(body), headers=headers)
    return got.status_code, got.headers.get("content-type", ""), got.content


def test_kept_answers_are_the_sdk_bytes(tmp_path: Path) -> None:
    space = Workspace(tmp_path)
    server = build_server(space.loader(), watch=False, page_size=1)
    cursor = "MQ=="  # the second page (the base64 offset 1)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("skills/list", {}),
        ("skills/list", {"cursor": cursor}),
        ("skills/get", {"uri": "skill://alpha/SKILL.md"}),
        ("resources/read", {"uri": "skill://alpha/SKILL.md"}),
        ("resources/read", {"uri": "skill://alpha/references/guide.md"}),
        ("resources/read", {"uri": "skill://alpha/assets/logo.png"}),
        ("resources/directory/read", {"uri": "skill://alpha/references"}),
        ("resources/list", {}),
        ("prompts/list", {}),
    ]

    async def main() -> None:
        async with serving(server) as (kept, plain), httpx2.AsyncClient() as client:
            for method, params in calls:
                for ident in (1, "second", 3):
                    mine = await post(client, kept.url, method, params, ident)
                    sdk = await post(client, plain.url, method, params, ident)
                    assert mine == sdk, (method, params, ident)
                    assert mine[0] == 200 and b'"result":' in mine[2]
            answers = kept.answers
            assert (answers.misses, answers.hits) == (len(calls), 2 * len(calls))

    anyio.run(main)


def test_errors_are_the_sdk_errors_and_never_kept(tmp_path: Path) -> None:
    space = Workspace(tmp_path)
    server = build_server(space.loader(), watch=False)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("resources/read", {"uri": "skill://nope/SKILL.md"}),
        ("resources/read", {"uri": "skill://alpha/references"}),  # a directory
        ("skills/list", {"cursor": "not-a-cursor"}),
        ("skills/get", {"uri": "skill://gated/SKILL.md"}),
    ]

    async def main() -> None:
        async with serving(server) as (kept, plain), httpx2.AsyncClient() as client:
            for method, params in calls:
                for ident in (1, 1):
                    mine = await post(client, kept.url, method, params, ident)
                    assert mine == await post(client, plain.url, method, params, ident)
                    assert b'"error":' in mine[2]
            assert kept.answers.hits == 0

    anyio.run(main)


def test_a_changed_skill_is_answered_with_its_new_bytes(tmp_path: Path) -> None:
    space = Workspace(tmp_path)
    server = build_server(space.loader(), watch=False, rescan_interval_s=0.05)
    beta = space.skills / "beta" / "SKILL.md"
    read = ("resources/read", {"uri": "skill://beta/SKILL.md"})

    async def main() -> None:
        async with serving(server) as (kept, plain), httpx2.AsyncClient() as client:
            before = await post(client, kept.url, *read, 1)
            assert before == await post(client, kept.url, *read, 1)
            assert kept.answers.hits == 1
            beta.write_text(beta.read_text() + "\nA new line.\n")
            with anyio.fail_after(WAIT_S):
                while (now := await post(client, kept.url, *read, 1)) == before:
                    await anyio.sleep(0.05)
            assert b"A new line." in now[2]
            assert now == await post(client, plain.url, *read, 1)
            assert now == await post(client, kept.url, *read, 1)

    anyio.run(main)


def test_the_sdk_clients_repeated_reads_are_kept_answers(tmp_path: Path) -> None:
    space = Workspace(tmp_path)
    server = build_server(space.loader(), watch=False)

    async def main() -> None:
        async with serving(server) as (kept, _plain):
            texts = []
            for _ in range(2):  # two clients, each reading twice
                async with Client(kept.url, mode="auto") as client:
                    for _ in range(2):
                        got = await client.read_resource("skill://beta/SKILL.md")
                        content = got.contents[0]
                        assert isinstance(content, types.TextResourceContents)
                        texts.append(content.text)
            assert len(set(texts)) == 1 and "Beta body" in texts[0]
            assert (kept.answers.misses, kept.answers.hits) == (1, 3)

    anyio.run(main)
