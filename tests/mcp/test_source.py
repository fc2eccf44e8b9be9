"""The MCP servers as one skill source: the seam's contract and the read hook."""

from __future__ import annotations

from pathlib import Path

import pytest
from source_conformance import SourceConformance
from test_client import FakeServer, honest_catalog

from skillbook.config.file import Config
from skillbook.config.paths import Paths
from skillbook.mcp.source import McpSkillSource, mcp_sources
from skillbook.model import Source
from skillbook.pipeline.discovery.sources import (
    REMOTE_PRECEDENCE,
    FileFetcher,
    SkillSource,
    SourceContext,
)

pytest.importorskip("mcp")
pytestmark = pytest.mark.subprocess


class TestMcpSkillSource(SourceConformance):
    @pytest.fixture
    def source(self, tmp_path: Path) -> SkillSource:
        server = FakeServer(tmp_path / "server", honest_catalog())
        return McpSkillSource((server.spec,), cache_dir=tmp_path / "cache")


def test_remote_rank_and_fetch(tmp_path: Path) -> None:
    server = FakeServer(tmp_path / "server", honest_catalog())
    source = McpSkillSource((server.spec,), cache_dir=tmp_path / "cache")
    assert source.label == Source.REMOTE.value and source.precedence == REMOTE_PRECEDENCE
    assert isinstance(source, FileFetcher)
    refunds = next(s for s in source.load().skills if s.name == "refunds")
    fetched = source.fetch(refunds, "examples/email.md")
    assert isinstance(fetched, Path) and fetched.read_bytes()


def test_the_factory_builds_one_source_for_all_servers(tmp_path: Path) -> None:
    paths = Paths.from_env({"HOME": str(tmp_path), "SKILLBOOK_STATE_DIR": str(tmp_path / "st")})
    servers = [{"name": "a", "url": "http://127.0.0.1:1/mcp"}, {"name": "b", "command": ["x"]}]
    config = Config.from_mapping({"skills": {"mcp": {"servers": servers}}})
    (source,) = mcp_sources(SourceContext(config, paths, None, {}))
    assert isinstance(source, McpSkillSource)
    assert [s.name for s in source.specs] == ["a", "b"]
    assert source.cache_dir == tmp_path / "st" / "mcp-cache"
    assert mcp_sources(SourceContext(Config.empty(), paths, None, {})) == ()
