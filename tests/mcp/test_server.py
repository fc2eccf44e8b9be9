"""``skillbook serve`` over stdio, checked with the official ``mcp`` SDK client.

The Skills extension (SEP-2640, protocol 2026-07-28; checklist §9 "Server"): the
capability, ``skills/list`` entries with digests recomputed from the bytes,
``skills/get``, ``resources/read`` of text and binary files, ``resources/directory/read``,
gates and the agent filter, escapes refused with ``-32602``, the per-skill limits; and
the fallbacks for hosts without the extension: the ``read_skill`` tool, one prompt per
slash command (§6.5 rewrite), the catalog as ``instructions``; list-changed
notifications after a new skill folder appears.

Two tests start ``python -m skillbook serve`` as a subprocess (a 2026-07-28 ``mcp.Client`` and a
handshake-era ``ClientSession``); the rest talk to the same server in-process.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types as types
import pytest
from factories import write_skill, write_skills
from mcp import Client, ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from pydantic import BaseModel, ConfigDict

from skillbook.mcp import _skillformat as fmt
from skillbook.mcp.server import build_server
from skillbook.pipeline.book import Loader

EXT = "io.modelcontextprotocol/skills"
WAIT_S = 15.0
MISSING_BIN = "skillbook-test-no-such-binary-7f3a"
#: ``python -m skillbook`` (the arguments before the global options).
LAUNCH = ("-m", "skillbook")


# --------------------------------------------------------------------------- requests


class Raw(BaseModel):
    """Any result, kept as the wire dict (``model_dump()`` gives it back unchanged)."""

    model_config = ConfigDict(extra="allow")


async def send(session: ClientSession, request: Any) -> dict[str, Any]:
    result = await session.send_request(request, Raw)
    return result.model_dump()


class ListSkills(types.Request[types.PaginatedRequestParams | None, Literal["skills/list"]]):
    method: Literal["skills/list"] = "skills/list"
    params: types.PaginatedRequestParams | None = None


class UriParams(types.PaginatedRequestParams):
    uri: str


class GetSkill(types.Request[UriParams, Literal["skills/get"]]):
    method: Literal["skills/get"] = "skills/get"
    params: UriParams


class ReadDirectory(types.Request[UriParams, Literal["resources/directory/read"]]):
    method: Literal["resources/directory/read"] = "resources/directory/read"
    params: UriParams


async def list_skills(session: ClientSession, cursor: str | None = None) -> dict[str, Any]:
    params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
    return await send(session, ListSkills(params=params))


async def all_skills(session: ClientSession) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        page = await list_skills(session, cursor)
        entries += page["skills"]
        cursor = page.get("nextCursor")
        if cursor is None:
            return entries


async def get_skill(session: ClientSession, uri: str) -> dict[str, Any]:
    return await send(session, GetSkill(params=UriParams(uri=uri)))


async def read_dir(session: ClientSession, uri: str, cursor: str | None = None) -> dict[str, Any]:
    return await send(session, ReadDirectory(params=UriParams(uri=uri, cursor=cursor)))


async def error_of(call: Awaitable[object]) -> MCPError:
    with pytest.raises(MCPError) as info:
        await call
    return info.value


def raw_bytes(contents: types.TextResourceContents | types.BlobResourceContents) -> bytes:
    if isinstance(contents, types.BlobResourceContents):
        return base64.b64decode(contents.blob)
    return contents.text.encode("utf-8")


# --------------------------------------------------------------------------- workspace


class Workspace:
    """A workspace with an isolated home, no bundled skills and a config file."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.ws = tmp / "ws"
        self.skills = self.ws / "skills"
        self.home = tmp / "home"
        self.bundled = tmp / "bundled"
        for d in (self.skills, self.home, self.bundled):
            d.mkdir(parents=True)
        self.config = tmp / "skillbook.json"
        self.config.write_text(
            json.dumps({"agents": {"list": [{"id": "writer", "skills": ["alpha", "gamma"]}]}})
        )
        alpha = write_skill(
            self.skills / "alpha",
            description="The alpha skill",
            body="# alpha\nSee references/guide.md\r\n",
            license="MIT",
            # YAML 1.1 scalars (`yes`, `010`) on purpose: the served frontmatter keeps them.
            raw='metadata: {"version": "1.0", "nested": {"b": 1, "a": [yes, 010]}}',
            files={
                "references/guide.md": "# Guide\n",
                "assets/logo.png": b"\x89PNG\r\n\x1a\n\xff\xfe\x00",
            },
        )
        (alpha / ".env").write_text("TOKEN=secret")
        (alpha / "node_modules" / "x").mkdir(parents=True)
        (alpha / "node_modules" / "x" / "index.js").write_text("leak")
        outside = tmp / "outside"
        outside.mkdir()
        (outside / "secret.txt").write_text("outside secret")
        if os.name != "nt":
            (alpha / "leak.txt").symlink_to(outside / "secret.txt")
        write_skill(self.skills / "beta", body="# beta\nBeta body\n")
        write_skill(
            self.skills / "gated", metadata={"openclaw": {"requires": {"bins": [MISSING_BIN]}}}
        )

    def env(self) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "SKILLBOOK_BUNDLED_SKILLS_DIR": str(self.bundled),
            "SKILLBOOK_STATE_DIR": str(self.tmp / "state"),
            "PATH": os.environ.get("PATH", ""),
            "SYSTEMROOT": os.environ.get("SYSTEMROOT", ""),
        }

    def loader(self, **kw: Any) -> Loader:
        return Loader(self.ws, env=self.env(), cwd=self.tmp, **kw)

    def params(self, *args: str) -> StdioServerParameters:
        command = [sys.executable, *LAUNCH, "--workspace", str(self.ws), *args, "serve"]
        return StdioServerParameters(
            command=command[0], args=command[1:], env=self.env(), cwd=str(self.tmp)
        )


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path)


