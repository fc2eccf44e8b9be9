"""The skills status report (spec §10 ``SkillStatusEntry``; install options from
:mod:`skillbook.pipeline.gating.install_options`, re-exported here).

Input: loaded skills (all of them: the report annotates, it does not filter), the
config, a :class:`~skillbook.pipeline.gating.gate.Host`, a :class:`~skillbook.pipeline.gating.gate.BinaryLookup`
and optional remote eligibility. Output: a frozen :class:`StatusReport` whose
``to_json()`` is byte-for-byte the shape of OpenClaw's ``buildWorkspaceSkillStatus``
(same keys, same order, optional keys left out when undefined).

Eligibility comes from :func:`skillbook.pipeline.gating.gate.evaluate`, the evaluator the runtime
gate uses, so a skill reported ready is a skill the agent sees. The one knowing
difference from OpenClaw (an ``always: true`` skill on the wrong OS) is described
there. Config checks report ``{path, satisfied}`` only, never the value.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import compress, count, islice, repeat
from operator import is_
from pathlib import Path
from typing import Any

from skillbook.base.fast_init import fast_init
from skillbook.config.file import Config
from skillbook.config.profile import DEFAULT_PROFILE, GateRules, Profile
from skillbook.config.skill_filter import resolve_agent_filter
from skillbook.errors import SkillNotFound
from skillbook.model import Skill, Source
from skillbook.pipeline.cache.skill_memo import SkillMemo
from skillbook.pipeline.gating.gate import (
    BinaryLookup,
    ConfigCheck,
    Eligibility,
    EligibilityStatus,
    Host,
    RemoteEligibility,
    Requirements,
    evaluate,
    resolve_skill_source,
)
from skillbook.pipeline.gating.install_options import (
    InstallOption,
    InstallPreferences,
    normalize_install_options,
    resolve_install_preferences,
)

__all__ = ["StatusEntry", "StatusMemo", "StatusReport", "build_status", "evaluate_all"]


@fast_init
@dataclass(frozen=True, slots=True)
class Visibility:
    """What an agent gets of a skill (OpenClaw 2026.9's status fields)."""

    blocked_by_agent_filter: bool
    model_visible: bool
    user_invocable: bool
    command_visible: bool


@fast_init
@dataclass(frozen=True, slots=True)
class StatusEntry:
    name: str
    description: str
    source: str
    bundled: bool
    file_path: Path
    base_dir: Path
    skill_key: str
    primary_env: str | None
    emoji: str | None
    homepage: str | None
    eligibility: Eligibility
    install: tuple[InstallOption, ...] = ()
    #: Where a remote (MCP) skill came from; None for skills on disk.
    origin: str | None = None
    #: What the agent gets of the skill (2026.9's status fields); None under 2026.4.
    visibility: Visibility | None = None

    @property
    def ready(self) -> bool:
        """Whether the runtime gate admits the skill (prompt and commands)."""
        return self.eligibility.ready

    @property
    def eligible(self) -> bool:
        return self.eligibility.eligible

    @property
    def disabled(self) -> bool:
        return self.eligibility.disabled

    @property
    def blocked_by_allowlist(self) -> bool:
        return self.eligibility.blocked_by_allowlist

    @property
    def always(self) -> bool:
        return self.eligibility.always

    @property
    def requirements(self) -> Requirements:
        return self.eligibility.requirements

    @property
    def missing(self) -> Requirements:
        return self.eligibility.missing

    @property
    def config_checks(self) -> tuple[ConfigCheck, ...]:
        return self.eligibility.config_checks

    @property
    def status(self) -> EligibilityStatus:
        return self.eligibility.status

    def to_json(self) -> dict[str, Any]:
        """OpenClaw's ``SkillStatusEntry`` in its key order; undefined keys left out."""
        out: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "bundled": self.bundled,
            "filePath": str(self.file_path),
            "baseDir": str(self.base_dir),
            "skillKey": self.skill_key,
        }
        if self.primary_env is not None:
            out["primaryEnv"] = self.primary_env
        if self.emoji is not None:
            out["emoji"] = self.emoji
        if self.homepage is not None:
            out["homepage"] = self.homepage
        if self.origin is not None:
            out["origin"] = self.origin
        out.update(
            always=self.always,
            disabled=self.disabled,
            blockedByAllowlist=self.blocked_by_allowlist,
        )
        seen = self.visibility
        if seen is not None:
            out["blockedByAgentFilter"] = seen.blocked_by_agent_filter
        out["eligible"] = self.eligible
        if seen is not None:
            out.update(
                platformIncompatible=bool(self.missing.os),
                modelVisible=seen.model_visible,
                userInvocable=seen.user_invocable,
                commandVisible=seen.command_visible,
            )
        out.update(
            requirements=self.requirements.to_json(),
            missing=self.missing.to_json(),
            configChecks=[c.to_json() for c in self.config_checks],
            install=[o.to_json() for o in self.install],
        )
        return out


