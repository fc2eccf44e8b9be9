"""Slash commands: skills a user can call by name in chat (spec §6).

Input: eligible, filtered :class:`~skillbook.model.Skill` values in load order (gating
happens before this stage). Output: a :class:`CommandSet` whose specs equal OpenClaw's
``buildWorkspaceSkillCommandSpecs`` for the same skills and reserved names, the
:class:`Invocation` a chat message resolves to, and what a dispatch sends on (a
rewritten message for the model or the arguments of a tool call). Channel menus
(Telegram, Discord) are in :mod:`skillbook.channels`. No I/O.

Lengths are JavaScript string lengths (UTF-16 code units), as OpenClaw counts them;
whitespace and trimming follow JavaScript's ``\\s`` and ``String.prototype.trim``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from skillbook import diagnostics as dg
from skillbook._js import JS_WHITESPACE, js_trim, utf16_len, utf16_slice
from skillbook.diagnostics import Diagnostic
from skillbook.model import CommandDispatch, Skill

if TYPE_CHECKING:
    from skillbook.bundle_commands import BundleCommand

#: OpenClaw's built-in chat commands (native names and ``/`` text aliases, lowercased):
#: a skill may not take one of these names (§6.2, ``listReservedChatSlashCommandNames``).
#: OpenClaw also reserves ``dock_<channel>``/``dock-<channel>`` for every loaded channel
#: plugin with native commands; pass those through :func:`reserved_names` if you have them.
DEFAULT_RESERVED_NAMES: frozenset[str] = frozenset(
    """
    acp activation agents allowlist approve bash btw commands compact config context debug
    elev elevated exec export export-session fast focus help id kill mcp model models new
    plugin plugins queue reason reasoning reset restart send session skill status steer
    stop subagents t tasks tell think thinking tools trace tts unfocus usage v verbose whoami
    """.split()  # noqa: SIM905 (53 names read better as words than one per line)
)
MAX_COMMAND_NAME_LENGTH = 32
FALLBACK_COMMAND_NAME = "skill"
#: Discord's limit, which OpenClaw applies to every channel.
MAX_DESCRIPTION_LENGTH = 100
#: Numbered suffixes ``_2`` … ``_999`` are tried before the ``_x`` fallback.
MAX_DEDUPE_SUFFIX = 999
ELLIPSIS = "\u2026"

_WS = f"[{JS_WHITESPACE}]"
_NOT_WS = f"[^{JS_WHITESPACE}]"
_NOT_NAME_CHARS = re.compile(r"[^a-z0-9_]+")
_UNDERSCORES = re.compile(r"_+")
#: Sources the user put there; :func:`channel_view` keeps their commands first.


def lower_or_empty(value: str | None) -> str:
    # OpenClaw's normalizeLowercaseStringOrEmpty: trim, then lowercase.
    return js_trim(value).lower() if isinstance(value, str) else ""


def reserved_names(
    extra: Iterable[str] = (), *, base: Iterable[str] = DEFAULT_RESERVED_NAMES
) -> frozenset[str]:
    """``base`` plus ``extra`` names, trimmed and lowercased, blanks dropped."""
    names = {lower_or_empty(n) for n in base} | {lower_or_empty(n) for n in extra}
    names.discard("")
    return frozenset(names)


def sanitize_command_name(name: str) -> str:
    """§6.1: lowercase, ``[a-z0-9_]`` only, single ``_`` between words, at most 32 chars."""
    cleaned = _NOT_NAME_CHARS.sub("_", lower_or_empty(name))
    cleaned = _UNDERSCORES.sub("_", cleaned).strip("_")
    return cleaned[:MAX_COMMAND_NAME_LENGTH] or FALLBACK_COMMAND_NAME


def unique_command_name(base: str, used: set[str] | frozenset[str]) -> str:
    """``base``, else ``base_2`` … ``base_999`` (cut so it stays ≤ 32), else ``base[:30]_x``.

    ``used`` holds lowercased names; it is not changed here.
    """
    if lower_or_empty(base) not in used:
        return base
    for index in range(2, MAX_DEDUPE_SUFFIX + 1):
        suffix = f"_{index}"
        candidate = base[: max(1, MAX_COMMAND_NAME_LENGTH - len(suffix))] + suffix
        if lower_or_empty(candidate) not in used:
            return candidate
    # As OpenClaw: the fallback is not checked, so 1000 equal bases can still collide.
    return base[: max(1, MAX_COMMAND_NAME_LENGTH - 2)] + "_x"


def shorten(text: str, limit: int, *, keep_pairs: bool = False) -> str:
    """``text`` cut to ``limit`` UTF-16 units, ending with ``…`` when cut.

    OpenClaw cuts between the halves of a surrogate pair when the 99th unit is one
    (``keep_pairs=False`` reproduces that); ``keep_pairs=True`` cuts before the pair
    instead, for text that must encode as UTF-8.
    """
    if utf16_len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    head = utf16_slice(text, limit - 1)
    if keep_pairs and head and 0xD800 <= ord(head[-1]) <= 0xDBFF:
        head = head[:-1]
    return head + ELLIPSIS


@dataclass(frozen=True, slots=True)
class CommandSpec:
    """One slash command: ``/name`` runs the skill ``skill_name``."""

    name: str
    skill_name: str
    description: str
    dispatch: CommandDispatch | None = None
    #: The skill's source label (``openclaw-workspace`` …), for per-channel priority.
    source: str | None = None
    #: A Claude-bundle command: the message template sent to the model (``$ARGUMENTS``).
    prompt_template: str | None = None
    #: A Claude-bundle command: the ``commands/*.md`` file it came from.
    source_file: Path | None = None

    def to_json(self) -> dict[str, Any]:
        """OpenClaw's shape: ``{name, skillName, description, dispatch?, promptTemplate?,
        sourceFilePath?}``."""
        out: dict[str, Any] = {
            "name": self.name,
            "skillName": self.skill_name,
            "description": self.description,
        }
        if self.dispatch is not None:
            out["dispatch"] = self.dispatch.to_json()
        if self.prompt_template is not None:
            out["promptTemplate"] = self.prompt_template
        if self.source_file is not None:
            out["sourceFilePath"] = str(self.source_file)
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any], *, source: str | None = None) -> CommandSpec:
        raw = obj.get("dispatch")
        dispatch = None
        if isinstance(raw, dict) and isinstance(raw.get("toolName"), str):
            dispatch = CommandDispatch(
                tool_name=raw["toolName"],
                kind=str(raw.get("kind", "tool")),
                arg_mode=str(raw.get("argMode", "raw")),
            )
        template, file = obj.get("promptTemplate"), obj.get("sourceFilePath")
        return cls(
            name=str(obj.get("name", "")),
            skill_name=str(obj.get("skillName", "")),
            description=str(obj.get("description", "")),
            dispatch=dispatch,
            source=source,
            prompt_template=template if isinstance(template, str) else None,
            source_file=Path(file) if isinstance(file, str) else None,
        )


class Renamed(NamedTuple):
    """A command whose name is not its skill's name: ``base`` is the sanitised name,
    ``unique`` the one assigned (they differ when a collision forced a suffix)."""

    skill_name: str
    base: str
    unique: str

    @property
    def deduplicated(self) -> bool:
        return self.base != self.unique


@dataclass(frozen=True, slots=True)
class CommandSet:
    commands: tuple[CommandSpec, ...]
    renamed: tuple[Renamed, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()

    def get(self, name: str) -> CommandSpec | None:
        key = name.lower()
        return next((c for c in self.commands if c.name.lower() == key), None)

    def to_json(self) -> list[dict[str, Any]]:
        return [c.to_json() for c in self.commands]


def build_command_specs(
    skills: Iterable[Skill],
    *,
    reserved: Iterable[str] = DEFAULT_RESERVED_NAMES,
    used: set[str] | None = None,
    bundle_commands: Iterable[BundleCommand] = (),
) -> CommandSet:
    """§6.1: one command per user-invocable skill, in order, with unique names, then one
    per Claude-bundle command (:mod:`skillbook.bundle_commands`) under the same rules.

    ``reserved`` names (any case) are never assigned. ``used`` is a caller-owned set of
    lowercased names already taken (e.g. by another agent's workspace, §6.3); the names
    assigned here are added to it, so one set can be shared across several calls.
    Skills with ``disable-model-invocation`` are commands too (only hidden from the model).
    """
    builtin = {lower_or_empty(n) for n in reserved}
    namer = _Namer(builtin, set(builtin) | (used or set()), used)
    for skill in skills:
        if skill.invocation.user_invocable:
            namer.add(
                skill.name,
                skill.description,
                skill.file_path,
                dispatch=skill.dispatch,
                source=skill.source,
            )
    for command in bundle_commands:
        namer.add(
            command.raw_name,
            command.description,
            command.source_file,
            template=command.prompt_template,
        )
    return CommandSet(tuple(namer.commands), tuple(namer.renamed), tuple(namer.diags))


class _Namer:
    """Assigns unique names in order (the ``used`` set grows with every command)."""

    def __init__(self, builtin: set[str], taken: set[str], used: set[str] | None) -> None:
        self.builtin, self.taken, self.used = builtin, taken, used
        #: Lowercased names bundle commands took (any other taken name is a skill's).
        self.bundle_names: set[str] = set()
        self.commands: list[CommandSpec] = []
        self.renamed: list[Renamed] = []
        self.diags: list[Diagnostic] = []

    def add(
        self,
        name: str,
        description: str,
        path: Path,
        *,
        dispatch: CommandDispatch | None = None,
        source: str | None = None,
        template: str | None = None,
    ) -> None:
        what = "skill" if template is None else "bundle command"
        base = sanitize_command_name(name)
        unique = unique_command_name(base, self.taken)
        key = lower_or_empty(unique)
        self.taken.add(key)
        if template is not None:
            self.bundle_names.add(key)
        if self.used is not None:
            self.used.add(key)
        if unique != name:
            self.renamed.append(Renamed(name, base, unique))
        # Sanitising (`my-skill` → /my_skill) is routine; a suffix is worth telling.
        if unique != base:
            owner = (
                "a built-in command"
                if base in self.builtin
                else "a bundle command"
                if lower_or_empty(base) in self.bundle_names
                else "another skill"
            )
            self.diags.append(
                dg.info(
                    "command.renamed",
                    f"{what} {name!r} is the slash command /{unique} because /{base} "
                    f"belongs to {owner}; `/skill {name}` also works (rename the {what} "
                    "for a clean command)",
                    path=path,
                    skill=name,
                )
            )
        # Bundle descriptions are never blank (the reader falls back to the name).
        full = description if template is not None else (js_trim(description or "") or name)
        short = shorten(full, MAX_DESCRIPTION_LENGTH)
        if short != full:
            self.diags.append(
                dg.info(
                    "command.description-shortened",
                    f"the description of /{unique} has {utf16_len(full)} characters; chat menus "
                    f"show the first {MAX_DESCRIPTION_LENGTH - 1} and '…' (put the gist first)",
                    path=path,
                    skill=name,
                )
            )
        self.commands.append(
            CommandSpec(
                name=unique,
                skill_name=name,
                description=short,
                dispatch=dispatch,
                source=source,
                prompt_template=template,
                source_file=path if template is not None else None,
            )
        )


def dedupe_by_skill_name(commands: Iterable[CommandSpec]) -> tuple[CommandSpec, ...]:
    """§6.3: keep the first command per skill name (case-insensitive); blank names pass."""
    seen: set[str] = set()
    out: list[CommandSpec] = []
    for cmd in commands:
        key = lower_or_empty(cmd.skill_name)
        if key and key in seen:
            continue
        if key:
            seen.add(key)
        out.append(cmd)
    return tuple(out)