def run(fn: Callable[[], Awaitable[None]]) -> None:
    anyio.run(fn)


async def wait_for(predicate: Callable[[], bool], timeout: float = WAIT_S) -> None:
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.05)


async def changes_after(client: Client, change: Callable[[], object]) -> set[str]:
    """The list-changed events a ``subscriptions/listen`` stream delivers after ``change``."""
    seen: set[str] = set()
    async with client.listen(resources_list_changed=True, prompts_list_changed=True) as sub:

        async def collect() -> None:
            async for event in sub:
                seen.add(type(event).__name__)

        async with anyio.create_task_group() as tg:
            tg.start_soon(collect)
            change()
            await wait_for(lambda: len(seen) >= 2)
            tg.cancel_scope.cancel()
    return seen


# --------------------------------------------------------------------------- checks


async def check_extension(client: Client, space: Workspace) -> None:
    """Capability, list/get entries, digests from the bytes, reads, directories, gates."""
    caps = client.server_capabilities
    assert client.protocol_version == fmt.PROTOCOL_REVISION
    assert caps.extensions is not None and caps.extensions[EXT] == {"directoryRead": True}
    assert caps.resources is not None  # the extension requires the resources capability

    page = await list_skills(client.session)
    assert page["resultType"] == "complete" and page["cacheScope"] == "private"
    assert isinstance(page["ttlMs"], int) and page["ttlMs"] >= 0
    entries = {e["uri"]: e for e in await all_skills(client.session)}
    assert "skill://gated/SKILL.md" not in entries  # missing bin: gated out
    listed = {r.uri for r in (await client.list_resources()).resources}
    assert "skill://index.json" not in listed  # the superseded pre-v1 index is not served
    alpha = entries["skill://alpha/SKILL.md"]
    assert alpha["frontmatter"] == {
        "name": "alpha",
        "description": "The alpha skill",
        "license": "MIT",
        "metadata": {"version": "1.0", "nested": {"b": 1, "a": ["yes", 10]}},
    }
    assert list(alpha["frontmatter"]["metadata"]["nested"]) == ["b", "a"]
    uris = [r["uri"] for r in alpha["resources"]]
    assert uris == [
        "skill://alpha/SKILL.md",
        "skill://alpha/assets/logo.png",
        "skill://alpha/references/guide.md",
    ]
    folder = space.skills / "alpha"
    for item in alpha["resources"]:
        result = await client.read_resource(item["uri"], cache_mode="bypass")
        [contents] = result.contents
        assert contents.uri == item["uri"]
        data = raw_bytes(contents)
        disk = (folder / item["uri"].removeprefix("skill://alpha/")).read_bytes()
        assert data == disk
        assert item["size"] == len(data)
        assert item["digest"] == "sha256:" + hashlib.sha256(data).hexdigest()
    logo = await client.read_resource("skill://alpha/assets/logo.png")
    assert isinstance(logo.contents[0], types.BlobResourceContents)
    assert logo.contents[0].mime_type == "image/png"
    md = await client.read_resource("skill://alpha/SKILL.md")
    assert isinstance(md.contents[0], types.TextResourceContents)
    assert md.contents[0].mime_type == "text/markdown" and "\r\n" in md.contents[0].text

    got = await get_skill(client.session, "skill://alpha/SKILL.md")
    assert got["skill"] == alpha and got["resultType"] == "complete" and "ttlMs" in got
    assert "nextCursor" not in got
    for bad in ("skill://gated/SKILL.md", "skill://nope/SKILL.md", "skill://alpha/assets"):
        assert (await error_of(get_skill(client.session, bad))).code == types.INVALID_PARAMS

    root = await read_dir(client.session, "skill://alpha")
    assert root["resources"] == [
        {"uri": "skill://alpha/SKILL.md", "name": "SKILL.md", "mimeType": "text/markdown"},
        {"uri": "skill://alpha/assets", "name": "assets", "mimeType": "inode/directory"},
        {"uri": "skill://alpha/references", "name": "references", "mimeType": "inode/directory"},
    ]
    sub = await read_dir(client.session, "skill://alpha/assets")
    assert [r["uri"] for r in sub["resources"]] == ["skill://alpha/assets/logo.png"]
    for bad in ("skill://alpha/SKILL.md", "skill://alpha/node_modules", "skill://gated"):
        assert (await error_of(read_dir(client.session, bad))).code == types.INVALID_PARAMS


