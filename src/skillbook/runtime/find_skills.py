"""``find_skills(query)``: the model's way to every eligible skill selection left out.

Input: a :class:`~skillbook.selection.selector.Selector` over the eligible skills and
the home prefixes the catalog shortens paths with. Output: a runtime tool (the
:class:`~skillbook.runtime.tools.Tool` protocol: ``name``, ``description``, JSON
``schema``, ``run``/``arun``) whose result is the best matches in OpenClaw's
``<available_skills>`` format, so the model reads them exactly as it reads the
catalog and opens the chosen ``SKILL.md`` with ``read``. Unlike the per-request
block, the tool ranks without a threshold: the model asked, so it gets the best
candidates even when they fit only loosely.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from skillbook.pipeline.prompt.home_paths import compact_skill_paths
from skillbook.pipeline.prompt.skills_section import format_skills_for_prompt
from skillbook.runtime.tools import ToolResult
from skillbook.selection.selector import Selector

if TYPE_CHECKING:
    from skillbook.selection.plan import SelectionPlan

__all__ = ["DEFAULT_FIND_LIMIT", "FIND_SKILLS_SCHEMA", "FindSkillsTool", "find_tool"]

DEFAULT_FIND_LIMIT: Final = 5
MAX_FIND_LIMIT: Final = 20
FIND_SKILLS_SCHEMA: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What the skill should help with."},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_FIND_LIMIT,
            "description": f"How many skills to return (default {DEFAULT_FIND_LIMIT}).",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}


class FindSkillsTool:
    """Search every eligible skill by what it does; answers in catalog format."""

    name = "find_skills"
    description = (
        "Search all available skills by what you need (any language). Returns the best "
        "matching skills as <available_skills> entries with their SKILL.md location; read "
        "the one that fits before acting. Use it when no listed skill fits the task."
    )

    def __init__(self, selector: Selector, *, homes: Sequence[Path | str] = ()) -> None:
        self.selector = selector
        self.homes = tuple(homes)

    @property
    def schema(self) -> dict[str, Any]:
        return {
            **FIND_SKILLS_SCHEMA,
            "properties": {k: dict(v) for k, v in FIND_SKILLS_SCHEMA["properties"].items()},
            "required": list(FIND_SKILLS_SCHEMA["required"]),
        }

    async def arun(self, args: Mapping[str, Any]) -> ToolResult:
        return await asyncio.to_thread(self.run, args)

    def run(self, args: Mapping[str, Any]) -> ToolResult:
        if not isinstance(args, Mapping) or set(args) - {"query", "limit"}:
            return ToolResult("find_skills: expected {query, limit?}", True)
        query, limit = args.get("query"), args.get("limit", DEFAULT_FIND_LIMIT)
        if not isinstance(query, str) or not query.strip():
            return ToolResult("find_skills: 'query' must be a non-empty string", True)
        if isinstance(limit, float) and limit.is_integer():
            limit = int(limit)
        if (
            not isinstance(limit, int)
            or isinstance(limit, bool)
            or not 1 <= limit <= MAX_FIND_LIMIT
        ):
            return ToolResult(
                f"find_skills: 'limit' must be an integer from 1 to {MAX_FIND_LIMIT}", True
            )
        selection = self.selector.select(query, top_k=limit, depth=limit)
        found = [c.skill for c in selection.ranked[:limit] if c.score > 0]
        if not found:
            return ToolResult(f"No skill matches {query!r}. Answer without a skill.")
        shown = compact_skill_paths(found, self.homes)
        return ToolResult(format_skills_for_prompt(shown).lstrip("\n"))


def find_tool(plan: SelectionPlan) -> FindSkillsTool:
    """``find_skills`` over every eligible skill of ``plan``, with its catalog's home paths.

    It lives here, not on the plan: selection ranks, the runtime owns the tools."""
    return FindSkillsTool(plan.selector, homes=plan.homes)