@dataclass(frozen=True, slots=True)
class StatusReport:
    workspace_dir: Path
    managed_skills_dir: Path
    skills: tuple[StatusEntry, ...] = ()
    #: 2026.9's report names the agent and its skill allowlist (when one is given).
    agent_id: str | None = None
    agent_skill_filter: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "workspaceDir": str(self.workspace_dir),
            "managedSkillsDir": str(self.managed_skills_dir),
        }
        if self.agent_id is not None:
            out["agentId"] = self.agent_id
        if self.agent_skill_filter is not None:
            out["agentSkillFilter"] = list(self.agent_skill_filter)
        out["skills"] = [s.to_json() for s in self.skills]
        return out

    def find(self, name: str) -> StatusEntry:
        """The entry named ``name``, else the one whose skill key it is; raises
        :class:`SkillNotFound`."""
        for entry in self.skills:
            if entry.name == name:
                return entry
        for entry in self.skills:
            if entry.skill_key == name:
                return entry
        raise SkillNotFound(name)

    def summary(self) -> dict[str, int]:
        """Counts as ``skills check`` prints them (blocked excludes disabled)."""
        s = self.skills
        return {
            "total": len(s),
            "eligible": sum(e.eligible for e in s),
            "disabled": sum(e.disabled for e in s),
            "blocked": sum(e.blocked_by_allowlist and not e.disabled for e in s),
            "missingRequirements": sum(
                not e.eligible and not e.disabled and not e.blocked_by_allowlist for e in s
            ),
        }


def build_status(
    skills: Iterable[Skill],
    *,
    config: Config,
    host: Host,
    bins: BinaryLookup,
    remote: RemoteEligibility | None = None,
    workspace_dir: Path,
    managed_dir: Path,
    bundled_names: frozenset[str] = frozenset(),
    platform: str | None = None,
    memo: StatusMemo | None = None,
    profile: Profile = DEFAULT_PROFILE,
    agent: str | None = None,
    eligibility: Sequence[Eligibility] | None = None,
) -> StatusReport:
    """Annotate every skill (no filter). ``platform`` overrides ``host.platform``;
    ``bundled_names`` marks skills of unknown source that share a bundled skill's name.
    ``memo`` reuses the entries of skill objects seen in an earlier build with the
    same inputs (see :class:`StatusMemo`). ``profile`` says the status rules and shape;
    ``agent`` (2026.9) names the agent whose allowlist the visibility fields apply.
    ``eligibility``: the verdicts :func:`evaluate_all` gave for ``skills`` with the
    same config, host, lookup, remote and profile (not evaluated again).
    """
    if platform is not None:
        host = replace(host, platform=platform)
    skills = tuple(skills)
    if eligibility is not None and (platform is not None or len(eligibility) != len(skills)):
        raise ValueError("eligibility must be evaluate_all()'s verdicts on these skills")
    given = _GivenVerdicts(skills, eligibility) if eligibility is not None else None
    prefs = resolve_install_preferences(config)
    rules = profile.gate
    allowed: tuple[str, ...] | None = None
    if rules.status_visibility_fields and agent is not None:
        chosen = resolve_agent_filter(config, agent)
        allowed = tuple(chosen) if chosen is not None else None

    def compute(skill: Skill) -> StatusEntry:
        verdict = given.of(skill) if given is not None else None
        entry = _entry(skill, config, host, bins, remote, prefs, bundled_names, rules, verdict)
        if not rules.status_visibility_fields:
            return entry
        return replace(entry, visibility=_visibility(skill, entry, allowed))

    if memo is None or remote is not None:
        # A remote node's bins change behind our back: never reuse its answers.
        entries = tuple(compute(s) for s in skills)
    else:
        memo.key_on((config, host, bins, bundled_names, profile, allowed))
        entries = memo.get_all(skills, compute)
    return StatusReport(
        workspace_dir=workspace_dir,
        managed_skills_dir=managed_dir,
        skills=entries,
        agent_id=agent if rules.status_visibility_fields else None,
        agent_skill_filter=allowed,
    )