async def check_escapes(client: Client) -> None:
    """``../``, symlink escapes, hidden files and gated skills: -32602, never the bytes."""
    for uri in (
        "skill://alpha/../gated/SKILL.md",
        "skill://alpha/references/../../beta/SKILL.md",
        "skill://alpha/leak.txt",
        "skill://alpha/.env",
        "skill://alpha/node_modules/x/index.js",
        "skill://gated/SKILL.md",
        "skill://alpha",
    ):
        err = await error_of(client.read_resource(uri, cache_mode="bypass"))
        assert err.code == types.INVALID_PARAMS, uri
    listed = {r.uri for r in (await client.list_resources()).resources}
    assert not any("leak" in u or ".env" in u or "gated" in u for u in listed)
    result = await client.call_tool("read_skill", {"name": "alpha", "path": "../beta/SKILL.md"})
    assert result.is_error and "Refused" in result.content[0].text  # type: ignore[union-attr]
    result = await client.call_tool("read_skill", {"name": "alpha", "path": "leak.txt"})
    assert result.is_error and "outside" in result.content[0].text  # type: ignore[union-attr]


async def check_fallbacks(client: Client, space: Workspace, *, skills: set[str]) -> None:
    """Tool, prompts and instructions for hosts without the extension."""
    assert client.instructions is not None
    assert client.instructions.startswith("## Skills (mandatory)")
    assert "`read_skill`" in client.instructions
    for name in skills:
        assert f"<name>{name}</name>" in client.instructions
    assert "<name>gated</name>" not in client.instructions
    [tool] = (await client.list_tools()).tools
    assert tool.name == "read_skill" and tool.input_schema["required"] == ["name"]
    result = await client.call_tool("read_skill", {"name": "alpha"})
    expected = (space.skills / "alpha" / "SKILL.md").read_bytes().decode()
    assert not result.is_error and result.content[0].text == expected  # type: ignore[union-attr]
    guide = await client.call_tool("read_skill", {"name": "alpha", "path": "references/guide.md"})
    assert guide.content[0].text == "# Guide\n"  # type: ignore[union-attr]
    absolute = str(space.skills / "alpha" / "references" / "guide.md")
    same = await client.call_tool("read_skill", {"name": "alpha", "path": absolute})
    assert same.content[0].text == "# Guide\n"  # type: ignore[union-attr]
    binary = await client.call_tool("read_skill", {"name": "alpha", "path": "assets/logo.png"})
    assert binary.is_error and "binary" in binary.content[0].text  # type: ignore[union-attr]
    gated = await client.call_tool("read_skill", {"name": "gated"})
    assert gated.is_error

    prompts = {p.name: p for p in (await client.list_prompts()).prompts}
    assert set(prompts) == skills
    assert prompts["alpha"].description == "The alpha skill"
    assert [a.name for a in prompts["alpha"].arguments or []] == ["args"]
    rendered = await client.get_prompt("alpha", {"args": "  tidy the repo \n"})
    [message] = rendered.messages
    assert message.role == "user"
    assert message.content.text == (  # type: ignore[union-attr]
        'Use the "alpha" skill for this request.\n\nUser input:\ntidy the repo'
    )
    bare = await client.get_prompt("alpha")
    assert bare.messages[0].content.text == 'Use the "alpha" skill for this request.'  # type: ignore[union-attr]
    assert (await error_of(client.get_prompt("gated"))).code == types.INVALID_PARAMS


