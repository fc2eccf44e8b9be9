"""Slash commands that run a skill's own command, with no model: the ``commandExec`` extension.

Input: loaded :class:`~skillbook.model.Skill` values (and, for a command, the
:class:`~skillbook.pipeline.commands.specs.CommandSpec` built from them). Output: the
:class:`ExecDispatch` a skill's ``/name`` runs, or None, the dispatch kind of a
command (``tool``, ``exec`` or ``model``) and the diagnostics about a ``commandExec``
that is ignored. No I/O.

OpenClaw's ``command-dispatch: tool`` hands the raw argument text to a tool as its
``command``; with skillbook's ``exec`` that runs what the user typed ("Shanghai") as a
shell command. A skill therefore names the command its slash command runs in
``metadata.skillbook.commandExec``, a place OpenClaw and the Agent Skills validators
leave alone. The user's text reaches that command as ``$1`` and ``$SKILL_ARGS``, never
inside the command text, so nothing the user types is parsed by the shell.

``metadata`` is read from the structured YAML view when it is a mapping; otherwise
(YAML failed, or the value is a JSON5 string) from the JSON5 of its string view, the
text OpenClaw itself parses for ``metadata.openclaw``.

Precedence: OpenClaw's ``command-dispatch: tool`` first, then ``commandExec``, else the
model rewrite (§6.5). Skills from remote MCP servers never run a command by themselves.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from skillbook import diagnostics as dg
from skillbook.base.js import load_json5
from skillbook.diagnostics import Diagnostic
from skillbook.model import CommandDispatch, Frontmatter, Skill, Source

if TYPE_CHECKING:
    from skillbook.pipeline.commands.specs import CommandSpec

__all__ = [
    "ARGS_ENV",
    "COMMAND_EXEC_KEY",
    "EXTENSION_KEY",
    "KIND_EXEC",
    "KIND_MODEL",
    "KIND_TOOL",
    "ExecDispatch",
    "command_dispatch",
    "dispatch_kind",
    "exec_dispatch",
    "exec_dispatch_diagnostics",
    "find_skill",
]

#: ``metadata.<EXTENSION_KEY>`` holds skillbook's own frontmatter extensions.
EXTENSION_KEY: Final = "skillbook"
COMMAND_EXEC_KEY: Final = "commandExec"
#: ``metadata.skillbook.detach``: let the skill's commands leave background processes.
DETACH_KEY: Final = "detach"
#: The environment variable that carries the raw argument text (also ``$1``).
ARGS_ENV: Final = "SKILL_ARGS"
KIND_TOOL: Final = "tool"
KIND_EXEC: Final = "exec"
KIND_MODEL: Final = "model"
_METADATA: Final = "metadata"
_FIELD: Final = f"metadata.{EXTENSION_KEY}.{COMMAND_EXEC_KEY}"
#: No ``commandExec`` key at all (distinct from a key whose value is null).
_ABSENT: Final = object()


@dataclass(frozen=True, slots=True)
class ExecDispatch:
    """``metadata.skillbook.commandExec``: the shell command a skill's slash command runs.

    It runs through ``exec`` in the skill's folder with the skill's environment; the
    argument text is ``$1`` (absent when nothing was typed) and ``$SKILL_ARGS``.
    """

    command: str
    kind: str = KIND_EXEC

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "command": self.command}


def _metadata(fm: Frontmatter) -> Mapping[str, Any] | None:
    data = fm.data.get(_METADATA)
    if isinstance(data, Mapping):
        return data
    raw = fm.values.get(_METADATA)
    if not raw:
        return None
    try:
        parsed = load_json5(raw)
    except ValueError:  # parse already reports an unreadable `metadata`
        return None
    return parsed if isinstance(parsed, Mapping) else None


def _command_exec_value(fm: Frontmatter) -> Any:
    """The raw ``metadata.skillbook.commandExec`` value, any type, or ``_ABSENT``."""
    meta = _metadata(fm)
    ext = meta.get(EXTENSION_KEY) if meta is not None else None
    return ext.get(COMMAND_EXEC_KEY, _ABSENT) if isinstance(ext, Mapping) else _ABSENT


def detaches(skill: Skill) -> bool:
    """``metadata.skillbook.detach: true``: background processes the skill's commands
    start may outlive them (``exec`` otherwise kills the command's process group when
    it exits). Never for a remote skill."""
    if skill.source == Source.REMOTE:
        return False
    meta = _metadata(skill.frontmatter)
    ext = meta.get(EXTENSION_KEY) if meta is not None else None
    return isinstance(ext, Mapping) and ext.get(DETACH_KEY) is True


def _usable(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def exec_dispatch(skill: Skill) -> ExecDispatch | None:
    """The command ``/<skill>`` runs without a model, or None (see the precedence above)."""
    if skill.source == Source.REMOTE or skill.dispatch is not None:
        return None
    value = _command_exec_value(skill.frontmatter)
    return ExecDispatch(value) if _usable(value) else None


def exec_dispatch_diagnostics(skill: Skill) -> tuple[Diagnostic, ...]:
    """Why a ``commandExec`` the skill declares does not run (empty when it runs or is absent)."""
    value = _command_exec_value(skill.frontmatter)
    if value is _ABSENT:
        return ()
    where: dict[str, Any] = {
        "path": skill.file_path,
        "line": skill.frontmatter.line_of(_METADATA),
        "skill": skill.name,
    }
    if not _usable(value):
        kind = "an empty string" if isinstance(value, str) else dg.describe_value(value)
        message = (
            f"`{_FIELD}` is {kind}; it must be a shell command (a non-empty string), so "
            f"/{skill.name} is sent to the model instead"
        )
        return (dg.warning("command.exec-ignored", message, **where),)
    if skill.source == Source.REMOTE:
        message = (
            f"`{_FIELD}` of a skill from a remote MCP server ({skill.origin}) is ignored: "
            "remote skills never run commands by themselves"
        )
        return (dg.warning("command.exec-ignored", message, **where),)
    if skill.dispatch is not None:
        message = (
            f"`{_FIELD}` is ignored because `command-dispatch: tool` sends /{skill.name} "
            f"to the tool {skill.dispatch.tool_name!r}; remove one of the two"
        )
        return (dg.warning("command.exec-ignored", message, **where),)
    return ()


def find_skill(spec: CommandSpec, skills: Iterable[Skill]) -> Skill | None:
    """The skill a command was built from (by its exact name, as ``build_command_specs`` keeps it)."""
    return next((s for s in skills if s.name == spec.skill_name), None)


def command_dispatch(
    spec: CommandSpec, skills: Iterable[Skill]
) -> CommandDispatch | ExecDispatch | None:
    """What ``spec`` runs: OpenClaw's tool dispatch, else ``commandExec``, else None (model)."""
    if spec.dispatch is not None:
        return spec.dispatch
    if spec.prompt_template is not None:
        return None  # a bundle command is a prompt, even when a skill has its name
    skill = find_skill(spec, skills)
    return exec_dispatch(skill) if skill is not None else None


def dispatch_kind(spec: CommandSpec, skills: Iterable[Skill]) -> str:
    """``tool``, ``exec`` or ``model``: how ``/<spec.name>`` is answered."""
    found = command_dispatch(spec, skills)
    if isinstance(found, ExecDispatch):
        return KIND_EXEC
    return KIND_TOOL if found is not None else KIND_MODEL
