"""Connecting to a token-protected server: ``tokenEnv`` in ``skills.mcp.servers[]``.

The config checks the key (HTTP only, a variable's name, never echoed); the client sends
the variable's value as ``Authorization: Bearer …`` on every request. The server is a real
``skillbook serve --transport http --token-env`` on 127.0.0.1 and a free port.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillbook.config.file import Config
from skillbook.errors import ConfigError
from skillbook.mcp.client import McpServerSpec, parse_server_specs
from skillbook.mcp.remote_source import RemoteSkillSource
from skillbook.pipeline.book import Loader

pytest.importorskip("mcp")

from serve_process import ServeProcess, free_port
from test_client import skillbook_server

TOKEN = "tok-8f2c1e9a7d"
URL = "http://127.0.0.1:8123/mcp"


# --------------------------------------------------------------------------- the config


def spec_of(**extra: Any) -> McpServerSpec:
    return parse_server_specs([{"name": "team", **extra}])[0]


def test_token_env_is_an_http_servers_variable_name() -> None:
    spec = spec_of(url=URL, tokenEnv="TEAM_TOKEN")
    assert spec.token_env == "TEAM_TOKEN" and spec.transport == "http"
    assert spec_of(url=URL).token_env is None
    # The token is not part of the server's identity: its cache survives a new token.
    assert spec.key == spec_of(url=URL).key


@pytest.mark.parametrize(
    ("extra", "detail"),
    [
        (
            {"url": URL, "tokenEnv": TOKEN},
            "expected the name of an environment variable (letters, digits, '_'), got a str "
            "(the value is not shown)",
        ),
        ({"url": URL, "tokenEnv": "9LIVES"}, "expected the name of an environment variable"),
        ({"url": URL, "tokenEnv": ""}, "expected the name of an environment variable"),
        ({"url": URL, "tokenEnv": ["T"]}, "(the value is not shown)"),
        ({"command": ["srv"], "tokenEnv": "T"}, "only an HTTP server (`url`) takes a bearer token"),
    ],
)
def test_a_bad_token_env_names_the_key_and_never_the_value(
    extra: dict[str, Any], detail: str
) -> None:
    raw = {"skills": {"mcp": {"servers": [{"name": "ok", "url": URL}, {"name": "t", **extra}]}}}
    with pytest.raises(ConfigError) as err:
        Config.from_mapping(raw, file=Path("skillbook.json"))
    assert err.value.key_path == "skills.mcp.servers[1].tokenEnv"
    assert str(err.value).startswith("skillbook.json: skills.mcp.servers[1].tokenEnv: ")
    assert detail in str(err.value) and TOKEN not in str(err.value)


# --------------------------------------------------------------------------- a real server


class TokenServer(ServeProcess):
    """``python -m skillbook serve --transport http --token-env SERVE_TOKEN``."""

    def __init__(self, tmp: Path) -> None:
        stdio, self.ws = skillbook_server(tmp)
        port = free_port()
        super().__init__(
            [
                *stdio.command,
                "--transport",
                "http",
                "--port",
                str(port),
                "--token-env",
                "SERVE_TOKEN",
            ],
            port=port,
            env={**stdio.env, "SERVE_TOKEN": TOKEN},
            log=tmp / "http-stderr.log",
        )


@pytest.fixture
def server(tmp_path: Path) -> Iterator[TokenServer]:
    process = TokenServer(tmp_path)
    try:
        process.wait_listening()
        yield process
    finally:
        process.stop()


def codes(load: Any) -> list[str]:
    return [d.code for d in load.diagnostics]


@pytest.mark.subprocess
def test_the_token_opens_the_server_for_listing_and_fetching(
    server: TokenServer, tmp_path: Path
) -> None:
    spec = parse_server_specs([{"name": "web", "url": server.url, "tokenEnv": "TEAM_TOKEN"}])[0]
    source = RemoteSkillSource(spec, cache_dir=tmp_path / "cache", env={"TEAM_TOKEN": TOKEN})
    load = source.load()
    assert codes(load) == ["parse.metadata-invalid"]  # a note about alpha's own metadata
    alpha = {s.name: s for s in load.skills}["alpha"]
    # A later fetch opens a new connection, with the token again.
    guide = source.fetch(alpha, "references/guide.md")
    assert isinstance(guide, Path) and guide.read_text() == "# Guide\n"


@pytest.mark.subprocess
def test_without_the_token_nothing_loads_and_the_diagnostic_says_why(
    server: TokenServer, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    bare = RemoteSkillSource(spec_of(url=server.url), cache_dir=cache).load()
    assert bare.skills == () and codes(bare) == ["mcp.unauthorized"]
    assert "set `tokenEnv` on this server" in bare.diagnostics[0].message

    named = spec_of(url=server.url, tokenEnv="TEAM_TOKEN")
    unset = RemoteSkillSource(named, cache_dir=cache, env={"OTHER": TOKEN}).load()
    assert unset.skills == () and codes(unset) == ["mcp.token-missing"]
    assert "$TEAM_TOKEN, which is not set or empty" in unset.diagnostics[0].message

    wrong = RemoteSkillSource(named, cache_dir=cache, env={"TEAM_TOKEN": "not-it"}).load()
    assert wrong.skills == () and codes(wrong) == ["mcp.unauthorized"]
    assert "the bearer token in $TEAM_TOKEN was not accepted" in wrong.diagnostics[0].message
    for load in (bare, unset, wrong):
        assert all(TOKEN not in d.message and "not-it" not in d.message for d in load.diagnostics)


@pytest.mark.subprocess
def test_a_book_reads_the_token_from_its_loaders_environment(
    server: TokenServer, tmp_path: Path
) -> None:
    ws = tmp_path / "client"
    ws.mkdir()
    config = Config.from_mapping(
        {"skills": {"mcp": {"servers": [{"name": "team", "url": server.url, "tokenEnv": "T"}]}}}
    )
    env = {
        "HOME": str(tmp_path / "client-home"),
        "PATH": os.environ.get("PATH", ""),
        "SKILLBOOK_STATE_DIR": str(tmp_path / "client-state"),
        "SKILLBOOK_BUNDLED_SKILLS_DIR": str(tmp_path / "no-bundled"),
        "T": TOKEN,
    }
    book = Loader(ws, config=config, env=env, cwd=ws).load()
    assert sorted(s.name for s in book.skills) == ["alpha", "beta"]
    assert not [d for d in book.diagnostics if d.code.startswith("mcp.")]
    # The loader's environment, not this process's: without T there, it is refused.
    del env["T"]
    refused = Loader(ws, config=config, env=env, cwd=ws).load()
    assert refused.skills == ()
    assert [d.code for d in refused.diagnostics if d.code.startswith("mcp.")] == [
        "mcp.token-missing"
    ]