# --------------------------------------------------------------------------- stdio


@pytest.mark.e2e
@pytest.mark.subprocess
def test_stdio_serve_with_skills_extension_and_list_changed(space: Workspace) -> None:
    """End to end over stdio on 2026-07-28, with ``--agent writer`` (allowlist alpha, gamma)."""
    log = space.tmp / "server-stderr.log"

    async def main() -> None:
        with log.open("w") as errlog:
            params = space.params("--config", str(space.config), "--agent", "writer")
            async with Client(stdio_client(params, errlog=errlog), mode="auto") as client:
                entries = await all_skills(client.session)
                assert [e["uri"] for e in entries] == ["skill://alpha/SKILL.md"]  # agent filter
                await check_extension(client, space)
                await check_escapes(client)
                await check_fallbacks(client, space, skills={"alpha"})
                seen = await changes_after(client, lambda: write_skill(space.skills / "gamma"))
                assert seen == {"ResourcesListChanged", "PromptsListChanged"}
                entries = await all_skills(client.session)
                assert [e["uri"] for e in entries] == [
                    "skill://alpha/SKILL.md",
                    "skill://gamma/SKILL.md",
                ]

    try:
        run(main)
    except BaseException:
        print(log.read_text() if log.exists() else "(no server log)")
        raise


@pytest.mark.e2e
@pytest.mark.subprocess
def test_stdio_handshake_era_client_gets_fallbacks_only(space: Workspace) -> None:
    """An older (initialize-era) client: no extension, ``skills/*`` unknown; resources,
    prompts, the tool and instructions work, and list-changed notifications arrive."""
    seen: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(
            message, types.ResourceListChangedNotification | types.PromptListChangedNotification
        ):
            seen.append(message.method)

    async def main() -> None:
        log = (space.tmp / "legacy-stderr.log").open("w")
        try:
            async with (
                stdio_client(space.params(), errlog=log) as (read, write),
                ClientSession(read, write, message_handler=on_message) as session,
            ):
                init = await session.initialize()
                assert init.protocol_version != fmt.PROTOCOL_REVISION
                assert not (init.capabilities.extensions or {}).get(EXT)
                assert init.capabilities.resources is not None
                assert init.capabilities.resources.list_changed is True
                assert (
                    init.capabilities.prompts is not None and init.capabilities.prompts.list_changed
                )
                assert init.instructions is not None and "<name>beta</name>" in init.instructions
                err = await error_of(list_skills(session))
                assert err.code == types.METHOD_NOT_FOUND
                listed = {r.uri for r in (await session.list_resources()).resources}
                assert {"skill://alpha/SKILL.md", "skill://beta/SKILL.md"} <= listed
                logo = await session.read_resource("skill://alpha/assets/logo.png")
                assert raw_bytes(logo.contents[0]) == b"\x89PNG\r\n\x1a\n\xff\xfe\x00"
                prompts = {p.name for p in (await session.list_prompts()).prompts}
                assert prompts == {"alpha", "beta"}
                tool = await session.call_tool("read_skill", {"name": "beta"})
                assert "Beta body" in tool.content[0].text  # type: ignore[union-attr]
                write_skill(space.skills / "gamma")
                await wait_for(lambda: len(set(seen)) >= 2)
                assert set(seen) == {
                    "notifications/resources/list_changed",
                    "notifications/prompts/list_changed",
                }
                prompts = {p.name for p in (await session.list_prompts()).prompts}
                assert prompts == {"alpha", "beta", "gamma"}
        finally:
            log.close()

    run(main)


