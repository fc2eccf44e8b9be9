"""``eval trigger``: does the model open the right ``SKILL.md``, with selection and without?

Input: a skill book, a :class:`~skillbook.runtime.providers.base.ChatModel` (any
OpenAI-compatible or Anthropic endpoint) and labelled queries (as for ``eval
select``). Output: one :class:`TriggerRun` per query and mode — ``off`` (OpenClaw's
catalog in the system prompt) and ``on`` (``skills.selection`` in ``always`` mode:
standing catalog, per-request block, ``find_skills``) — and the rates per mode.

This is the check Anthropic's skill-creator runs: one agent turn per query, and a
query *triggers* when the model reads the expected skill's ``SKILL.md``. On a query
that expects no skill, reading any ``SKILL.md`` is a false trigger. The agent gets
``read`` (and ``find_skills`` when selection is on) but never ``exec``: an
evaluation must not run commands on this machine.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from skillbook.runtime.agent import Agent
from skillbook.runtime.find_skills import find_tool
from skillbook.runtime.providers.base import ChatModel
from skillbook.runtime.tools import ReadTool, Tool
from skillbook.selection.evaluate import LabelledQuery
from skillbook.selection.plan import SelectionPlan, plan_for

if TYPE_CHECKING:
    from skillbook.pipeline.book import SkillBook

__all__ = [
    "DEFAULT_CONCURRENCY",
    "MODES",
    "TriggerReport",
    "TriggerRun",
    "estimate_cost",
    "run_trigger_eval",
    "with_selection_mode",
]

MODES: Final = ("off", "on")
DEFAULT_CONCURRENCY: Final = 4
#: Model calls per query: enough to search, read and answer.
DEFAULT_MAX_STEPS: Final = 4
#: Characters per token for the cost estimate (a common rule of thumb for English).
CHARS_PER_TOKEN: Final = 4


def with_selection_mode(book: SkillBook, mode: str) -> SkillBook:
    """``book`` with ``skills.selection.mode`` set to ``mode`` (``always`` for "on")."""
    cfg = book.config
    sel = dataclasses.replace(cfg.skills.selection, mode=mode)
    skills = dataclasses.replace(cfg.skills, selection=sel)
    return dataclasses.replace(book, config=dataclasses.replace(cfg, skills=skills))


@dataclass(frozen=True, slots=True)
class TriggerRun:
    query: LabelledQuery
    mode: str
    #: Skills whose ``SKILL.md`` the model read, in order.
    read: tuple[str, ...]
    searched: bool = False
    error: str | None = None

    @property
    def triggered(self) -> bool:
        """Positive: an expected skill was read. Negative: any skill was read."""
        if self.query.expected:
            return bool(set(self.read) & set(self.query.expected))
        return bool(self.read)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.query.id,
            "mode": self.mode,
            "read": list(self.read),
            "triggered": self.triggered,
            "searched": self.searched,
            "error": self.error,
        }


@dataclass(frozen=True, slots=True)
class TriggerReport:
    runs: tuple[TriggerRun, ...]

    def rates(self, mode: str) -> dict[str, Any]:
        runs = [r for r in self.runs if r.mode == mode]
        pos = [r for r in runs if r.query.expected]
        neg = [r for r in runs if not r.query.expected]
        return {
            "queries": len(runs),
            "triggerRate": round(sum(r.triggered for r in pos) / len(pos), 4) if pos else None,
            "falseTriggerRate": round(sum(r.triggered for r in neg) / len(neg), 4) if neg else None,
            "errors": sum(1 for r in runs if r.error),
        }

    def to_json(self) -> dict[str, Any]:
        modes = sorted({r.mode for r in self.runs}, key=MODES.index)
        return {
            "modes": {m: self.rates(m) for m in modes},
            "results": [r.to_json() for r in self.runs],
        }


def _agent(book: SkillBook, model: ChatModel, mode: str, env: Mapping[str, str]) -> Agent:
    variant = with_selection_mode(book, "always" if mode == "on" else "off")
    read = ReadTool(
        variant.eligible,
        home=variant.paths.home,
        other_homes=(variant.paths.os_home,),
        workspace=variant.workspace,
    )
    plan = plan_for(variant, env=env) if mode == "on" else None
    tools: tuple[Tool, ...] = (read, find_tool(plan)) if plan is not None else (read,)
    agent = Agent(variant, model, tools=tools, max_steps=DEFAULT_MAX_STEPS, env=env)
    agent.selection = plan  # one selector for the per-request block and find_skills
    return agent


def estimate_cost(
    book: SkillBook, queries: Sequence[LabelledQuery], modes: Sequence[str]
) -> dict[str, int]:
    """Requests and input tokens the run needs at least (one model call per query and mode)."""
    chars = 0
    for mode in modes:
        variant = with_selection_mode(book, "always" if mode == "on" else "off")
        if mode == "on":
            system = SelectionPlan(variant).system_section()
        else:
            system = variant.system_prompt_section()
        chars += sum(len(system) + len(q.query) + 600 for q in queries)  # 600: tool schemas
    return {"requests": len(queries) * len(modes), "inputTokens": chars // CHARS_PER_TOKEN}


async def run_trigger_eval(
    book: SkillBook,
    model: ChatModel,
    queries: Sequence[LabelledQuery],
    *,
    modes: Sequence[str] = MODES,
    concurrency: int = DEFAULT_CONCURRENCY,
    env: Mapping[str, str] | None = None,
    on_done: Callable[[TriggerRun], None] | None = None,
) -> TriggerReport:
    """One agent turn per query and mode, ``concurrency`` at a time.

    ``env`` is passed to the selection backends (``embedding.apiKeyEnv``).
    """
    agents = {mode: _agent(book, model, mode, env or {}) for mode in modes}
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(query: LabelledQuery, mode: str) -> TriggerRun:
        async with gate:
            run = await _turn(agents[mode], query, mode)
        if on_done is not None:
            on_done(run)
        return run

    jobs = [one(q, m) for q in queries for m in modes]
    return TriggerReport(tuple(await asyncio.gather(*jobs)))


async def _turn(agent: Agent, query: LabelledQuery, mode: str) -> TriggerRun:
    try:
        turn = await agent.run_turn((), query.query)
    except Exception as exc:  # one failing request is a result, not the end of the run
        return TriggerRun(query, mode, (), error=f"{type(exc).__name__}: {exc}")
    read: list[str] = []
    searched = False
    for run in turn.tool_calls:
        if run.call.name == "find_skills":
            searched = True
        path = run.call.arguments.get("path")
        is_read = run.call.name == ReadTool.name and not run.result.is_error
        is_skill_md = isinstance(path, str) and path.rstrip("/").endswith("SKILL.md")
        if is_read and is_skill_md and run.skill is not None:
            read.append(run.skill)
    return TriggerRun(query, mode, tuple(dict.fromkeys(read)), searched)
