"""``skills.experience``: session recording, learning from runs, review and staleness.

Private to :mod:`skillbook.config.file`, which validates the section when it reads a config
(errors name the key path, ``skills.experience.sessions.keep: expected int >= 1, got 0``)
and keeps the result as :attr:`SkillsConfig.experience`. The experience engine
(:mod:`skillbook.experience`) and the CLI read the values; nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Final, Literal

import msgspec

from skillbook.config.errors import convert
from skillbook.config.mode import Mode

__all__ = [
    "DEFAULT_KEEP_SESSIONS",
    "DEFAULT_MAX_AGE_DAYS",
    "DEFAULT_PROMOTE_MODE",
    "DEFAULT_REFINE",
    "DEFAULT_STALE_AFTER_DAYS",
    "REFINE_SETTINGS",
    "ExperienceConfig",
    "experience_config",
]

#: Sessions kept under ``<state dir>/sessions``; the oldest go first.
DEFAULT_KEEP_SESSIONS: Final = 200
#: Sessions older than this many days are removed when a new one is recorded.
DEFAULT_MAX_AGE_DAYS: Final = 30
#: ``skillbook check`` reports a skill unused for this many days as stale (0: never).
DEFAULT_STALE_AFTER_DAYS: Final = 90
#: The rules a draft must pass to be promoted.
DEFAULT_PROMOTE_MODE: Final = Mode.STRICT
#: Who writes a new draft's words: ``auto`` the run's model when there is one, else the
#: template; ``always`` the same, and a draft left to the template says why; ``never``
#: the template only (``--refine`` still asks the model for one call).
REFINE_SETTINGS: Final = ("auto", "always", "never")
DEFAULT_REFINE: Final = "auto"

_U = msgspec.UnsetType
_UNSET: Any = msgspec.UNSET
_PosInt = Annotated[int, msgspec.Meta(ge=1)]
_NonNegInt = Annotated[int, msgspec.Meta(ge=0)]
_Refine = Literal["auto", "always", "never"]


class _SessionsS(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    keep: _PosInt | _U = _UNSET
    max_age_days: _PosInt | _U = _UNSET


class _ExperienceS(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    record: bool | _U = _UNSET
    learn: bool | _U = _UNSET
    review: bool | _U = _UNSET
    promote_mode: Mode | _U = _UNSET
    refine: _Refine | _U = _UNSET
    sessions: _SessionsS | _U = _UNSET
    stale_after_days: _NonNegInt | _U = _UNSET
    pinned: list[str] | _U = _UNSET


@dataclass(frozen=True, slots=True)
class ExperienceConfig:
    """``skills.experience`` with its defaults filled in."""

    #: Record each ``run``/``chat`` turn under ``<state dir>/sessions``.
    record: bool = True
    #: Build draft skills from successful sessions.
    learn: bool = True
    #: Drafts wait for review; ``False`` promotes the ones that pass the gate at once.
    review: bool = True
    promote_mode: Mode = DEFAULT_PROMOTE_MODE
    #: ``auto``, ``always`` or ``never`` (:data:`REFINE_SETTINGS`).
    refine: str = DEFAULT_REFINE
    keep_sessions: int = DEFAULT_KEEP_SESSIONS
    max_age_days: int = DEFAULT_MAX_AGE_DAYS
    stale_after_days: int = DEFAULT_STALE_AFTER_DAYS
    #: Skills (names) never reported as stale.
    pinned: tuple[str, ...] = ()


def _or(value: Any, default: Any) -> Any:
    return default if value is msgspec.UNSET else value


def experience_config(value: Any, where: str, file: Path | None) -> ExperienceConfig:
    """Validate ``skills.experience``; raises :class:`~skillbook.errors.ConfigError`."""
    s = convert(value, _ExperienceS, ("skills", "experience"), where, file)
    sessions = s.sessions if not isinstance(s.sessions, msgspec.UnsetType) else _SessionsS()
    return ExperienceConfig(
        record=_or(s.record, True),
        learn=_or(s.learn, True),
        review=_or(s.review, True),
        promote_mode=_or(s.promote_mode, DEFAULT_PROMOTE_MODE),
        refine=_or(s.refine, DEFAULT_REFINE),
        keep_sessions=_or(sessions.keep, DEFAULT_KEEP_SESSIONS),
        max_age_days=_or(sessions.max_age_days, DEFAULT_MAX_AGE_DAYS),
        stale_after_days=_or(s.stale_after_days, DEFAULT_STALE_AFTER_DAYS),
        pinned=tuple(p.strip() for p in _or(s.pinned, []) if p.strip()),
    )