# --------------------------------------------------------------------------- in-process


def test_in_process_extension_fallbacks_and_escapes(space: Workspace) -> None:
    server = build_server(space.loader(), watch=False)

    async def main() -> None:
        async with Client(server) as client:
            entries = await all_skills(client.session)
            assert [e["uri"] for e in entries] == [
                "skill://alpha/SKILL.md",
                "skill://beta/SKILL.md",
            ]
            await check_extension(client, space)
            await check_escapes(client)
            await check_fallbacks(client, space, skills={"alpha", "beta"})
            section = space.loader().load().system_prompt_section(read_tool="read_skill")
            assert client.instructions == section

    run(main)


def test_agent_filter_applies_to_everything_served(space: Workspace) -> None:
    from skillbook.config.file import load_config

    server = build_server(
        space.loader(config=load_config(space.config), agent="writer"), watch=False
    )

    async def main() -> None:
        async with Client(server) as client:
            assert [e["uri"] for e in await all_skills(client.session)] == [
                "skill://alpha/SKILL.md"
            ]
            assert {p.name for p in (await client.list_prompts()).prompts} == {"alpha"}
            uris = {r.uri for r in (await client.list_resources()).resources}
            assert not any(u.startswith("skill://beta/") for u in uris)
            err = await error_of(client.read_resource("skill://beta/SKILL.md"))
            assert err.code == types.INVALID_PARAMS
            assert (await client.call_tool("read_skill", {"name": "beta"})).is_error
            assert "<name>beta</name>" not in (client.instructions or "")

    run(main)


def test_pagination_and_invalid_cursor(space: Workspace) -> None:
    write_skills(space.skills, ["delta", "epsilon", "zeta"])
    server = build_server(space.loader(), watch=False, page_size=2)

    async def main() -> None:
        async with Client(server) as client:
            first = await list_skills(client.session)
            assert len(first["skills"]) == 2 and first["nextCursor"]
            entries = await all_skills(client.session)
            assert len(entries) == 5 and len({e["uri"] for e in entries}) == 5
            for cursor in ("not-base64!", base64.urlsafe_b64encode(b"99").decode()):
                err = await error_of(list_skills(client.session, cursor))
                assert err.code == types.INVALID_PARAMS

    run(main)


def test_a_cursor_on_an_unpaged_list_is_invalid_params(space: Workspace) -> None:
    """resources/list, prompts/list and tools/list come in one page and hand out no
    cursor: a cursor sent to them is an error, never silently the first page."""
    server = build_server(space.loader(), watch=False)

    async def main() -> None:
        async with Client(server) as client:
            bogus = types.PaginatedRequestParams(cursor="bogus")
            for request in (
                types.ListResourcesRequest(params=bogus),
                types.ListPromptsRequest(params=bogus),
                types.ListToolsRequest(params=bogus),
            ):
                err = await error_of(send(client.session, request))
                assert err.code == types.INVALID_PARAMS and "Invalid cursor" in err.message
            assert (await client.list_resources()).resources

    run(main)


