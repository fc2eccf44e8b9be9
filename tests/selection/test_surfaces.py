"""find_skills where the model meets skills: ``skillbook serve`` (MCP), the framework
adapters' shared helpers, and ``skillbook eval trigger`` run as a command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from fake_openai_server import Call, FakeOpenAIServer
from mcp import Client
from selection_support import env_for, make_workspace

from skillbook.cli.app import cli
from skillbook.config.file import Config
from skillbook.integrations._common import build_instructions, runtime_tools
from skillbook.mcp.server import build_server
from skillbook.pipeline.book import Loader


def _loader(tmp: Path, mode: str) -> Loader:
    ws = make_workspace(tmp)
    cfg = Config.from_mapping({"skills": {"selection": {"mode": mode, "indexDir": str(tmp / "i")}}})
    return Loader(ws, config=cfg, env=env_for(tmp))


@pytest.mark.parametrize("mode", ["off", "always"])
def test_serve_offers_find_skills_only_with_selection(tmp_path: Path, mode: str) -> None:
    server = build_server(_loader(tmp_path, mode), watch=False)
    out: dict[str, Any] = {}

    async def main() -> None:
        async with Client(server) as client:
            out["tools"] = [t.name for t in (await client.list_tools()).tools]
            out["instructions"] = client.instructions
            if mode == "always":
                found = await client.call_tool("find_skills", {"query": "split a PDF"})
                out["text"] = found.content[0].text  # type: ignore[union-attr]
                bad = await client.call_tool("find_skills", {"query": ""})
                out["bad"] = bad.is_error

    anyio.run(main)
    if mode == "off":
        assert out["tools"] == ["read_skill"]
        assert "<name>weather</name>" in out["instructions"]
        return
    assert out["tools"] == ["read_skill", "find_skills"]
    assert (
        "find_skills" in out["instructions"] and "<name>weather</name>" not in out["instructions"]
    )
    assert "<name>pdf-merge</name>" in out["text"] and out["bad"]


def test_adapter_helpers_use_the_stable_section_and_offer_find_skills(tmp_path: Path) -> None:
    book = _loader(tmp_path, "always").load()
    tools = runtime_tools(book, env={})
    assert [t.name for t in tools] == ["read", "exec", "find_skills"]
    text = build_instructions(book, "Base.")
    assert text.startswith("Base.\n## Skills (mandatory)") and "find_skills" in text
    assert "<name>weather</name>" not in text  # no per-request skill in the system prompt
    off = _loader(tmp_path / "off", "off").load()
    assert [t.name for t in runtime_tools(off, env={})] == ["read", "exec"]
    assert build_instructions(off, "Base.") == "Base.\n" + off.system_prompt_section()


def test_eval_trigger_command(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    pdf = ws / "skills" / "pdf-merge" / "SKILL.md"
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        '{"id": "p", "query": "merge two PDFs", "expected": ["pdf-merge"]}\n'
        '{"id": "n", "query": "hello there", "expected": []}\n'
    )

    def reply(body: dict[str, Any]) -> Any:
        last = body["messages"][-1]
        if last["role"] == "tool":
            return "done"
        if "merge two PDFs" in last["content"]:
            return [Call("read", {"path": str(pdf)})]
        return "Hi!"

    with FakeOpenAIServer([reply] * 8) as server:
        env = {**env_for(tmp_path), "OPENAI_API_KEY": "k", "SKILLBOOK_BASE_URL": server.base_url}
        args = [
            "-w",
            str(ws),
            "eval",
            "trigger",
            "--queries",
            str(queries),
            "-m",
            "m",
            "--provider",
            "openai",
        ]
        refused = CliRunner().invoke(cli, args, env=env, input="")
        assert refused.exit_code == 2 and "--yes" in refused.output
        assert "4 agent turns" in refused.output  # the estimate comes first
        result = CliRunner().invoke(cli, [*args, "--yes", "--json", "-j", "2"], env=env)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output[result.output.index("{") :])
    assert report["modes"]["off"] == {
        "queries": 2,
        "triggerRate": 1.0,
        "falseTriggerRate": 0.0,
        "errors": 0,
    }
    assert report["modes"]["on"]["triggerRate"] == 1.0
    assert {r["id"] for r in report["results"]} == {"p", "n"}
