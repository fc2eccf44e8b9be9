"""The wire objects of ``skillbook serve``: request params, errors, pages and list views.

Input: a :class:`~skillbook.mcp._catalog.ServedState` and the request parameters the
SDK parsed. Output: the ``mcp_types`` values the handlers of
:class:`~skillbook.mcp.server.SkillServer` answer with (resources, prompts, the
``read_skill`` schema) and the ``MCPError`` values they raise for bad params or
cursors. Holds no state and never touches the skill folders.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from skillbook.mcp._catalog import ServedState, page

PROMPT_ARGUMENT = "args"

READ_TOOL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "The skill's <name> in <available_skills>."},
        "path": {
            "type": "string",
            "description": "A file of the skill, relative to its folder (default SKILL.md). "
            "An absolute path inside the skill folder also works.",
        },
    },
    "required": ["name"],
}


class GetSkillParams(types.RequestParams):
    uri: str


class DirectoryReadParams(types.PaginatedRequestParams):
    uri: str


def invalid(message: str, uri: str | None = None) -> MCPError:
    return MCPError(code=types.INVALID_PARAMS, message=message, data={"uri": uri} if uri else None)


def page_of(items: Sequence[Any], cursor: str | None, size: int) -> tuple[list[Any], str | None]:
    try:
        return page(items, cursor, size)
    except ValueError as exc:
        raise invalid("Invalid cursor") from exc


def no_cursor(params: types.PaginatedRequestParams | None) -> None:
    """Lists served in one page hand out no cursor, so any cursor is a bad one."""
    if params is not None and params.cursor is not None:
        raise invalid("Invalid cursor")


def is_modern(ctx: ServerRequestContext[Any, Any]) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def resources_of(state: ServedState) -> list[types.Resource]:
    return [types.Resource.model_validate(item) for item in state.resource_items()]


def prompts_of(state: ServedState) -> list[types.Prompt]:
    argument = types.PromptArgument(
        name=PROMPT_ARGUMENT, description="The text after the slash command.", required=False
    )
    return [
        types.Prompt(name=c.name, description=c.description, arguments=[argument])
        for c in state.commands.commands
    ]


@dataclass(frozen=True, slots=True)
class Views:
    """The wire lists of one served state, built once per state."""

    state: ServedState
    resources: list[types.Resource]
    prompts: list[types.Prompt]