def test_limits_over_limit_skill_is_not_listed_but_at_limit_is(space: Workspace) -> None:
    """§1.4 limits: 512 files servable; 513 → not in skills/list, skills/get -32602."""
    at = write_skill(space.skills / "at-limit")
    over = write_skill(space.skills / "over-limit")
    for i in range(fmt.MAX_RESOURCES_PER_SKILL - 1):
        (at / f"f{i:03}.txt").write_text("x")
        (over / f"f{i:03}.txt").write_text("x")
    (over / "one-more.txt").write_text("x")
    server = build_server(space.loader(), watch=False, page_size=1000)

    async def main() -> None:
        async with Client(server) as client:
            entries = {e["uri"]: e for e in await all_skills(client.session)}
            assert len(entries["skill://at-limit/SKILL.md"]["resources"]) == 512
            assert "skill://over-limit/SKILL.md" not in entries
            err = await error_of(get_skill(client.session, "skill://over-limit/SKILL.md"))
            assert err.code == types.INVALID_PARAMS and "limits" in err.message
            md = await client.read_resource("skill://over-limit/SKILL.md")
            assert "over-limit" in md.contents[0].text  # type: ignore[union-attr]
            err = await error_of(client.read_resource("skill://over-limit/f000.txt"))
            assert err.code == types.INVALID_PARAMS
            tool = await client.call_tool("read_skill", {"name": "over-limit", "path": "f000.txt"})
            assert tool.is_error and "limits" in tool.content[0].text  # type: ignore[union-attr]

    run(main)


def test_skill_without_a_valid_entry_is_served_as_plain_resources(space: Workspace) -> None:
    """A name outside the Agent Skills rules has no entry (the URI's last segment must
    be a valid name) but keeps its resources, prompt and tool access."""
    write_skill(space.skills / "odd", "Odd Skill")
    server = build_server(space.loader(), watch=False)

    async def main() -> None:
        async with Client(server) as client:
            uris = [e["uri"] for e in await all_skills(client.session)]
            assert "skill://Odd%20Skill/SKILL.md" not in uris
            read = await client.read_resource("skill://Odd%20Skill/SKILL.md")
            assert "name: Odd Skill" in read.contents[0].text  # type: ignore[union-attr]
            assert "odd_skill" in {p.name for p in (await client.list_prompts()).prompts}
            tool = await client.call_tool("read_skill", {"name": "Odd Skill"})
            assert not tool.is_error
        diags = server.catalog.current().diagnostics
        assert any(d.code == "mcp.not-served" and d.skill == "Odd Skill" for d in diags)

    run(main)


def test_file_changes_are_picked_up_and_manifest_matches_bytes(space: Workspace) -> None:
    """Supporting-file edits (which the watcher ignores) show up at the next rescan,
    with digests always computed from the bytes served."""
    server = build_server(space.loader(), watch=False, rescan_interval_s=0)
    guide = space.skills / "alpha" / "references" / "guide.md"

    async def main() -> None:
        async with Client(server, cache=None) as client:
            before = await get_skill(client.session, "skill://alpha/SKILL.md")
            guide.write_text("# Guide, second edition\n")
            after = await get_skill(client.session, "skill://alpha/SKILL.md")
            assert before != after
            item = next(r for r in after["skill"]["resources"] if r["uri"].endswith("guide.md"))
            read = await client.read_resource(item["uri"])
            data = raw_bytes(read.contents[0])
            assert data == guide.read_bytes() and item["digest"] == fmt.digest_of(data)

    run(main)


def test_in_process_notification_after_new_skill_folder(space: Workspace) -> None:
    """The watcher (``skillbook.runtime.watch``) drives list-changed notifications."""
    server = build_server(space.loader(), watch=True)

    async def main() -> None:
        async with Client(server) as client:
            seen = await changes_after(client, lambda: write_skill(space.skills / "gamma"))
            assert seen == {"ResourcesListChanged", "PromptsListChanged"}
            uris = [e["uri"] for e in await all_skills(client.session)]
            assert "skill://gamma/SKILL.md" in uris

    run(main)
