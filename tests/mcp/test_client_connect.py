"""What ``open_client`` makes of a failed handshake: the SDK's and the transports'
errors become ``mcp.server-unreachable``; anything else is not blamed on the server but
reaches the source, which logs it with its traceback (``mcp.invalid-response``)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

import httpx2
import mcp

from skillbook.errors import SourceError
from skillbook.mcp.client import open_client, parse_server_specs
from skillbook.mcp.remote_source import RemoteSkillSource

SPEC = parse_server_specs([{"name": "web", "url": "http://127.0.0.1:9/mcp"}])[0]


def failing_handshake(monkeypatch: pytest.MonkeyPatch, exc: BaseException) -> None:
    async def enter(self: Any) -> Any:
        raise exc

    monkeypatch.setattr(mcp.Client, "__aenter__", enter)


async def connect() -> None:
    async with open_client(SPEC, timeout_s=5):
        pass


@pytest.mark.parametrize(
    "exc",
    [
        ExceptionGroup("tg", [httpx2.ConnectError("All connection attempts failed")]),
        ExceptionGroup("tg", [ExceptionGroup("inner", [mcp.MCPError(-1, "Connection closed")])]),
        FileNotFoundError(2, "No such file or directory"),
    ],
)
def test_transport_failures_are_the_server_being_unreachable(
    monkeypatch: pytest.MonkeyPatch, exc: BaseException
) -> None:
    failing_handshake(monkeypatch, exc)
    with pytest.raises(SourceError) as err:
        anyio.run(connect)
    assert err.value.code == "mcp.server-unreachable"
    assert err.value.message.startswith("cannot reach MCP server 'web' at http://127.0.0.1:9/mcp: ")


def test_a_bug_is_not_reported_as_an_unreachable_server(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bug = ExceptionGroup("tg", [httpx2.ConnectError("x"), ZeroDivisionError("division by zero")])
    failing_handshake(monkeypatch, bug)
    with pytest.raises(ExceptionGroup):
        anyio.run(connect)
    # The source keeps loading (one server's failure never stops the others) and logs it.
    with caplog.at_level(logging.WARNING, logger="skillbook.mcp"):
        load = RemoteSkillSource(SPEC, cache_dir=tmp_path / "cache").load()
    assert [d.code for d in load.diagnostics] == ["mcp.invalid-response"]
    (record,) = [r for r in caplog.records if r.name == "skillbook.mcp"]
    assert record.exc_info is not None and record.exc_info[1] is not None
