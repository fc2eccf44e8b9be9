"""Resolving a chat message to a slash command, and what a command sends on (spec §6.4–6.5).

Input: the user's text and a :class:`~skillbook.pipeline.commands.specs.CommandSet`. Output: the
:class:`Invocation` it resolves to, the message the model gets instead
(:func:`rewrite_for_model`: the skill request, or a bundle command's template with
the arguments), and the arguments of a ``command-dispatch: tool`` call. No I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from skillbook.base.js import JS_WHITESPACE, js_trim
from skillbook.pipeline.commands.specs import CommandSet, CommandSpec, lower_or_empty

__all__ = [
    "ARGUMENTS",
    "SKILL_COMMAND",
    "Invocation",
    "dispatch_arguments",
    "expand_template",
    "find_command",
    "resolve_invocation",
    "rewrite_for_model",
    "tool_call_arguments",
]

#: The command that invokes any skill by name: ``/skill <name> [args]``.
SKILL_COMMAND = "skill"
#: The placeholder of a bundle command's template that the arguments replace.
ARGUMENTS = "$ARGUMENTS"

_WS = f"[{JS_WHITESPACE}]"
_NOT_WS = f"[^{JS_WHITESPACE}]"
_COMMAND_RE = re.compile(rf"/({_NOT_WS}+)(?:{_WS}+([\s\S]+))?")
_TOKEN_RE = re.compile(rf"({_NOT_WS}+)(?:{_WS}+([\s\S]+))?")
_LOOKUP_SEPARATORS = re.compile(rf"(?:{_WS}|_)+")


@dataclass(frozen=True, slots=True)
class Invocation:
    """A chat message that calls a command; ``args`` is the rest, trimmed, or None."""

    command: CommandSpec
    args: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"command": self.command.to_json()}
        if self.args is not None:
            out["args"] = self.args
        return out


def _lookup_key(value: str) -> str:
    return _LOOKUP_SEPARATORS.sub("-", lower_or_empty(value))


def find_command(commands: Iterable[CommandSpec], token: str) -> CommandSpec | None:
    """The ``/skill <token>`` lookup: name or skill name, case-insensitive, and with
    runs of whitespace and ``_`` read as ``-`` (so ``demo-skill`` finds ``demo_skill``)."""
    lowered = lower_or_empty(token)
    if not lowered:
        return None
    normalized = _lookup_key(token)
    for cmd in commands:
        if lowered in (lower_or_empty(cmd.name), lower_or_empty(cmd.skill_name)):
            return cmd
        if normalized in (_lookup_key(cmd.name), _lookup_key(cmd.skill_name)):
            return cmd
    return None


def resolve_invocation(
    text: str, commands: CommandSet | Sequence[CommandSpec]
) -> Invocation | None:
    """§6.4: ``/name [args]`` or ``/skill <name> [args]`` → the command, else None.

    Only the outer whitespace of the arguments is removed; everything inside them
    (quotes, newlines, leading ``-``) is kept as typed.
    """
    specs = commands.commands if isinstance(commands, CommandSet) else commands
    match = _COMMAND_RE.fullmatch(js_trim(text))
    if match is None:
        return None
    name = lower_or_empty(match.group(1))
    if not name:
        return None
    rest = match.group(2)
    if name == SKILL_COMMAND:
        remainder = js_trim(rest) if rest is not None else ""
        token = _TOKEN_RE.fullmatch(remainder) if remainder else None
        if token is None:
            return None
        found = find_command(specs, token.group(1))
        if found is None:
            return None
        return Invocation(found, _args(token.group(2)))
    for cmd in specs:
        if lower_or_empty(cmd.name) == name:
            return Invocation(cmd, _args(rest))
    return None


def _args(raw: str | None) -> str | None:
    return (js_trim(raw) if raw is not None else "") or None


def expand_template(template: str, args: str | None) -> str:
    """The message for the model: ``$ARGUMENTS`` replaced by the arguments, or the
    arguments appended under ``User input:`` when the template has no placeholder."""
    given = js_trim(args or "")
    if ARGUMENTS in template:
        return js_trim(template.replace(ARGUMENTS, given))
    if not given:
        return js_trim(template)
    return f"{js_trim(template)}\n\nUser input:\n{given}"


def rewrite_for_model(invocation: Invocation) -> str:
    """§6.5: the message body the model gets instead of the slash command (a bundle
    command's template with the arguments, else the request to use the skill)."""
    template = invocation.command.prompt_template
    if template is not None:
        return expand_template(template, invocation.args)
    text = f'Use the "{invocation.command.skill_name}" skill for this request.'
    if invocation.args:
        text += f"\n\nUser input:\n{invocation.args}"
    return text


def tool_call_arguments(invocation: Invocation) -> dict[str, str]:
    """§6.5: the arguments of a ``command-dispatch: tool`` call; ``command`` is the raw
    argument text, never re-parsed or stripped beyond the outer trim of §6.4."""
    return {
        "command": invocation.args or "",
        "commandName": invocation.command.name,
        "skillName": invocation.command.skill_name,
    }


def dispatch_arguments(schema: Mapping[str, Any], invocation: Invocation) -> dict[str, Any]:
    """The arguments a ``command-dispatch: tool`` command calls a tool with ``schema`` (§6.5).

    OpenClaw's ``{command, commandName, skillName}``, ``command`` being the raw
    argument text. A tool whose schema is closed (``additionalProperties: false``,
    as ``exec``) would refuse the two name keys, so it gets only the keys it
    declares, and ``skill`` (if it declares one) set to the command's skill so
    ``exec`` runs in that skill's folder with its environment. ``command`` is never
    changed. skillbook's agent and every framework adapter use this one rule.
    """
    args: dict[str, Any] = tool_call_arguments(invocation)
    if schema.get("additionalProperties") is not False:
        return args
    props = schema.get("properties") or {}
    kept = {k: v for k, v in args.items() if k in props}
    if "skill" in props:
        kept.setdefault("skill", invocation.command.skill_name)
    return kept
