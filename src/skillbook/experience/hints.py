"""Structured hints a tool contributes to a learned procedure.

Input: one tool call and its result. Output: hint mappings stored with the call in the
session (``tool.hints``) and shown in the draft's procedure. Any tool may contribute by
having a ``procedure_hints(call, result)`` method (:class:`ToolHints`); it returns
:class:`UiTarget` values (OpenPocket's semantic ``ui_target`` hints for UI tools: text,
resource id, content description, class, clickable) or plain mappings with a ``kind``.
The built-in tools contribute what fits them without a method: ``read`` the file read
(:class:`FileRead`), ``exec`` the command run and where (:class:`CommandRun`).

A tool whose hook raises or returns something else contributes nothing; the call is
still recorded.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from skillbook.runtime.providers.base import ToolCall
    from skillbook.runtime.tools import ToolResult

__all__ = [
    "CommandRun",
    "FileRead",
    "Hint",
    "ToolHints",
    "UiTarget",
    "builtin_hints",
    "describe_hint",
    "tool_hints",
]

_log = logging.getLogger("skillbook.experience")


@dataclass(frozen=True, slots=True)
class UiTarget:
    """The element a UI tool acted on, described by what stays stable between runs."""

    text: str | None = None
    resource_id: str | None = None
    content_desc: str | None = None
    class_name: str | None = None
    clickable: bool | None = None
    #: What was done to it (``tap``, ``type``, ``scroll``), when the tool says.
    action: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "ui_target"}
        for key, value in (
            ("action", self.action),
            ("text", self.text),
            ("resourceId", self.resource_id),
            ("contentDesc", self.content_desc),
            ("className", self.class_name),
            ("clickable", self.clickable),
        ):
            if value is not None:
                out[key] = value
        return out


@dataclass(frozen=True, slots=True)
class FileRead:
    path: str
    skill: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": "file_read", "path": self.path, "skill": self.skill}


@dataclass(frozen=True, slots=True)
class CommandRun:
    command: str
    skill: str | None = None
    cwd: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": "command", "command": self.command, "skill": self.skill, "cwd": self.cwd}


Hint = UiTarget | FileRead | CommandRun | Mapping[str, Any]


@runtime_checkable
class ToolHints(Protocol):
    """A tool that describes its calls for learned procedures."""

    def procedure_hints(self, call: ToolCall, result: ToolResult) -> Sequence[Hint]: ...


def builtin_hints(
    call: ToolCall, *, skill: str | None, cwd: str | None = None
) -> list[dict[str, Any]]:
    """What the built-in ``read`` and ``exec`` tools contribute."""
    args = call.arguments
    if call.name == "read" and isinstance(args.get("path"), str):
        return [FileRead(args["path"], skill).to_json()]
    if call.name == "exec" and isinstance(args.get("command"), str):
        return [CommandRun(args["command"], skill, cwd).to_json()]
    return []


def tool_hints(tool: object, call: ToolCall, result: ToolResult) -> list[dict[str, Any]]:
    """The hints ``tool`` contributes through :class:`ToolHints`, as JSON mappings."""
    if not isinstance(tool, ToolHints):
        return []
    try:
        found = tool.procedure_hints(call, result)
    except Exception as exc:  # a tool's hook must not cost the recording
        _log.warning("procedure_hints of tool %s failed", call.name, exc_info=exc)
        return []
    out: list[dict[str, Any]] = []
    for hint in found if isinstance(found, Sequence) else ():
        if isinstance(hint, UiTarget | FileRead | CommandRun):
            out.append(hint.to_json())
        elif isinstance(hint, Mapping) and isinstance(hint.get("kind"), str):
            out.append({str(k): v for k, v in hint.items()})
    return out


def describe_hint(hint: Mapping[str, Any]) -> str:
    """One line for the draft: ``tap on text "OK", resource-id …, class …, clickable``."""
    kind = hint.get("kind")
    if kind == "ui_target":
        parts = [
            f'{label} "{hint[key]}"'
            for key, label in (
                ("text", "text"),
                ("resourceId", "resource-id"),
                ("contentDesc", "content-desc"),
                ("className", "class"),
            )
            if hint.get(key)
        ]
        if hint.get("clickable") is not None:
            parts.append("clickable" if hint["clickable"] else "not clickable")
        action = hint.get("action") or "UI target"
        return f"{action}: {', '.join(parts) or '(no stable attributes)'}"
    if kind == "file_read":
        return f"read `{hint.get('path')}`"
    if kind == "command":
        where = f" as skill `{hint['skill']}`" if hint.get("skill") else ""
        return f"ran `{hint.get('command')}`{where}"
    rest = ", ".join(f"{k}={v}" for k, v in hint.items() if k != "kind")
    return f"{kind}: {rest}" if rest else str(kind)
