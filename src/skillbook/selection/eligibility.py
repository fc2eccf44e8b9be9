"""Why a loaded skill is not offered on this host: the gate's reasons, in words.

Input: a :class:`~skillbook.pipeline.book.SkillBook`. Output: one :class:`NotEligible` per
loaded skill that is not in ``book.eligible``, with the status word and the reasons
the gate found (a binary not on ``PATH``, an environment variable not set, a config
path not set, another OS, disabled, not in ``skills.allowBundled``, left out by the
agent's skill filter or by strict mode). ``skillbook select`` and
``skillbook eval select`` use it so that a request matching a skill this host cannot
run says *why* that skill was not chosen instead of staying silent or saying "not
found".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Names for annotations only: a fresh `select` (skillbook.cli.select_fast) uses
    # matching_ineligible without importing the gates.
    from skillbook.model import Skill
    from skillbook.pipeline.book import SkillBook
    from skillbook.pipeline.gating.gate import Requirements
    from skillbook.selection.selector import Selection

__all__ = ["NotEligible", "matching_ineligible", "not_eligible", "reasons_for"]


@dataclass(frozen=True, slots=True)
class NotEligible:
    """A loaded skill the gate (or a filter) keeps from the model, and why."""

    name: str
    #: ``needs-setup``, ``disabled``, ``blocked``, ``filtered`` (agent skill filter),
    #: ``excluded`` (strict mode).
    status: str
    reasons: tuple[str, ...]
    missing: Requirements | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "status": self.status}
        out["reasons"] = list(self.reasons)
        if self.missing is not None:
            out["missing"] = self.missing.to_json()
        return out


def reasons_for(missing: Requirements, *, platform: str) -> tuple[str, ...]:
    """The unmet requirements as sentences a user can act on."""
    out = [f"binary `{b}` is not on PATH" for b in missing.bins]
    if missing.any_bins:
        out.append("none of the binaries " + ", ".join(f"`{b}`" for b in missing.any_bins))
        out[-1] += " is on PATH"
    out.extend(
        f"environment variable {e} is not set (nor in skills.entries.<key>.env/apiKey)"
        for e in missing.env
    )
    out.extend(f"config `{c}` is not set" for c in missing.config)
    if missing.os:
        out.append(f"runs on {', '.join(missing.os)} only (this host: {platform})")
    return tuple(out)


def not_eligible(book: SkillBook) -> dict[str, NotEligible]:
    """Every loaded skill that is not eligible, by name, with its reasons."""
    eligible = {id(s) for s in book.eligible}
    out: dict[str, NotEligible] = {}
    for skill in book.excluded:
        out[skill.name] = NotEligible(
            skill.name, "excluded", ("left out by strict mode (see `skillbook validate`)",)
        )
    waiting = [s for s in book.skills if id(s) not in eligible and s.name not in out]
    if not waiting:
        return out
    from skillbook.pipeline.gating.gate import node_platform

    entries = {e.file_path: e for e in book.status.skills}
    platform = node_platform()
    for skill in waiting:
        entry = entries.get(skill.file_path)
        if entry is None:
            continue  # not loaded as a candidate (e.g. shadowed): nothing to explain
        if entry.ready:
            out[skill.name] = NotEligible(
                skill.name,
                "filtered",
                (f"not in the agent's skill filter ({_filter_source(book)})",),
            )
            continue
        reasons: list[str] = []
        if entry.disabled:
            reasons.append(f"disabled (skills.entries.{entry.skill_key}.enabled: false)")
        if entry.blocked_by_allowlist:
            reasons.append("a bundled skill not in skills.allowBundled")
        reasons.extend(reasons_for(entry.missing, platform=platform))
        missing = entry.missing if not entry.missing.is_empty else None
        out[skill.name] = NotEligible(skill.name, entry.status, tuple(reasons), missing)
    return out


def _filter_source(book: SkillBook) -> str:
    if book.agent:
        return f"agents.list[{book.agent}].skills"
    return "the skill filter"


def matching_ineligible(
    selection: Selection,
    eligible: Sequence[Skill],
    why: dict[str, NotEligible],
    *,
    top_k: int,
) -> list[tuple[float, NotEligible]]:
    """The ineligible skills a ranking over every loaded skill would have selected.

    ``selection`` ranks every loaded skill; a skill "matches" when it is among the
    ``top_k`` best and reaches the threshold, as :meth:`Selector.select` selects.
    """
    ok = {id(s) for s in eligible}
    out = []
    for c in selection.ranked[:top_k]:
        if c.score >= selection.threshold and id(c.skill) not in ok and c.name in why:
            out.append((c.score, why[c.name]))
    return out
