"""What ``skillbook serve`` offers as prompts: the same slash commands as the CLI
(``book.commands()``): Claude-bundle commands included, the profile's reserved names."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from factories import write_skill
from mcp import Client

from skillbook.mcp.server import build_server
from skillbook.pipeline.book import Loader


def loader(tmp_path: Path, **kw: object) -> Loader:
    ws = tmp_path / "ws"
    write_skill(ws / "skills" / "alpha")
    # `focus` is a built-in chat command of OpenClaw 2026.4 and not of 2026.9.
    write_skill(ws / "skills" / "focus")
    commands = tmp_path / "state" / "extensions" / "cb" / "commands"
    commands.mkdir(parents=True)
    (commands / "ship.md").write_text(
        "---\ndescription: Ship a release\n---\nShip $ARGUMENTS now\n"
    )
    env = {
        "HOME": str(tmp_path / "home"),
        "SKILLBOOK_STATE_DIR": str(tmp_path / "state"),
        "SKILLBOOK_BUNDLED_SKILLS_DIR": str(tmp_path / "none"),
        "PATH": os.environ.get("PATH", ""),
    }
    return Loader(ws, env=env, cwd=tmp_path, **kw)  # type: ignore[arg-type]


async def served(source: Loader) -> tuple[dict[str, str | None], str]:
    async with Client(build_server(source, watch=False)) as client:
        prompts = {p.name: p.description for p in (await client.list_prompts()).prompts}
        got = await client.get_prompt("ship", {"args": "v2"})
        content = got.messages[0].content
        return prompts, getattr(content, "text", "")


@pytest.mark.parametrize(("compat", "focus"), [(None, "focus_2"), ("openclaw-2026.9", "focus")])
def test_prompts_are_the_cli_commands(tmp_path: Path, compat: str | None, focus: str) -> None:
    source = loader(tmp_path, compat=compat)
    cli = source.load().commands()
    prompts, text = anyio.run(served, source)
    assert list(prompts) == [c.name for c in cli.commands]
    assert set(prompts) == {"alpha", focus, "ship"}
    assert prompts["ship"] == "Ship a release"
    assert text == "Ship v2 now"


def test_entry_frontmatter_is_json_and_refuses_numbers_json_cannot_carry(tmp_path: Path) -> None:
    """The entry's frontmatter is the YAML mapping as JSON carries it (string keys,
    lists); NaN or Infinity anywhere in it leaves the skill without an entry."""
    source = loader(tmp_path)
    skills = tmp_path / "ws" / "skills"
    write_skill(skills / "plain", raw="metadata:\n  3: three\n  list: [1.5, x, null, true]")
    write_skill(skills / "nan", raw="metadata:\n  deep: [1, {ratio: .nan}]")
    write_skill(skills / "inf", raw="metadata:\n  limit: -.inf")
    state = build_server(source, watch=False).catalog.current()
    entries = {e["uri"]: e["frontmatter"] for e in state.entries}
    assert entries["skill://plain/SKILL.md"]["metadata"] == {
        "3": "three",
        "list": [1.5, "x", None, True],
    }
    problems = {s.skill.name: s.problem for s in state.skills}
    for name in ("nan", "inf"):
        assert f"skill://{name}/SKILL.md" not in entries
        assert "a number JSON cannot carry" in (problems[name] or "")


def test_a_slow_start_does_not_walk_every_skill_folder_again(tmp_path: Path) -> None:
    """The change notifier's baseline takes the state built at start-up when it is no
    older than a request may answer from (twice the rescan interval): a start slowed
    by a loaded machine does not walk the folders a second time before answering."""
    from skillbook.mcp._catalog import SkillCatalog
    from skillbook.mcp.server import SkillServer
    from skillbook.runtime.session import SkillSession

    now = [100.0]
    catalog = SkillCatalog(
        SkillSession(loader(tmp_path), watch=False), rescan_interval_s=1.0, clock=lambda: now[0]
    )
    server = SkillServer(catalog, owns_session=True)
    built_at = catalog._scanned_at
    now[0] += 1.5  # the rest of the start-up took longer than one interval

    async def main() -> None:
        async with Client(server) as client:
            names = {p.name for p in (await client.list_prompts()).prompts}
            assert "alpha" in names

    anyio.run(main)
    assert catalog._scanned_at == built_at


def test_integers_too_long_to_print_have_no_json_form() -> None:
    """JSON carries numbers as digits: an integer past Python's digit limit (as a value
    or a key) is refused like NaN, not left for the answer's serialiser to fail on."""
    from skillbook.mcp._catalog import _jsonable

    huge = 1 << 20_000  # YAML's hexadecimal integers have no length limit
    assert _jsonable({"n": [1 << 100, 2.5, None]}) == {"n": [1 << 100, 2.5, None]}
    for bad in ({"n": huge}, {huge: "x"}, [{"deep": [float("nan")]}]):
        with pytest.raises(ValueError):
            _jsonable(bad)
