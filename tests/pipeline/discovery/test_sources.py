"""The skill-source seam: the protocol, precedence and merge, factories from config.

``SourceConformance`` (``tests/source_conformance.py``) is the contract every source
keeps; each source's test class subclasses it with one fixture (the MCP source's lives
in tests/mcp).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from factories import write_skill
from source_conformance import SourceConformance

from skillbook.config.file import Config
from skillbook.config.paths import Paths
from skillbook.diagnostics import Diagnostic, warning
from skillbook.model import Skill, Source
from skillbook.pipeline.book import Loader
from skillbook.pipeline.discovery.discover import (
    DiscoverOptions,
    Root,
    RootSource,
    discover_sources,
    make_scanner,
)
from skillbook.pipeline.discovery.plugins import PluginSkillSource, load_registry
from skillbook.pipeline.discovery.sources import (
    REMOTE_PRECEDENCE,
    FileFetcher,
    Precedence,
    SkillSource,
    SourceContext,
    StaticSource,
    Tier,
    configured_sources,
    fetcher_for,
    installed_factories,
    local_precedence,
)


def made(name: str, source: Source = Source.WORKSPACE, base: Path = Path("/nowhere")) -> Skill:
    return Skill.create(name, f"{name} skill", base_dir=base / name, source=source.value)


class TestStaticSource(SourceConformance):
    @pytest.fixture
    def source(self, tmp_path: Path) -> SkillSource:
        return StaticSource((made("alpha"), made("beta")))


class TestRootSource(SourceConformance):
    @pytest.fixture
    def source(self, tmp_path: Path) -> SkillSource:
        write_skill(tmp_path / "root" / "one")
        write_skill(tmp_path / "root" / "broken", description=None, body="")
        scanner, _ = make_scanner(DiscoverOptions())
        return RootSource(Root(Source.EXTRA, tmp_path / "root"), scanner)


class TestPluginSkillSource(SourceConformance):
    @pytest.fixture
    def source(self, tmp_path: Path) -> SkillSource:
        plugin = tmp_path / "state" / "extensions" / "p"
        plugin.mkdir(parents=True)
        (plugin / "openclaw.plugin.json").write_text(
            '{"id": "p", "configSchema": {}, "skills": ["./skills", "./gone"]}'
        )
        (plugin / "index.js").write_text("")
        write_skill(plugin / "skills" / "from-plugin")
        paths = Paths.from_env(
            {"HOME": str(tmp_path), "SKILLBOOK_STATE_DIR": str(tmp_path / "state")}
        )
        config = Config.empty()
        registry = load_registry(tmp_path / "ws", paths, config, env={}, cwd=tmp_path)
        scanner, _ = make_scanner(DiscoverOptions())
        return PluginSkillSource(registry, config, scanner)


# --------------------------------------------------------------------------- merge


def test_local_tier_is_openclaws_merge_and_remote_tier_comes_after() -> None:
    low = StaticSource(
        (made("a", Source.EXTRA), made("b", Source.EXTRA)),
        label=Source.EXTRA.value,
        precedence=local_precedence(Source.EXTRA),
    )
    high = StaticSource((made("b"), made("c")))
    remote = StaticSource(
        (made("r", Source.REMOTE), made("a", Source.REMOTE)),
        label=Source.REMOTE.value,
        precedence=REMOTE_PRECEDENCE,
        diagnostics=(warning("discover.unreadable", "from the remote source"),),
    )
    # Given in any order: precedence decides.
    found = discover_sources([remote, high, low])
    assert [(s.name, s.source) for s in found.skills] == [
        ("a", Source.EXTRA.value),
        ("b", Source.WORKSPACE.value),  # the higher source wins; the name keeps its place
        ("c", Source.WORKSPACE.value),
        ("r", Source.REMOTE.value),  # remote after every local skill
    ]
    codes = [d.code for d in found.diagnostics]
    # Local merge findings come before the remote source's and the remote merge's.
    assert codes == ["discover.shadowed", "discover.unreadable", "discover.remote-shadowed"]
    assert [s.hidden.source for s in found.shadowed] == [Source.EXTRA.value, Source.REMOTE.value]
    assert found.sources == (low, high, remote)


def test_equal_precedence_keeps_the_given_order() -> None:
    first = StaticSource((made("x"),), precedence=Precedence(Tier.LOCAL, 5))
    second = StaticSource((made("x", base=Path("/other")),), precedence=Precedence(Tier.LOCAL, 5))
    assert discover_sources([first, second]).skills[0].base_dir == Path("/other/x")
    assert discover_sources([second, first]).skills[0].base_dir == Path("/nowhere/x")


def test_loader_takes_extra_sources(tmp_path: Path) -> None:
    write_skill(tmp_path / "ws" / "skills" / "on-disk", description="from the workspace")
    in_code = StaticSource(
        (made("in-code"), made("on-disk")), precedence=local_precedence(Source.EXTRA)
    )
    env = {
        "HOME": str(tmp_path),
        "SKILLBOOK_STATE_DIR": str(tmp_path / "st"),
        "SKILLBOOK_BUNDLED_SKILLS_DIR": str(tmp_path / "none"),
        "PATH": "",
    }
    book = Loader(tmp_path / "ws", env=env, sources=[in_code]).load()
    assert [s.name for s in book.skills] == ["in-code", "on-disk"]
    assert book.get("on-disk").description == "from the workspace"
    assert "in-code" in book.prompt


# --------------------------------------------------------------------------- factories


class FetchingSource(StaticSource):
    def fetch(self, skill: Skill, relative: str) -> Path | Diagnostic:
        return Path("/fetched") / skill.name / relative


def test_fetcher_asks_the_source_a_skill_came_from() -> None:
    remote = FetchingSource((made("r", Source.REMOTE),), label=Source.REMOTE.value)
    assert isinstance(remote, FileFetcher)
    assert fetcher_for([StaticSource((made("l"),))]) is None
    fetch = fetcher_for([StaticSource((made("l"),)), remote])
    assert fetch is not None
    assert fetch(made("r", Source.REMOTE), "refs/a.md") == Path("/fetched/r/refs/a.md")
    refused = fetch(made("l"), "refs/a.md")
    assert isinstance(refused, Diagnostic) and refused.code == "discover.not-fetchable"


def _context(tmp_path: Path, config: Config) -> SourceContext:
    paths = Paths.from_env({"HOME": str(tmp_path), "SKILLBOOK_STATE_DIR": str(tmp_path / "st")})
    return SourceContext(config, paths, tmp_path, {})


def test_a_configured_section_without_a_factory_is_diagnosed(tmp_path: Path) -> None:
    config = Config.from_mapping(
        {"skills": {"mcp": {"servers": [{"name": "a", "url": "http://h/"}]}}}
    )
    assert config.source_sections() == ("skills.mcp",)
    sources, diags = configured_sources(_context(tmp_path, config), {})
    assert sources == [] and [d.code for d in diags] == ["discover.source-unavailable"]
    assert "`skills.mcp` is configured" in diags[0].message


def test_factories_run_only_for_configured_sections(tmp_path: Path) -> None:
    calls: list[str] = []

    def factory(context: SourceContext) -> list[SkillSource]:
        calls.append("skills.mcp")
        return [
            StaticSource(
                (made("via-factory", Source.REMOTE),),
                label=Source.REMOTE.value,
                precedence=REMOTE_PRECEDENCE,
            )
        ]

    assert configured_sources(_context(tmp_path, Config.empty()), {"skills.mcp": factory}) == (
        [],
        [],
    )
    assert calls == []
    config = Config.from_mapping(
        {"skills": {"mcp": {"servers": [{"name": "a", "url": "http://h/"}]}}}
    )
    env = {"HOME": str(tmp_path), "SKILLBOOK_STATE_DIR": str(tmp_path / "st"), "PATH": ""}
    book = Loader(tmp_path, config=config, env=env, source_factories={"skills.mcp": factory}).load()
    assert calls == ["skills.mcp"] and book.skills[-1].name == "via-factory"


def test_the_mcp_source_is_offered_through_entry_points() -> None:
    factories = installed_factories({"skills.mcp"})
    assert factories["skills.mcp"].__module__ == "skillbook.mcp.source"
    assert installed_factories(set()) == {}
    assert installed_factories({"no.such.section"}) == {}


@pytest.mark.subprocess
def test_the_core_loads_no_edge_package_without_a_configured_section(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys, skillbook\n"
        f"skillbook.load({str(tmp_path)!r}, env={{'HOME': {str(tmp_path)!r}, 'PATH': ''}})\n"
        "print(sorted(m for m in sys.modules if m.startswith('skillbook.') and m.split('.')[1] in "
        "('mcp', 'runtime', 'integrations', 'cli')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={**os.environ}
    )
    assert out.stdout.strip() == "[]"
