"""Slash commands: skills a user can call by name in chat (spec §6).

Input: eligible, filtered :class:`~skillbook.model.Skill` values in load order (gating
happens before this stage). Output: a :class:`CommandSet` whose specs equal OpenClaw's
``buildWorkspaceSkillCommandSpecs`` for the same skills and reserved names, the
:class:`Invocation` a chat message resolves to, and what a dispatch sends on (a
rewritten message for the model or the arguments of a tool call). Channel menus
(Telegram, Discord) are in :mod:`skillbook.pipeline.commands.channels`. No I/O.

Lengths are JavaScript string lengths (UTF-16 code units), as OpenClaw counts them;
whitespace and trimming follow JavaScript's ``\\s`` and ``String.prototype.trim``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from skillbook import diagnostics as dg
from skillbook.base.js import JS_WHITESPACE, js_trim, utf16_len, utf16_slice
from skillbook.config.profile import DEFAULT_PROFILE, Profile
from skillbook.diagnostics import Diagnostic
from skillbook.model import CommandDispatch, Skill

if TYPE_CHECKING:
    from skillbook.pipeline.commands.bundle_commands import BundleCommand

#: OpenClaw's built-in chat commands (native names and ``/`` text aliases, lowercased):
#: a skill may not take one of these names (§6.2, ``listReservedChatSlashCommandNames``).
#: OpenClaw also reserves ``dock_<channel>``/``dock-<channel>`` for every loaded channel
#: plugin with native commands; pass those through :func:`reserved_names` if you have them.
#: The names of the default compat profile (:mod:`skillbook.config.profile` holds each release's).
DEFAULT_RESERVED_NAMES: frozenset[str] = DEFAULT_PROFILE.commands.reserved_names
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
    #: 2026.9's extra fields (None under 2026.4): the title, the real SKILL.md path,
    #: whether the model sees the skill, and the source family (workspace/bundled/unknown).
    display_name: str | None = None
    skill_file: str | None = None
    model_visible: bool | None = None
    skill_source: str | None = None

    def to_json(self) -> dict[str, Any]:
        """OpenClaw's shape: ``{name, skillName, description, dispatch?, promptTemplate?,
        sourceFilePath?}``; 2026.9 adds ``displayName``, ``skillFile``, ``modelVisible``
        and ``skillSource`` where it has them."""
        out: dict[str, Any] = {"name": self.name}
        if self.display_name is not None:
            out["displayName"] = self.display_name
        if self.skill_file is not None:
            out["skillFile"] = self.skill_file
        out["skillName"] = self.skill_name
        out["description"] = self.description
        if self.model_visible is not None:
            out["modelVisible"] = self.model_visible
        if self.skill_source is not None:
            out["skillSource"] = self.skill_source
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
    reserved: Iterable[str] | None = None,
    used: set[str] | None = None,
    bundle_commands: Iterable[BundleCommand] = (),
    profile: Profile = DEFAULT_PROFILE,
) -> CommandSet:
    """§6.1: one command per user-invocable skill, in order, with unique names, then one
    per Claude-bundle command (:mod:`skillbook.pipeline.commands.bundle_commands`) under the same rules.

    ``reserved`` names (any case) are never assigned. ``used`` is a caller-owned set of
    lowercased names already taken (e.g. by another agent's workspace, §6.3); the names
    assigned here are added to it, so one set can be shared across several calls.
    Skills with ``disable-model-invocation`` are commands too (only hidden from the model).
    ``profile`` says the description limit, the extra fields and the default ``reserved``.
    """
    rules = profile.commands
    names = rules.reserved_names if reserved is None else reserved
    builtin = {lower_or_empty(n) for n in names}
    namer = _Namer(builtin, set(builtin) | (used or set()), used, rules.description_max)
    for skill in skills:
        if skill.invocation.user_invocable:
            namer.add(
                skill.name,
                skill.description,
                skill.file_path,
                dispatch=skill.dispatch,
                source=skill.source,
                rich=skill if rules.rich_specs else None,
            )
    for command in bundle_commands:
        namer.add(
            command.raw_name,
            command.description,
            command.source_file,
            template=command.prompt_template,
            bundle_rich=rules.rich_specs,
        )
    return CommandSet(tuple(namer.commands), tuple(namer.renamed), tuple(namer.diags))


class _Namer:
    """Assigns unique names in order (the ``used`` set grows with every command)."""

    def __init__(
        self,
        builtin: set[str],
        taken: set[str],
        used: set[str] | None,
        description_max: int | None = MAX_DESCRIPTION_LENGTH,
    ) -> None:
        self.builtin, self.taken, self.used = builtin, taken, used
        self.description_max = description_max
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
        rich: Skill | None = None,
        bundle_rich: bool = False,
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
        limit = self.description_max
        short = full if limit is None else shorten(full, limit)
        if short != full and limit is not None:
            self.diags.append(
                dg.info(
                    "command.description-shortened",
                    f"the description of /{unique} has {utf16_len(full)} characters; chat menus "
                    f"show the first {limit - 1} and '…' (put the gist first)",
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
                display_name=display_name(rich) if rich is not None else None,
                skill_file=os.path.realpath(rich.file_path) if rich is not None else None,
                model_visible=(not rich.disable_model_invocation)
                if rich is not None
                else (False if bundle_rich else None),
                skill_source=source_family(rich.source) if rich is not None else None,
            )
        )


_TITLE = re.compile(
    f"^#[{JS_WHITESPACE}]+([^\n\r\u2028\u2029]+?)[{JS_WHITESPACE}]*#*[{JS_WHITESPACE}]*$",
    re.MULTILINE,
)
_WORD_BREAKS = re.compile(r"[-_]+")
_BUNDLED_SOURCES = frozenset({"bundled", "openclaw-bundled", "openclaw-custodian"})
_WORKSPACE_SOURCES = frozenset(
    {
        "workspace",
        "openclaw-workspace",
        "openclaw-workshop",
        "openclaw-managed",
        "openclaw-extra",
        "agents-skills-personal",
        "agents-skills-project",
    }
)


def display_name(skill: Skill) -> str:
    """OpenClaw 2026.9's ``resolveSkillDisplayName``: the body's first ``# `` heading,
    else the name with ``-``/``_`` breaks as spaces and each word capitalised."""
    match = _TITLE.search(skill.parsed.body)
    title = js_trim(match.group(1)) if match is not None else ""
    if title:
        return title
    fallback = skill.frontmatter.get("name") or skill.name
    words = [w for w in _WORD_BREAKS.split(js_trim(fallback)) if w]
    return " ".join(w[:1].upper() + w[1:] for w in words) or fallback


def source_family(source: str) -> str:
    """``resolveSkillTelemetrySource``: ``bundled``, ``workspace`` or ``unknown``."""
    label = js_trim(source)
    if label in _BUNDLED_SOURCES:
        return "bundled"
    return "workspace" if label in _WORKSPACE_SOURCES else "unknown"
