"""OpenPocket's trigger hints: ``metadata.openclaw.triggers.any | all | none``.

Input: a :class:`~skillbook.model.Skill`. Output: its :class:`Triggers` (phrase lists)
and, for a request, a :class:`TriggerMatch` the selector turns into a boost (``any``
or ``all`` matched) or a veto (a ``none`` phrase matched). OpenPocket's legacy mode
reads the same object; a top-level ``triggers:`` list of phrases (as some ClawHub
skills write it) counts as ``any``. Entries that are not phrases (OpenClaw-unrelated
``{regex, handler}`` maps) are ignored and reported, never guessed at.

Matching is lexical and forgiving in the ways a person expects: case-insensitive,
on word tokens, a phrase matches when its words appear in order and adjacent in the
request. Nothing here touches the disk.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from skillbook import diagnostics as diag
from skillbook.diagnostics import Diagnostic
from skillbook.model import Skill
from skillbook.selection.phrases import match_phrases, words

__all__ = ["TriggerMatch", "Triggers", "match_triggers", "skill_triggers"]

#: Longest phrase list read from one key; a skill cannot make the selector slow.
MAX_PHRASES: Final = 64


@dataclass(frozen=True, slots=True)
class Triggers:
    """A skill's trigger phrases, each already split into words."""

    any: tuple[tuple[str, ...], ...] = ()
    all: tuple[tuple[str, ...], ...] = ()
    none: tuple[tuple[str, ...], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.any or self.all or self.none)

    def to_json(self) -> dict[str, list[str]]:
        return {k: [" ".join(p) for p in getattr(self, k)] for k in ("any", "all", "none")}


@dataclass(frozen=True, slots=True)
class TriggerMatch:
    """What a request did to one skill's triggers."""

    boosted: bool = False
    vetoed: bool = False
    #: The phrases that matched, for explanations (``any:…``, ``all``, ``none:…``).
    reasons: tuple[str, ...] = ()


def _phrases(
    value: Any, key: str, skill: Skill, found: list[Diagnostic]
) -> tuple[tuple[str, ...], ...]:
    items: Sequence[Any] = [value] if isinstance(value, str) else value
    if not isinstance(items, Sequence):
        found.append(_ignored(skill, key, "expected a list of phrases"))
        return ()
    out: list[tuple[str, ...]] = []
    for item in items[:MAX_PHRASES]:
        phrase = words(item) if isinstance(item, str) else ()
        if phrase:
            out.append(phrase)
        else:
            found.append(_ignored(skill, key, f"{str(item)[:60]!r} is not a phrase"))
    if len(items) > MAX_PHRASES:
        found.append(_ignored(skill, key, f"only the first {MAX_PHRASES} phrases are read"))
    return tuple(out)


def _ignored(skill: Skill, key: str, why: str) -> Diagnostic:
    return diag.info(
        "selection.trigger-ignored",
        f"{key}: {why}; trigger hints are lists of words or phrases.",
        path=skill.file_path,
        line=skill.frontmatter.line_of(key.split(".")[0]),
        skill=skill.name,
    )


def skill_triggers(skill: Skill) -> tuple[Triggers, tuple[Diagnostic, ...]]:
    """The trigger hints of ``skill`` and what could not be read of them."""
    found: list[Diagnostic] = []
    meta = skill.metadata
    raw = meta.raw.get("triggers") if meta is not None else None
    top = skill.frontmatter.data.get("triggers")
    any_: list[tuple[str, ...]] = []
    all_: tuple[tuple[str, ...], ...] = ()
    none: tuple[tuple[str, ...], ...] = ()
    if isinstance(raw, Mapping):
        any_ += _phrases(raw.get("any", ()), "metadata.openclaw.triggers.any", skill, found)
        all_ = _phrases(raw.get("all", ()), "metadata.openclaw.triggers.all", skill, found)
        none = _phrases(raw.get("none", ()), "metadata.openclaw.triggers.none", skill, found)
    elif raw is not None:
        any_ += _phrases(raw, "metadata.openclaw.triggers", skill, found)
    if top is not None and not isinstance(top, Mapping):
        any_ += _phrases(top, "triggers", skill, found)
    elif isinstance(top, Mapping):
        found.append(
            _ignored(skill, "triggers", "a map here is not read (use metadata.openclaw.triggers)")
        )
    return Triggers(tuple(dict.fromkeys(any_)), all_, none), tuple(found)


def match_triggers(triggers: Triggers, request: Sequence[str]) -> TriggerMatch:
    """Boost when an ``any`` phrase or every ``all`` phrase occurs; veto on a ``none`` phrase."""
    boosted, vetoed, reasons = match_phrases(triggers.any, triggers.all, triggers.none, request)
    return TriggerMatch(boosted=boosted, vetoed=vetoed, reasons=reasons)
