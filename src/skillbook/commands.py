"""Slash commands: skills a user can call by name in chat (spec §6).

Input: eligible, filtered :class:`~skillbook.model.Skill` values in load order (gating
happens before this stage). Output: a :class:`CommandSet` whose specs equal OpenClaw's
``buildWorkspaceSkillCommandSpecs`` for the same skills and reserved names, the
:class:`Invocation` a chat message resolves to, what a dispatch sends on (a rewritten
message for the model or the arguments of a tool call), and per-channel views that
fit the menu limits of Telegram and Discord. No I/O.

Lengths are JavaScript string lengths (UTF-16 code units), as OpenClaw counts them;
whitespace and trimming follow JavaScript's ``\\s`` and ``String.prototype.trim``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from skillbook import diagnostics as dg
from skillbook._js import JS_WHITESPACE, js_trim, utf16_len, utf16_slice
from skillbook.diagnostics import Diagnostic
from skillbook.model import CommandDispatch, Skill, Source

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
#: The command that invokes any skill by name: ``/skill <name> [args]``.
SKILL_COMMAND = "skill"

_WS = f"[{JS_WHITESPACE}]"
_NOT_WS = f"[^{JS_WHITESPACE}]"
_COMMAND_RE = re.compile(rf"/({_NOT_WS}+)(?:{_WS}+([\s\S]+))?")
_TOKEN_RE = re.compile(rf"({_NOT_WS}+)(?:{_WS}+([\s\S]+))?")
_LOOKUP_SEPARATORS = re.compile(rf"(?:{_WS}|_)+")
_NOT_NAME_CHARS = re.compile(r"[^a-z0-9_]+")
_UNDERSCORES = re.compile(r"_+")
#: Sources the user put there; :func:`channel_view` keeps their commands first.
_USER_SOURCES = frozenset({Source.WORKSPACE, Source.PROJECT, Source.PERSONAL, Source.MANAGED})


def _lower_or_empty(value: str | None) -> str:
    # OpenClaw's normalizeLowercaseStringOrEmpty: trim, then lowercase.
    return js_trim(value).lower() if isinstance(value, str) else ""


def reserved_names(
    extra: Iterable[str] = (), *, base: Iterable[str] = DEFAULT_RESERVED_NAMES
) -> frozenset[str]:
    """``base`` plus ``extra`` names, trimmed and lowercased, blanks dropped."""
    names = {_lower_or_empty(n) for n in base} | {_lower_or_empty(n) for n in extra}
    names.discard("")
    return frozenset(names)


def sanitize_command_name(name: str) -> str:
    """§6.1: lowercase, ``[a-z0-9_]`` only, single ``_`` between words, at most 32 chars."""
    cleaned = _NOT_NAME_CHARS.sub("_", _lower_or_empty(name))
    cleaned = _UNDERSCORES.sub("_", cleaned).strip("_")
    return cleaned[:MAX_COMMAND_NAME_LENGTH] or FALLBACK_COMMAND_NAME


def unique_command_name(base: str, used: set[str] | frozenset[str]) -> str:
    """``base``, else ``base_2`` … ``base_999`` (cut so it stays ≤ 32), else ``base[:30]_x``.

    ``used`` holds lowercased names; it is not changed here.
    """
    if _lower_or_empty(base) not in used:
        return base
    for index in range(2, MAX_DEDUPE_SUFFIX + 1):
        suffix = f"_{index}"
        candidate = base[: max(1, MAX_COMMAND_NAME_LENGTH - len(suffix))] + suffix
        if _lower_or_empty(candidate) not in used:
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

    def to_json(self) -> dict[str, Any]:
        """OpenClaw's shape: ``{name, skillName, description, dispatch?}``."""
        out: dict[str, Any] = {
            "name": self.name,
            "skillName": self.skill_name,
            "description": self.description,
        }
        if self.dispatch is not None:
            out["dispatch"] = self.dispatch.to_json()
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
        return cls(
            name=str(obj.get("name", "")),
            skill_name=str(obj.get("skillName", "")),
            description=str(obj.get("description", "")),
            dispatch=dispatch,
            source=source,
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
) -> CommandSet:
    """§6.1: one command per user-invocable skill, in order, with unique names.

    ``reserved`` names (any case) are never assigned. ``used`` is a caller-owned set of
    lowercased names already taken (e.g. by another agent's workspace, §6.3); the names
    assigned here are added to it, so one set can be shared across several calls.
    Skills with ``disable-model-invocation`` are commands too (only hidden from the model).
    """
    builtin = {_lower_or_empty(n) for n in reserved}
    taken = set(builtin) | (used or set())
    commands: list[CommandSpec] = []
    renamed: list[Renamed] = []
    diags: list[Diagnostic] = []
    for skill in skills:
        if not skill.invocation.user_invocable:
            continue
        base = sanitize_command_name(skill.name)
        unique = unique_command_name(base, taken)
        key = _lower_or_empty(unique)
        taken.add(key)
        if used is not None:
            used.add(key)
        if unique != skill.name:
            renamed.append(Renamed(skill.name, base, unique))
        # Sanitising (`my-skill` → /my_skill) is routine; a suffix is worth telling.
        if unique != base:
            owner = "a built-in command" if base in builtin else "another skill"
            diags.append(
                dg.info(
                    "command.renamed",
                    f"skill {skill.name!r} is the slash command /{unique} because /{base} "
                    f"belongs to {owner}; `/skill {skill.name}` also works (rename the skill "
                    "for a clean command)",
                    path=skill.file_path,
                    skill=skill.name,
                )
            )
        full = js_trim(skill.description or "") or skill.name
        description = shorten(full, MAX_DESCRIPTION_LENGTH)
        if description != full:
            diags.append(
                dg.info(
                    "command.description-shortened",
                    f"the description of /{unique} has {utf16_len(full)} characters; chat menus "
                    f"show the first {MAX_DESCRIPTION_LENGTH - 1} and '…' (put the gist first)",
                    path=skill.file_path,
                    skill=skill.name,
                )
            )
        commands.append(
            CommandSpec(
                name=unique,
                skill_name=skill.name,
                description=description,
                dispatch=skill.dispatch,
                source=skill.source,
            )
        )
    return CommandSet(tuple(commands), tuple(renamed), tuple(diags))


