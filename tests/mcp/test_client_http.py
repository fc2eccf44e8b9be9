"""skillbook's MCP client over streamable HTTP, against ``skillbook serve --transport http``
started as a subprocess on 127.0.0.1 and a free port (§9 client checklist)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillbook.mcp.client import McpServerSpec, parse_server_specs
from skillbook.mcp.remote_catalog import load_remote_skills
from skillbook.mcp.remote_source import RemoteSkillSource

pytest.importorskip("mcp")

from serve_process import ServeProcess, free_port
from test_client import skillbook_server

pytestmark = pytest.mark.subprocess


class HttpServer(ServeProcess):
    """``python -m skillbook serve --transport http`` for one test; stopped by pid."""

    def __init__(self, tmp: Path) -> None:
        stdio, self.ws = skillbook_server(tmp)
        self.stdio = stdio
        port = free_port()
        super().__init__(
            [*stdio.command, "--transport", "http", "--port", str(port)],
            port=port,
            env=stdio.env,
            log=tmp / "http-stderr.log",
        )


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[HttpServer]:
    server = HttpServer(tmp_path)
    try:
        server.wait_listening()
        yield server
    finally:
        server.stop()


def test_skills_over_http_are_listed_verified_and_cached(
    http_server: HttpServer, tmp_path: Path
) -> None:
    spec = parse_server_specs([{"name": "web", "url": http_server.url}])[0]
    source = RemoteSkillSource(spec, cache_dir=tmp_path / "cache")
    load = source.load()
    assert [d.code for d in load.diagnostics] == ["parse.metadata-invalid"]
    by_name = {s.name: s for s in load.skills}
    assert sorted(by_name) == ["alpha", "beta"]
    alpha = by_name["alpha"]
    local = http_server.ws / "skills" / "alpha" / "SKILL.md"
    assert alpha.file_path.read_bytes() == local.read_bytes()
    assert alpha.origin == f"web ({http_server.url})" and alpha.source == "mcp-remote"
    guide = source.fetch(alpha, "references/guide.md")
    assert isinstance(guide, Path) and guide.read_text() == "# Guide\n"
    again = source.load()
    assert (again.fetched, again.cache_hits) == (0, 2)


def test_same_server_on_two_transports_is_two_origins(
    http_server: HttpServer, tmp_path: Path
) -> None:
    """Identity is (label, URI): the same skills from two labels land apart, qualified."""
    web = McpServerSpec(name="web", url=http_server.url)
    skills, diags = load_remote_skills([http_server.stdio, web], tmp_path / "cache")
    assert sorted(s.name for s in skills) == ["book:alpha", "book:beta", "web:alpha", "web:beta"]
    assert [d.code for d in diags].count("mcp.name-collision") == 4
    alpha = {s.name: s.file_path for s in skills}
    assert alpha["book:alpha"] != alpha["web:alpha"]
    assert alpha["book:alpha"].read_bytes() == alpha["web:alpha"].read_bytes()


def test_unreachable_url_is_diagnosed(tmp_path: Path) -> None:
    spec = McpServerSpec(name="nobody", url=f"http://127.0.0.1:{free_port()}/mcp", timeout_s=10)
    started = time.monotonic()
    skills, diags = load_remote_skills([spec], tmp_path / "cache")
    assert skills == ()
    assert [d.code for d in diags] == ["mcp.server-unreachable"]
    assert "nobody" in diags[0].message and spec.url in diags[0].message  # type: ignore[operator]
    assert time.monotonic() - started < 15
    assert not (tmp_path / "cache" / "servers").exists()
