"""Skill filters (spec §4.3): which skills an agent may use.

Input: an explicit filter, or the config and an agent id. Output: the effective
filter (``None`` = unrestricted, ``[]`` = nothing) and the skills it keeps. A filter
holds skill *names* (not skill keys); agent ids are normalised as OpenClaw does
(``normalizeAgentId``), and an agent without its own ``skills`` key inherits
``agents.defaults.skills``. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Final

from skillbook.base.js import js_sort_key, js_string
from skillbook.config.file import Config
from skillbook.model import Skill

__all__ = [
    "DEFAULT_AGENT_ID",
    "apply_filter",
    "effective_skill_filter",
    "matches_skill_filter",
    "normalize_agent_id",
    "normalize_skill_filter",
    "resolve_agent_filter",
]

DEFAULT_AGENT_ID: Final = "main"
_VALID_AGENT_ID_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_INVALID_AGENT_CHARS_RE: Final = re.compile(r"[^a-z0-9_-]+")
_AGENT_ID_MAX: Final = 64


def normalize_skill_filter(skill_filter: Iterable[object] | None) -> list[str] | None:
    """``None`` stays ``None`` (unrestricted); else ``String()``, trim, drop blanks."""
    if skill_filter is None:
        return None
    return [s for s in (js_string(x).strip() for x in skill_filter) if s]


def _comparable(skill_filter: Iterable[object] | None) -> list[str] | None:
    normalized = normalize_skill_filter(skill_filter)
    if normalized is None:
        return None
    return sorted(set(normalized), key=js_sort_key)


def matches_skill_filter(a: Iterable[object] | None, b: Iterable[object] | None) -> bool:
    """Same filter? Normalised, de-duplicated and sorted; ``None`` equals only ``None``."""
    return _comparable(a) == _comparable(b)


def normalize_agent_id(value: str | None) -> str:
    """OpenClaw's ``normalizeAgentId``: trim, lowercase, invalid runs → ``-``, else ``main``."""
    trimmed = (value or "").strip()
    if not trimmed:
        return DEFAULT_AGENT_ID
    lowered = trimmed.lower()
    if _VALID_AGENT_ID_RE.fullmatch(trimmed):
        return lowered
    cleaned = _INVALID_AGENT_CHARS_RE.sub("-", lowered).strip("-")[:_AGENT_ID_MAX]
    return cleaned or DEFAULT_AGENT_ID


def resolve_agent_filter(config: Config, agent_id: str | None) -> list[str] | None:
    """The agent's own ``skills`` list if it has the key (``[]`` = none), else the defaults."""
    wanted = normalize_agent_id(agent_id)
    for agent in config.agents.agents:
        if normalize_agent_id(agent.id) == wanted:
            if agent.skills is not None:
                return normalize_skill_filter(agent.skills)
            break
    return normalize_skill_filter(config.agents.default_skills)


def effective_skill_filter(
    skill_filter: Iterable[object] | None = None,
    *,
    config: Config | None = None,
    agent_id: str | None = None,
) -> list[str] | None:
    """An explicit filter wins; else the agent filter when both config and agent are given."""
    if skill_filter is not None:
        return normalize_skill_filter(skill_filter)
    if config is not None and agent_id is not None:
        return resolve_agent_filter(config, agent_id)
    return None


def apply_filter(skills: Iterable[Skill], skill_filter: Sequence[str] | None) -> list[Skill]:
    """Keep skills whose *name* (not skill key) is listed; ``None`` keeps all, ``[]`` none."""
    if skill_filter is None:
        return list(skills)
    allowed = set(skill_filter)
    return [s for s in skills if s.name in allowed]
