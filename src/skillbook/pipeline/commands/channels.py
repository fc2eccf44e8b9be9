"""Native command menus of chat platforms: fitting slash commands into their limits.

Input: the :class:`~skillbook.pipeline.commands.specs.CommandSpec` values of a workspace. Output: a
:class:`ChannelView` that Telegram or Discord accepts (at most 100 commands, name
and description limits, Telegram's payload budget), keeping the user's own skills
before bundled ones and saying what was left out and why. Users report menus that
crash or come up empty when a platform refuses an oversized list (openclaw#5787,
#15309, #66699). No I/O.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from skillbook import diagnostics as dg
from skillbook.base.js import utf16_len
from skillbook.diagnostics import Diagnostic
from skillbook.model import USER_SOURCES
from skillbook.pipeline.commands.specs import ELLIPSIS, CommandSet, CommandSpec, shorten


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
    omitted: dict[int, str] = {}
    candidates = _named(specs, limits, omitted)
    if priority:
        candidates.sort(key=lambda i: 0 if specs[i].source in USER_SOURCES else 1)
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
        texts = _fit_payload(specs, ranked, texts, limits.max_payload_chars, omitted)
    kept = sorted(ranked)
    out = [dataclasses.replace(specs[i], description=texts[i]) for i in kept]
    shortened = tuple(specs[i].name for i in kept if texts[i] != specs[i].description)
    gone = tuple(Omitted(specs[i], omitted[i]) for i in sorted(omitted))
    diags = [_omitted_diagnostic(o, limits) for o in gone]
    if shortened:
        diags.append(_shortened_diagnostic(shortened, limits))
    return ChannelView(tuple(out), gone, shortened, tuple(diags))


def _named(specs: list[CommandSpec], limits: ChannelLimits, omitted: dict[int, str]) -> list[int]:
    """The indices of the commands whose name the channel takes, first of each name;
    the others go into ``omitted`` with their reason."""
    pattern = re.compile(limits.name_pattern) if limits.name_pattern else None
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
    return candidates


def _fit_payload(
    specs: list[CommandSpec],
    ranked: list[int],
    texts: dict[int, str],
    max_payload_chars: int,
    omitted: dict[int, str],
) -> dict[int, str]:
    """Descriptions cut to the largest common length that fits the payload budget;
    commands are left out from the end of ``ranked`` (in place) only when even
    one-character descriptions do not fit."""
    while ranked:
        room = max_payload_chars - sum(utf16_len(specs[i].name) for i in ranked)
        cap = _common_cap([utf16_len(texts[i]) for i in ranked], room)
        if cap is not None:
            return {i: _fit(texts[i], cap) for i in ranked}
        omitted[ranked.pop()] = OMIT_PAYLOAD
    return texts


def _shortened_diagnostic(shortened: tuple[str, ...], limits: ChannelLimits) -> Diagnostic:
    return dg.info(
        "command.description-shortened",
        f"{len(shortened)} command description(s) were shortened to fit the "
        f"{limits.label} menu: {', '.join('/' + n for n in shortened[:10])}"
        + (" …" if len(shortened) > 10 else ""),
    )


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
