"""The skill router (``skillbook.selection.router.route``) and its use in the agent loop.

The workspace holds the six stand-in skills of ``selection_support`` plus two PDF
skills close enough that a PDF request is ambiguous under a wide margin. BM25 alone
ranks (no model to load); the agent runs against the scripted provider, whose recorded
requests show the system prompt and the user message the model got.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from selection_support import env_for, make_workspace, write_skill

from skillbook.config.file import Config
from skillbook.pipeline.book import Loader, SkillBook
from skillbook.pipeline.prompt.home_paths import compact_skill_paths
from skillbook.pipeline.prompt.skills_section import format_skills_for_prompt, skills_section
from skillbook.runtime.agent import DEFAULT_INSTRUCTIONS, Agent
from skillbook.runtime.providers.scripted import ScriptedModel
from skillbook.selection.options import selector_settings
from skillbook.selection.plan import BLOCK_INTRO
from skillbook.selection.router import (
    DEFAULT_ROUTE_MARGIN,
    Route,
    catalog_formatter,
    route,
    route_selection,
)
from skillbook.selection.selector import Candidate, Selection, Selector

DIRECT = "check the weather forecast: rain and wind in Oslo"
AMBIGUOUS = "merge two PDF files into one PDF"
NOMATCH = "good morning, how are you?"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = make_workspace(tmp_path)
    write_skill(ws / "skills", "pdf-tools", "Merge PDF files, split a PDF, rotate PDF pages.")
    return ws


def _book(ws: Path, tmp: Path, compat: str | None = None, **selection: Any) -> SkillBook:
    # BM25's tuned threshold (0.32) is for hundreds of skills; eight need less.
    cfg = {"indexDir": str(tmp / "index"), "backend": "bm25", "minScore": 0.25, **selection}
    config = Config.from_mapping({"skills": {"selection": cfg}})
    return Loader(ws, config=config, env=env_for(tmp), compat=compat).load()


def _selector(book: SkillBook) -> Selector:
    return Selector(book.eligible, settings=selector_settings(book.config.skills.selection))


def test_three_outcomes(workspace: Path, tmp_path: Path) -> None:
    book = _book(workspace, tmp_path)
    selector = _selector(book)
    direct = route(DIRECT, selector)
    assert isinstance(direct, Route)
    assert (direct.outcome, direct.names()) == ("direct", ["weather"])
    assert direct.margin == DEFAULT_ROUTE_MARGIN
    # A wide margin: every selected PDF skill is as good as the best.
    wide = route(AMBIGUOUS, selector, margin=1.0)
    assert wide.outcome == "ambiguous"
    assert set(wide.names()) == {"pdf-merge", "pdf-tools"}
    assert [c.name for c in wide.selection.selected[:2]] == wide.names()  # best first
    # No margin: the best alone.
    narrow = route(AMBIGUOUS, selector, margin=0.0)
    assert narrow.outcome == "direct" and narrow.names() == [wide.names()[0]]
    none = route(NOMATCH, selector)
    assert (none.outcome, none.skills, none.block) == ("nomatch", (), "")
    assert none.to_json()["outcome"] == "nomatch" and none.to_json()["skills"] == []


def _selection(scores: list[float], threshold: float, skills: Any) -> Selection:
    ranked = tuple(
        Candidate(skill=s, rank=i, score=v)
        for i, (s, v) in enumerate(zip(skills, scores, strict=False), 1)
    )
    return Selection(
        query="q",
        backend="bm25",
        threshold=threshold,
        ranked=ranked,
        selected=tuple(c for c in ranked[:5] if c.score >= threshold),
    )


def test_margin_is_measured_from_the_best(workspace: Path, tmp_path: Path) -> None:
    skills = _book(workspace, tmp_path).eligible
    # 0.50 and 0.46 are within 0.05 of each other; 0.44 is not (0.06 below the best).
    got = route_selection(_selection([0.5, 0.46, 0.44, 0.1], 0.3, skills), margin=0.05)
    assert got.outcome == "ambiguous" and len(got.candidates) == 2
    assert route_selection(_selection([0.5, 0.44], 0.3, skills), margin=0.05).outcome == "direct"
    # Only skills over the threshold count, however close.
    lone = route_selection(_selection([0.31, 0.29], 0.3, skills), margin=0.05)
    assert lone.outcome == "direct" and len(lone.candidates) == 1
    assert route_selection(_selection([0.29], 0.3, skills)).outcome == "nomatch"
    capped = route_selection(_selection([0.5, 0.5, 0.5], 0.3, skills), top_k=2)
    assert len(capped.candidates) == 2


def test_block_is_the_catalog_of_those_skills(workspace: Path, tmp_path: Path) -> None:
    book = _book(workspace, tmp_path)
    wide = route(AMBIGUOUS, _selector(book), margin=1.0)
    # Default formatter: OpenClaw's full catalog of exactly those skills.
    assert wide.block == format_skills_for_prompt(compact_skill_paths(wide.skills, ()))
    for compat in ("openclaw-2026.4", "openclaw-2026.9"):
        book = _book(workspace, tmp_path, compat=compat)
        got = route(AMBIGUOUS, _selector(book), margin=1.0, formatter=catalog_formatter(book))
        # What the book renders when a skill filter names those skills (OpenClaw's
        # prompt with a skill filter): same text, byte for byte, in load order.
        filtered = Loader(
            workspace,
            config=book.config,
            env=env_for(tmp_path),
            compat=compat,
            skill_filter=got.names(),
        ).load()
        assert got.block == filtered.catalog.text, compat
        assert got.block.count("<skill>") == 2


def _agent_requests(book: SkillBook, texts: list[str]) -> tuple[Agent, list[Any]]:
    model = ScriptedModel(["ok"] * len(texts))
    agent = Agent(book, model, env=env_for(Path(book.paths.home)))
    outcomes = []
    for text in texts:
        asyncio.run(agent.run_turn((), text))
        assert agent.last_selection is not None and agent.last_selection.route is not None
        outcomes.append(agent.last_selection.route.outcome)
    assert outcomes == ["direct", "ambiguous", "nomatch"]
    return agent, model.requests


def test_agent_system_placement_carries_the_routed_catalog(workspace: Path, tmp_path: Path) -> None:
    book = _book(workspace, tmp_path, mode="always", placement="system", routeMargin=1.0)
    agent, requests = _agent_requests(book, [DIRECT, AMBIGUOUS, NOMATCH])
    assert agent.selection is not None
    fmt = catalog_formatter(book)
    weather = [s for s in book.eligible if s.name == "weather"]
    pdfs = [s for s in book.eligible if s.name in ("pdf-merge", "pdf-tools")]
    # direct: the system prompt's catalog is that one skill, as OpenClaw formats it.
    assert requests[0].system == DEFAULT_INSTRUCTIONS + "\n" + skills_section(fmt(weather))
    assert "<name>weather</name>" in requests[0].system
    # ambiguous: the close skills.
    assert requests[1].system == DEFAULT_INSTRUCTIONS + "\n" + skills_section(fmt(pdfs))
    # nomatch: no catalog at all.
    assert requests[2].system == DEFAULT_INSTRUCTIONS
    assert "<available_skills>" not in requests[2].system
    # The user's message is left as typed, and find_skills stays offered.
    assert [r.last.content for r in requests] == [DIRECT, AMBIGUOUS, NOMATCH]
    assert "find_skills" in requests[2].tools


def test_agent_message_placement_routes_the_per_turn_block(workspace: Path, tmp_path: Path) -> None:
    book = _book(workspace, tmp_path, mode="always", routeMargin=1.0)
    _agent, requests = _agent_requests(book, [DIRECT, AMBIGUOUS, NOMATCH])
    # The system prompt stays the same on every turn (the prompt cache keeps hitting).
    assert len({r.system for r in requests}) == 1
    assert "<name>weather</name>" not in requests[0].system
    fmt = catalog_formatter(book)
    first, second, third = (r.last.content for r in requests)
    total = len(book.eligible)
    assert first.startswith(
        BLOCK_INTRO.format(total=total) + fmt([s for s in book.eligible if s.name == "weather"])
    )
    assert second.count("<skill>") == 2 and "pdf-tools" in second and "pdf-merge" in second
    assert third == NOMATCH  # nomatch: no block


def test_pinned_skills_stay_listed_when_nothing_matches(workspace: Path, tmp_path: Path) -> None:
    book = _book(workspace, tmp_path, mode="always", placement="system", pinned=["trello"])
    model = ScriptedModel(["ok"])
    asyncio.run(Agent(book, model).run_turn((), NOMATCH))
    fmt = catalog_formatter(book)
    trello = [s for s in book.eligible if s.name == "trello"]
    assert model.requests[0].system == DEFAULT_INSTRUCTIONS + "\n" + skills_section(fmt(trello))


def test_route_settings_are_checked() -> None:
    with pytest.raises(Exception, match=r"skills\.selection\.routeMargin"):
        Config.from_mapping({"skills": {"selection": {"routeMargin": 2}}})
    with pytest.raises(Exception, match=r"skills\.selection\.placement"):
        Config.from_mapping({"skills": {"selection": {"placement": "prompt"}}})