class _GivenVerdicts:
    """The verdict :func:`evaluate_all` gave a skill of this build, found by position.

    The status memo asks for its misses in the skills' order (a rebuild after one edit
    misses once, a first build every time): each search is a C-level identity scan
    that starts where the last one ended, so a build's searches together pass over
    the skills once.
    """

    __slots__ = ("_next", "_skills", "_verdicts")

    def __init__(self, skills: tuple[Skill, ...], verdicts: Sequence[Eligibility]) -> None:
        self._skills = skills
        self._verdicts = verdicts
        self._next = 0

    def of(self, skill: Skill) -> Eligibility | None:
        start, skills = self._next, self._skills
        at = _position(skill, skills, start)
        if at is None and start:
            at = _position(skill, skills, 0)  # asked out of order: searched from the start
        if at is None:
            return None
        self._next = at + 1
        return self._verdicts[at]


def _position(skill: Skill, skills: tuple[Skill, ...], start: int) -> int | None:
    """Where ``skill`` itself (not an equal one) is in ``skills`` from ``start`` on."""
    same = map(is_, islice(skills, start, None), repeat(skill))
    return next(compress(count(start), same), None)


def _visibility(skill: Skill, entry: StatusEntry, allowed: tuple[str, ...] | None) -> Visibility:
    blocked = allowed is not None and skill.name not in allowed
    available = entry.eligible and not blocked
    user = skill.invocation.user_invocable
    return Visibility(
        blocked_by_agent_filter=blocked,
        model_visible=available and not skill.disable_model_invocation,
        user_invocable=user,
        command_visible=available and user,
    )


#: Status entries of unchanged skills (see :class:`SkillMemo`).
StatusMemo = SkillMemo[StatusEntry]


def evaluate_all(
    skills: Sequence[Skill],
    *,
    config: Config,
    host: Host,
    bins: BinaryLookup,
    remote: RemoteEligibility | None = None,
    profile: Profile = DEFAULT_PROFILE,
    memo: SkillMemo[Eligibility] | None = None,
) -> tuple[Eligibility, ...]:
    """The gate's verdict on every skill: all a prompt needs of the status report,
    about a third of its cost. Pass them to :func:`build_status` to reuse them."""
    rules = profile.gate

    def compute(skill: Skill) -> Eligibility:
        return evaluate(skill, config=config, host=host, bins=bins, remote=remote, rules=rules)

    if memo is None or remote is not None:
        return tuple(compute(s) for s in skills)
    memo.key_on((config, host, bins, profile))
    return memo.get_all(skills, compute)


def _entry(
    skill: Skill,
    config: Config,
    host: Host,
    bins: BinaryLookup,
    remote: RemoteEligibility | None,
    prefs: InstallPreferences,
    bundled_names: frozenset[str],
    rules: GateRules = DEFAULT_PROFILE.gate,
    verdict: Eligibility | None = None,
) -> StatusEntry:
    source = resolve_skill_source(skill)
    meta = skill.metadata
    fm = skill.frontmatter
    # `??` chains: a present-but-blank earlier value stops the chain (then trims to nothing).
    emoji = meta.emoji if meta is not None and meta.emoji is not None else fm.get("emoji")
    homepage: str | None = meta.homepage if meta is not None else None
    for key in ("homepage", "website", "url"):
        if homepage is None:
            homepage = fm.get(key)
    homepage = (homepage or "").strip() or None
    return StatusEntry(
        name=skill.name,
        description=skill.description,
        source=source,
        bundled=source == Source.BUNDLED.value
        or (source == "unknown" and skill.name in bundled_names),
        file_path=skill.file_path,
        base_dir=skill.base_dir,
        skill_key=skill.skill_key,
        primary_env=meta.primary_env if meta is not None else None,
        emoji=emoji or None,
        homepage=homepage,
        eligibility=verdict
        if verdict is not None
        else evaluate(skill, config=config, host=host, bins=bins, remote=remote, rules=rules),
        install=normalize_install_options(
            skill,
            prefs=prefs,
            platform=host.platform,
            bins=bins,
            unfiltered_index=rules.install_index_unfiltered,
        ),
        origin=skill.origin,
    )