def dedupe_by_skill_name(commands: Iterable[CommandSpec]) -> tuple[CommandSpec, ...]:
    """§6.3: keep the first command per skill name (case-insensitive); blank names pass."""
    seen: set[str] = set()
    out: list[CommandSpec] = []
    for cmd in commands:
        key = _lower_or_empty(cmd.skill_name)
        if key and key in seen:
            continue
        if key:
            seen.add(key)
        out.append(cmd)
    return tuple(out)


# --------------------------------------------------------------------------- invocation


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
    return _LOOKUP_SEPARATORS.sub("-", _lower_or_empty(value))


def find_command(commands: Iterable[CommandSpec], token: str) -> CommandSpec | None:
    """The ``/skill <token>`` lookup: name or skill name, case-insensitive, and with
    runs of whitespace and ``_`` read as ``-`` (so ``demo-skill`` finds ``demo_skill``)."""
    lowered = _lower_or_empty(token)
    if not lowered:
        return None
    normalized = _lookup_key(token)
    for cmd in commands:
        if lowered in (_lower_or_empty(cmd.name), _lower_or_empty(cmd.skill_name)):
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
    name = _lower_or_empty(match.group(1))
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
        if _lower_or_empty(cmd.name) == name:
            return Invocation(cmd, _args(rest))
    return None


def _args(raw: str | None) -> str | None:
    return (js_trim(raw) if raw is not None else "") or None


def rewrite_for_model(invocation: Invocation) -> str:
    """§6.5: the message body the model gets instead of the slash command."""
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


# --------------------------------------------------------------------------- channels


@dataclass(frozen=True, slots=True)
class ChannelLimits:
    """What a chat platform's native command menu accepts."""

    max_commands: int
    max_name_len: int
    max_description_len: int
    #: Budget for the sum of every name and description length, or None.
    max_payload_chars: int | None = None
    #: A full-match pattern names must satisfy, or None to accept any name.
    name_pattern: str | None = None
    label: str = "channel"


#: Bot API ``setMyCommands``: 100 commands, names ``[a-z0-9_]{1,32}``, descriptions up to
#: 256; the whole menu fails (BOT_COMMANDS_TOO_MUCH) past about 5,700 characters of text.
TELEGRAM = ChannelLimits(100, 32, 256, 5_700, name_pattern=r"[a-z0-9_]+", label="Telegram")
#: Application commands: 100 per scope, 32-character names, 100-character descriptions.
DISCORD = ChannelLimits(100, 32, 100, None, label="Discord")

OMIT_INVALID_NAME = "invalid-name"
OMIT_DUPLICATE_NAME = "duplicate-name"
OMIT_MAX_COMMANDS = "max-commands"
OMIT_PAYLOAD = "payload-budget"


class Omitted(NamedTuple):
    command: CommandSpec
    reason: str  # one of the OMIT_* values


