"""The selector over real skill files, the selection plan in the agent, find_skills,
the CLI (select, eval select) and ``eval trigger`` against a scripted model server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fake_openai_server import Call, FakeOpenAIServer
from selection_support import env_for, make_workspace, write_skill

from skillbook.cli.app import cli
from skillbook.config.file import Config
from skillbook.pipeline.book import Loader
from skillbook.runtime.agent import Agent
from skillbook.runtime.find_skills import find_tool
from skillbook.runtime.providers.openai_chat import OpenAIChatModel
from skillbook.runtime.trigger_eval import run_trigger_eval
from skillbook.selection.embedders import Embedder, MultilingualEmbedder, WordLlamaEmbedder
from skillbook.selection.evaluate import parse_queries
from skillbook.selection.plan import SelectionPlan, plan_for
from skillbook.selection.selector import Selector, SelectorSettings


@pytest.fixture(scope="module")
def wordllama() -> WordLlamaEmbedder:
    return WordLlamaEmbedder()


@pytest.fixture(scope="module")
def multilingual() -> MultilingualEmbedder:
    return MultilingualEmbedder()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path)


def _config(tmp: Path, **selection: Any) -> Config:
    return Config.from_mapping(
        {"skills": {"selection": {"indexDir": str(tmp / "index"), **selection}}}
    )


def _book(ws: Path, tmp: Path, **selection: Any) -> Any:
    return Loader(ws, config=_config(tmp, **selection), env=env_for(tmp)).load()


def test_selector_ranks_abstains_and_updates(
    workspace: Path,
    tmp_path: Path,
    wordllama: WordLlamaEmbedder,
    multilingual: MultilingualEmbedder,
) -> None:
    book = _book(workspace, tmp_path)
    emb: dict[str, Embedder] = {"wordllama": wordllama, "multilingual": multilingual}
    sel = Selector(book.eligible, embedders=emb, index_dir=tmp_path / "idx")
    assert sel.select("combine these two PDF files into one").names()[0] == "pdf-merge"
    assert sel.select("quel temps fera-t-il demain à Lyon ?").ranked[0].name == "weather"
    assert sel.select("hi, how are you?").selected == ()
    assert sel.select("what is 17 times 23?").selected == ()
    parts = sel.select("trello cards").ranked[0].parts
    assert {"bm25", "bm25Body", "wordllama", "multilingual"} <= set(parts)
    # recent turns count: a follow-up with no skill words still finds the topic
    follow = sel.select("and for tomorrow?", recent=["weather forecast in Paris"])
    assert follow.ranked[0].name == "weather"
    write_skill(
        workspace / "skills", "trello", "Manage Trello boards and cards.", body="Moves cards."
    )
    report = sel.update(_book(workspace, tmp_path).eligible)
    assert report.vectors_computed == 2 and report.vectors_reused == 2 * (len(book.eligible) - 1)
    bm25_only = Selector(book.eligible, settings=SelectorSettings(backend="bm25"), embedders=emb)
    assert bm25_only.channels == ("bm25", "bm25Body")


def test_trigger_hints_boost_and_veto(tmp_path: Path, wordllama: WordLlamaEmbedder) -> None:
    ws = tmp_path / "ws"
    meta = 'metadata: {"openclaw": {"triggers": {"any": ["standup"], "none": ["refund"]}}}\n'
    write_skill(ws / "skills", "daily-notes", "Write meeting notes.", extra=meta)
    write_skill(ws / "skills", "payments", "Handle refunds and payments.")
    book = _book(ws, tmp_path)
    sel = Selector(book.eligible, settings=SelectorSettings(backend="bm25"))
    boosted = sel.select("prepare the standup").ranked[0]
    assert boosted.name == "daily-notes" and boosted.parts["trigger"] > 0
    assert boosted.triggers == ("any:standup",)
    vetoed = sel.select("notes about the refund")
    assert vetoed.vetoed == ("daily-notes",) and "daily-notes" not in [
        c.name for c in vetoed.ranked
    ]


def test_plan_keeps_system_prompt_stable_and_reports_unlisted(
    workspace: Path, tmp_path: Path
) -> None:
    write_skill(
        workspace / "skills",
        "house-rules",
        "Always-on house rules.",
        extra='metadata: {"openclaw": {"always": true}}\n',
    )
    book = _book(workspace, tmp_path, mode="always", pinned=["trello", "nope"])
    plan = plan_for(book, env={})
    assert isinstance(plan, SelectionPlan)
    section = plan.system_section()
    assert "<name>house-rules</name>" in section and "<name>trello</name>" in section
    assert "<name>weather</name>" not in section and "find_skills" in section
    assert [d.code for d in plan.diagnostics] == ["selection.pinned-unknown"]
    block = plan.turn_block("merge two PDF files into one")
    assert "<available_skills>" in block.text and "<name>pdf-merge</name>" in block.text
    assert "<name>trello</name>" not in block.text  # already standing in the system prompt
    assert "pdf-merge" not in block.unlisted and "weather" in block.unlisted
    assert block.diagnostics[0].code == "selection.unlisted"
    assert block.apply("merge").endswith("\n\nmerge")
    assert plan.turn_block("thanks, bye!").text == ""  # nothing fits: no block at all
    assert plan.system_section() == section  # the same bytes on every turn


def test_off_and_auto_modes(workspace: Path, tmp_path: Path) -> None:
    off = _book(workspace, tmp_path)
    agent = Agent(off, None)
    assert agent.selection is None
    assert agent.system_prompt().endswith(off.system_prompt_section())
    assert [t.name for t in agent.tools] == ["read", "exec"]
    auto = _book(workspace, tmp_path, mode="auto")  # the catalog fits: auto stays off
    assert plan_for(auto) is None
    cfg = Config.from_mapping(
        {
            "skills": {
                "limits": {"maxSkillsInPrompt": 2},
                "selection": {"mode": "auto", "indexDir": str(tmp_path / "i")},
            }
        }
    )
    over = Loader(workspace, config=cfg, env=env_for(tmp_path)).load()
    assert plan_for(over) is not None


def test_find_skills_tool(workspace: Path, tmp_path: Path) -> None:
    plan = plan_for(_book(workspace, tmp_path, mode="always"), env={})
    assert plan is not None
    tool = find_tool(plan)
    found = tool.run({"query": "lamp brightness", "limit": 2})
    assert not found.is_error and found.text.startswith("The following skills")
    assert "<name>hue-lights</name>" in found.text and found.text.count("<skill>") == 2
    assert tool.run({"query": ""}).is_error
    assert tool.run({"query": "x", "limit": 99}).is_error
    assert tool.run({"query": "x", "extra": 1}).is_error


def test_agent_turn_carries_the_block_and_offers_find_skills(
    workspace: Path, tmp_path: Path
) -> None:
    book = _book(workspace, tmp_path, mode="always")
    with FakeOpenAIServer(["Sure.", "Done again."]) as server:
        agent = Agent(book, OpenAIChatModel("m", base_url=server.base_url, api_key="k"))
        turn = asyncio.run(agent.run_turn((), "combine two PDF files"))
        assert agent.last_selection is not None
        assert agent.last_selection.listed[0] == "pdf-merge"
        assert "weather" in agent.last_selection.unlisted
        assert agent.last_selection.diagnostics[0].code == "selection.unlisted"
        asyncio.run(agent.run_turn(turn.messages, "thanks!"))
    first, second = server.requests
    assert [t["function"]["name"] for t in first["tools"]] == ["read", "exec", "find_skills"]
    assert first["messages"][0] == second["messages"][0]  # the system prompt did not change
    user = first["messages"][1]["content"]
    assert "<name>pdf-merge</name>" in user and user.endswith("combine two PDF files")
    assert second["messages"][1]["content"] == user  # history kept byte for byte
    assert second["messages"][-1]["content"] == "thanks!"


def test_eval_trigger_end_to_end(workspace: Path, tmp_path: Path) -> None:
    book = _book(workspace, tmp_path)
    pdf = book.get("pdf-merge").file_path
    queries = parse_queries(
        [
            '{"id": "p", "query": "merge two PDFs", "expected": ["pdf-merge"]}',
            '{"id": "n", "query": "hello there", "expected": []}',
        ]
    )

    def reply(body: dict[str, Any]) -> Any:
        last = body["messages"][-1]
        if last["role"] == "tool":
            return "ok"
        text = json.dumps(body["messages"])
        if "merge two PDFs" in last["content"] and "pdf-merge" in text:
            return [Call("read", {"path": str(pdf)})]
        return "Hello!"

    with FakeOpenAIServer([reply] * 8) as server:
        model = OpenAIChatModel("m", base_url=server.base_url, api_key="k")
        report = asyncio.run(run_trigger_eval(book, model, queries, concurrency=2))
    assert not server.errors
    assert report.rates("off") == {
        "queries": 2,
        "triggerRate": 1.0,
        "falseTriggerRate": 0.0,
        "errors": 0,
    }
    assert report.rates("on")["triggerRate"] == 1.0
    on_tools = [
        r
        for r in server.requests
        if any(t["function"]["name"] == "find_skills" for t in r["tools"])
    ]
    assert len(on_tools) == 3 and all(
        {t["function"]["name"] for t in r["tools"]} == {"read", "find_skills"} for r in on_tools
    )


def _run(args: list[str], tmp: Path) -> Any:
    return CliRunner().invoke(cli, args, env=env_for(tmp), catch_exceptions=False)


def test_cli_select_and_eval_select(workspace: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"skills": {"selection": {"indexDir": str(tmp_path / "i")}}}))
    out = _run(
        ["-w", str(workspace), "-c", str(cfg), "select", "merge PDF files", "--json"], tmp_path
    )
    data = json.loads(out.output)
    assert out.exit_code == 0 and data["selected"][0] == "pdf-merge"
    assert data["channels"] == ["bm25", "bm25Body", "wordllama", "multilingual"]
    text = _run(
        ["-w", str(workspace), "-c", str(cfg), "select", "hello", "--backend", "bm25"], tmp_path
    )
    assert "Selected: none" in text.output
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(
        '{"id": "a", "query": "merge PDF files", "expected": ["pdf-merge"], "kind": "keyword"}\n'
        '{"id": "b", "query": "good morning!", "expected": [], "kind": "none"}\n'
        '{"id": "c", "query": "lamp", "expected": ["no-such-skill"]}\n'
    )
    res = _run(
        ["-w", str(workspace), "-c", str(cfg), "eval", "select", "--queries", str(qfile), "--json"],
        tmp_path,
    )
    report = json.loads(res.output)
    assert report["results"][0] == {
        "id": "a",
        "ranked": report["results"][0]["ranked"],
        "selected": ["pdf-merge"],
        "kind": "keyword",
    }
    assert report["byKind"]["none"]["abstention"] == 1.0
    assert report["unknownExpected"] == ["no-such-skill"]
    # The curve holds the applied threshold, where it agrees with the run.
    applied = [p for p in report["curve"] if p["threshold"] == report["threshold"]]
    assert applied and applied[0]["abstention"] == 1.0 and applied[0]["recall"] == 0.5
    assert set(report["baseline"]) == {"bm25"}
    table = _run(
        ["-w", str(workspace), "-c", str(cfg), "eval", "select", "--queries", str(qfile)], tmp_path
    )
    assert "kind=keyword" in table.output and "bm25" in table.output
    assert "Threshold curve" in table.output and "precision" in table.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a"}\n')
    fail = CliRunner().invoke(
        cli, ["-w", str(workspace), "eval", "select", "--queries", str(bad)], env=env_for(tmp_path)
    )
    assert fail.exit_code == 2 and "bad.jsonl:1" in fail.output
