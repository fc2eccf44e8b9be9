"""A server that lies about sizes: the declared size is a hard cap on what is read.

The liar lists a 70-byte ``SKILL.md`` (and a small reference) with honest digests,
then answers ``resources/read`` with 60 MB. The client must refuse the answer while it
arrives, never holding it in memory: Python's allocation peak during the load stays
far below the size of the answer. Both transports, real servers (stdio and
streamable HTTP on 127.0.0.1).
"""

from __future__ import annotations

import json
import sys
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from serve_process import ServeProcess, free_port
from test_client import FakeServer, codes, digest, item

from skillbook.mcp.client import McpServerSpec
from skillbook.mcp.remote_source import RemoteSkillSource

#: What the liar sends for a file it declared at a few dozen bytes.
LIE_BYTES = 60 * 1024 * 1024
#: The allocation peak a load may reach; reading the lie would need several times 60 MB.
PEAK_BYTES = 16 * 1024 * 1024

SKILL_MD = "---\nname: tiny\ndescription: A tiny skill that fits seventy bytes!\n---\n"
GUIDE = "# Guide\n"
BASE = "skill://tiny"


def liar_catalog(lie_about: str) -> dict[str, Any]:
    files = {f"{BASE}/SKILL.md": SKILL_MD.encode(), f"{BASE}/guide.md": GUIDE.encode()}
    assert len(files[f"{BASE}/SKILL.md"]) == 70
    wire: dict[str, Any] = {u: {"text": d.decode()} for u, d in files.items()}
    wire[f"{BASE}/{lie_about}"] = {"repeat": "x", "times": LIE_BYTES}
    entry = {
        "uri": f"{BASE}/SKILL.md",
        "frontmatter": {"name": "tiny", "description": "A tiny skill that fits seventy bytes!"},
        "resources": [item(u, d) for u, d in files.items()],
    }
    return {"entries": [entry], "files": wire}


class HttpLiar(ServeProcess):
    def __init__(self, tmp: Path, lie_about: str) -> None:
        port = free_port()
        self.fake = FakeServer(tmp, {**liar_catalog(lie_about), "port": port}, name="liar")
        super().__init__(
            list(self.fake.spec.command), port=port, env=_env(), log=tmp / "liar-stderr.log"
        )


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "SYSTEMROOT")}


@contextmanager
def served(transport: str, tmp: Path, lie_about: str) -> Iterator[McpServerSpec]:
    if transport == "stdio":
        yield FakeServer(tmp, liar_catalog(lie_about), name="liar").spec
        return
    server = HttpLiar(tmp, lie_about)
    try:
        server.wait_listening()
        yield McpServerSpec(name="liar", url=server.url, timeout_s=60)
    finally:
        server.stop()


def peak_of(run: Any) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        out = run()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.subprocess
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_lying_skill_md_is_refused_before_it_is_buffered(tmp_path: Path, transport: str) -> None:
    with served(transport, tmp_path, "SKILL.md") as spec:
        source = RemoteSkillSource(spec, cache_dir=tmp_path / "cache")
        load, peak = peak_of(source.load)
        assert load.skills == ()
        assert codes(load.diagnostics) == ["mcp.digest-mismatch"]
        message = load.diagnostics[0].message
        assert f"{BASE}/SKILL.md" in message and "the 70 bytes the manifest declares" in message
        assert "refused before it was read in full" in message
        assert peak < PEAK_BYTES, peak
        assert not any((tmp_path / "cache").glob("*" + digest(SKILL_MD.encode())[7:]))


@pytest.mark.subprocess
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_lying_reference_is_refused_when_fetched(tmp_path: Path, transport: str) -> None:
    with served(transport, tmp_path, "guide.md") as spec:
        source = RemoteSkillSource(spec, cache_dir=tmp_path / "cache")
        load = source.load()
        assert [s.name for s in load.skills] == ["tiny"], load.diagnostics
        got, peak = peak_of(lambda: source.fetch(load.skills[0], "guide.md"))
        assert not isinstance(got, Path)
        assert got.code == "mcp.digest-mismatch" and "the 8 bytes" in got.message
        assert peak < PEAK_BYTES, peak
        assert not (load.skills[0].base_dir / "guide.md").exists()


def test_the_caps_allow_every_honest_encoding() -> None:
    """A file of control characters (6 bytes each in JSON) still fits its cap."""
    from skillbook.mcp._capped import ENVELOPE_BYTES, wire_limit

    data = "\x01" * 1000
    encoded = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"contents": [{"text": data}]}})
    assert len(encoded) <= wire_limit(len(data.encode()))
    assert wire_limit(0) == ENVELOPE_BYTES
    assert sys.getsizeof(b"") < ENVELOPE_BYTES


def _post(uri: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": {"uri": uri}}


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, "passed 65956 bytes"),  # streamed, no length: counted as it arrives
        ({"content-length": str(10**8)}, "declares 100000000 bytes"),
        ({"content-encoding": "gzip"}, "gzip-encoded answer"),
    ],
)
def test_the_http_cap_counts_streamed_bodies(headers: dict[str, str], expected: str) -> None:
    import anyio
    import httpx2

    from skillbook.mcp._capped import AnswerTooLarge, ResponseCaps, _CappedTransport

    sent: list[int] = []

    async def body() -> Any:
        for _ in range(1000):  # 64 MB if it were all read
            sent.append(1)
            yield b"x" * 65536

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers=headers, content=body())

    caps = ResponseCaps()
    caps.expect("skill://a/SKILL.md", 70)

    async def main() -> None:
        transport = _CappedTransport(httpx2.MockTransport(handler), caps)
        async with httpx2.AsyncClient(transport=transport) as client:
            with pytest.raises(AnswerTooLarge, match=expected):
                await client.post("http://x/mcp", json=_post("skill://a/SKILL.md"))

    anyio.run(main)
    assert "skill://a/SKILL.md" in caps.tripped
    assert len(sent) <= 2  # stopped at the cap, not at the end of the body


def test_other_requests_get_the_default_cap() -> None:
    from skillbook.mcp._capped import DEFAULT_MAX_MESSAGE_BYTES, ResponseCaps

    caps = ResponseCaps()
    caps.expect("skill://a/SKILL.md", 70)
    assert caps.for_request(_post("skill://b/SKILL.md")) == (
        DEFAULT_MAX_MESSAGE_BYTES,
        "skill://b/SKILL.md",
    )
    assert caps.for_request({"method": "skills/list"}) == (DEFAULT_MAX_MESSAGE_BYTES, None)
    caps.sent(_post("skill://a/SKILL.md"))
    assert caps.line_cap() < DEFAULT_MAX_MESSAGE_BYTES
    caps.answered(json.dumps({"jsonrpc": "2.0", "id": 7, "result": {}}).encode())
    assert caps.line_cap() == DEFAULT_MAX_MESSAGE_BYTES