@dataclass(frozen=True, slots=True)
class ChannelView:
    """The commands a channel's menu gets (descriptions fitted), and what was left out."""

    commands: tuple[CommandSpec, ...]
    omitted: tuple[Omitted, ...] = ()
    #: Names of commands whose description was shortened for this channel.
    shortened: tuple[str, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()


def channel_view(
    commands: CommandSet | Sequence[CommandSpec], limits: ChannelLimits, *, priority: bool = True
) -> ChannelView:
    """Fit ``commands`` into one channel's menu.

    Names the channel refuses and repeated names are left out first. When more remain
    than the channel takes, commands of skills the user put there (workspace, project,
    personal, managed) are kept before bundled, extra and other ones (``priority=True``)
    or simply the first ones are kept. Descriptions are cut to the channel's limit and,
    when a payload budget applies, to the largest common length that fits it; only when
    even one-character descriptions do not fit are more commands left out. Kept
    commands stay in their input order.
    """
    specs = list(commands.commands if isinstance(commands, CommandSet) else commands)
    pattern = re.compile(limits.name_pattern) if limits.name_pattern else None
    omitted: dict[int, str] = {}
    seen: set[str] = set()
    candidates: list[int] = []
    for i, cmd in enumerate(specs):
        key = cmd.name.lower()
        if (
            not cmd.name
            or len(cmd.name) > limits.max_name_len
            or (pattern and not pattern.fullmatch(cmd.name))
        ):
            omitted[i] = OMIT_INVALID_NAME
        elif key in seen:
            omitted[i] = OMIT_DUPLICATE_NAME
        else:
            seen.add(key)
            candidates.append(i)
    if priority:
        candidates.sort(key=lambda i: 0 if specs[i].source in _USER_SOURCES else 1)
    room_for = max(0, limits.max_commands)
    for i in candidates[room_for:]:
        omitted[i] = OMIT_MAX_COMMANDS
    ranked = candidates[:room_for]
    texts = {
        i: _fit(
            specs[i].description or specs[i].skill_name or specs[i].name, limits.max_description_len
        )
        for i in ranked
    }
    if limits.max_payload_chars is not None:
        while ranked:
            room = limits.max_payload_chars - sum(utf16_len(specs[i].name) for i in ranked)
            cap = _common_cap([utf16_len(texts[i]) for i in ranked], room)
            if cap is not None:
                texts = {i: _fit(texts[i], cap) for i in ranked}
                break
            omitted[ranked.pop()] = OMIT_PAYLOAD
    kept = sorted(ranked)
    out = [dataclasses.replace(specs[i], description=texts[i]) for i in kept]
    shortened = tuple(specs[i].name for i in kept if texts[i] != specs[i].description)
    gone = tuple(Omitted(specs[i], omitted[i]) for i in sorted(omitted))
    diags = [_omitted_diagnostic(o, limits) for o in gone]
    if shortened:
        diags.append(
            dg.info(
                "command.description-shortened",
                f"{len(shortened)} command description(s) were shortened to fit the "
                f"{limits.label} menu: {', '.join('/' + n for n in shortened[:10])}"
                + (" …" if len(shortened) > 10 else ""),
            )
        )
    return ChannelView(tuple(out), gone, shortened, tuple(diags))


def _fit(text: str, limit: int) -> str:
    # Menus are sent as UTF-8: a lone surrogate (from OpenClaw's 100-unit cut) would not encode.
    clean = "".join(ch for ch in text if not 0xD800 <= ord(ch) <= 0xDFFF)
    if limit == 1 and utf16_len(clean) > 1:
        return clean[0] if utf16_len(clean[0]) == 1 else ELLIPSIS
    return shorten(clean, limit, keep_pairs=True)


def _common_cap(lengths: list[int], room: int) -> int | None:
    """The largest cap c ≥ 1 with sum(min(length, c)) ≤ room, or None if even 1 is too much."""
    if sum(lengths) <= room:
        return max(lengths, default=1)
    if len(lengths) > room:
        return None
    lo, hi = 1, max(lengths)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if sum(min(n, mid) for n in lengths) <= room:
            lo = mid
        else:
            hi = mid - 1
    return lo


_OMIT_WHY = {
    OMIT_INVALID_NAME: "its name is not accepted there",
    OMIT_DUPLICATE_NAME: "an earlier command has the same name",
    OMIT_MAX_COMMANDS: "the menu is full",
    OMIT_PAYLOAD: "the menu text budget is used up",
}


def _omitted_diagnostic(item: Omitted, limits: ChannelLimits) -> Diagnostic:
    cmd = item.command
    return dg.warning(
        "command.channel-omitted",
        f"/{cmd.name} (skill {cmd.skill_name!r}) is not in the {limits.label} menu: "
        f"{_OMIT_WHY.get(item.reason, item.reason)}; `/skill {cmd.skill_name}` still works. "
        "Set `user-invocable: false` on skills that need no command to make room.",
        skill=cmd.skill_name or None,
    )
