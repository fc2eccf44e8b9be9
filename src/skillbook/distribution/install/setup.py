"""``skillbook setup``: plan an install, then run it (spec §8.3 plus skillbook's guards).

:func:`plan_setup` decides everything without running anything: which installer
(:mod:`~skillbook.distribution.install.select`), whether its binaries are already there, whether
the policy allows it, what the security scan says (:mod:`~skillbook.distribution.scan_gate`),
the trust warning of §8.3 step 5, and the exact commands or download plan (with the
uv/go bootstraps and the opt-in apt/pip fallbacks). :func:`run_setup` carries the
plan out (after the caller's consent: the CLI asks), records a forced install in the
audit log, and evaluates the skill's status again with a fresh PATH lookup.
:func:`install_skill` is OpenClaw's ``installSkill`` in one call.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from skillbook.distribution import InstallError
from skillbook.distribution.install.argv import build_install_argv
from skillbook.distribution.install.bootstrap import plan_command_steps
from skillbook.distribution.install.download import DownloadOptions, plan_download
from skillbook.distribution.install.fallback import describe_unknown, fallback_steps, steps_for_raw
from skillbook.distribution.install.machine import Machine
from skillbook.distribution.install.plan import DownloadPlan, Refusal, Step
from skillbook.distribution.install.policy import InstallPolicy
from skillbook.distribution.install.select import Choice, choose
from skillbook.distribution.install.tools_dir import tools_root
from skillbook.distribution.scan_gate import ScanVerdict, scan_for_install
from skillbook.errors import SkillNotFound
from skillbook.model import InstallSpec, Skill, Source
from skillbook.pipeline.book import SkillBook
from skillbook.pipeline.gating.gate import BinaryLookup, resolve_skill_source
from skillbook.pipeline.gating.install_options import resolve_install_preferences
from skillbook.pipeline.gating.status import StatusEntry

__all__ = [
    "DEFAULT_TIMEOUT_MS",
    "MAX_TIMEOUT_MS",
    "MIN_TIMEOUT_MS",
    "TRUSTED_SOURCES",
    "SetupOptions",
    "SetupPlan",
    "clamp_timeout",
    "plan_setup",
]

DEFAULT_TIMEOUT_MS: Final = 300_000
MIN_TIMEOUT_MS: Final = 1_000
MAX_TIMEOUT_MS: Final = 900_000
#: Sources whose install recipes need no warning (§8.3 step 5).
TRUSTED_SOURCES: Final = frozenset({Source.BUNDLED, Source.MANAGED, Source.EXTRA})


def clamp_timeout(timeout_ms: int | None) -> int:
    """§8.3 step 1: 300 s by default, clamped to 1 s … 15 min."""
    value = DEFAULT_TIMEOUT_MS if timeout_ms is None else timeout_ms
    return min(max(value, MIN_TIMEOUT_MS), MAX_TIMEOUT_MS)


@dataclass(frozen=True, slots=True)
class SetupOptions:
    timeout_ms: int | None = None
    #: ``--dangerously-force --reason TEXT``: install despite critical findings (audited).
    force_reason: str | None = None
    #: The policy; None = ``skills.install`` of the book's config plus ``fallbacks``.
    policy: InstallPolicy | None = None
    #: ``--fallback apt|pip`` for this run.
    fallbacks: tuple[str, ...] = ()
    download: DownloadOptions | None = None
    #: The machine to install on; None = this process's.
    machine: Machine | None = None


@dataclass(frozen=True, slots=True)
class SetupPlan:
    """What :func:`run_setup` would do; ``refusal`` set means it will not run."""

    skill: Skill
    before: StatusEntry
    install_id: str | None
    kind: str
    label: str
    timeout_ms: int
    steps: tuple[Step, ...] = ()
    download: DownloadPlan | None = None
    refusal: Refusal | None = None
    scan: ScanVerdict | None = None
    warnings: tuple[str, ...] = ()
    fallback: str | None = None
    force_reason: str | None = None
    book: SkillBook = field(repr=False, compare=False, kw_only=True)
    machine: Machine = field(repr=False, compare=False, kw_only=True)
    policy: InstallPolicy = field(repr=False, compare=False, kw_only=True)
    download_options: DownloadOptions = field(repr=False, compare=False, kw_only=True)

    @property
    def runnable(self) -> bool:
        return self.refusal is None

    def to_json(self) -> dict[str, Any]:
        return {
            "skill": self.skill.name,
            "source": resolve_skill_source(self.skill),
            "installId": self.install_id,
            "kind": self.kind or None,
            "label": self.label or None,
            "status": self.before.status,
            "steps": [s.to_json() for s in self.steps],
            "download": self.download.to_json() if self.download else None,
            "fallback": self.fallback,
            "scan": self.scan.to_json() if self.scan else None,
            "warnings": list(self.warnings),
            "refusal": self.refusal.to_json() if self.refusal else None,
        }


def _refuse(exc: InstallError, *, stderr: bool = False) -> Refusal:
    return Refusal(exc.code, exc.message, stderr=exc.message if stderr else "")


def _present_bins(choice: Choice, skill: Skill, bins: BinaryLookup) -> tuple[str, ...] | None:
    """The binaries that make this install pointless, if all of them are on PATH."""
    wanted = choice.spec.bins if choice.spec else choice.raw.bins if choice.raw else ()
    if not wanted:
        req = skill.metadata.requires if skill.metadata else None
        if req is None or not (req.bins or req.any_bins):
            return None
        if req.any_bins and not bins.has_any(req.any_bins):
            return None
        wanted = (*req.bins, *([b for b in req.any_bins if bins.has(b)][:1]))
    return wanted if all(bins.has(b) for b in wanted) else None


def plan_setup(
    book: SkillBook,
    name: str,
    install_id: str | None = None,
    *,
    options: SetupOptions | None = None,
) -> SetupPlan:
    """Plan the install of ``name``'s installer ``install_id`` (default: the one
    ``skillbook info`` shows). Runs nothing but the scan. Raises
    :class:`InstallError` (``install.skill-not-found``) when there is no such skill.
    """
    opts = options or SetupOptions()
    try:
        skill = book.get(name)
    except SkillNotFound:
        raise InstallError("install.skill-not-found", f"Skill not found: {name}") from None
    machine = opts.machine or Machine.from_process()
    bins = machine.bins()
    prefs = resolve_install_preferences(book.config)
    policy = opts.policy or InstallPolicy.from_config(book.config, fallbacks=opts.fallbacks)
    plan = SetupPlan(
        skill=skill,
        before=book.find(skill.name),
        install_id=install_id,
        kind="",
        label="",
        timeout_ms=clamp_timeout(opts.timeout_ms),
        force_reason=opts.force_reason,
        book=book,
        machine=machine,
        policy=policy,
        download_options=opts.download or DownloadOptions(network=policy.network()),
    )
    try:
        choice = choose(
            skill,
            install_id,
            prefs=prefs,
            platform=machine.platform,
            bins=bins,
            fallbacks=policy.fallbacks,
        )
    except InstallError as exc:
        return replace(plan, refusal=_refuse(exc))
    plan = replace(plan, install_id=choice.install_id, kind=choice.kind, label=choice.label)
    present = _present_bins(choice, skill, bins) if choice.kind else None
    if present is not None:
        message = f"Nothing to install: {', '.join(present)} already on PATH"
        return replace(plan, refusal=Refusal("install.already-present", message, ok=True))
    spec = choice.spec
    url, sha = (spec.url, spec.expected_sha256) if spec is not None else (None, None)
    refused = policy.refusal(choice.kind, url=url, sha256=sha) if choice.kind else None
    if refused:
        return replace(plan, refusal=Refusal("install.policy-refused", refused))
    verdict = scan_for_install(
        skill.name,
        Path(os.path.abspath(skill.base_dir)),
        force_reason=opts.force_reason,
        state_dir=book.paths.state_dir,
    )
    plan = replace(plan, scan=verdict, warnings=verdict.warnings)
    if verdict.blocked is not None:
        return replace(
            plan, refusal=Refusal(verdict.code or "install.scan-blocked", verdict.blocked)
        )
    source = resolve_skill_source(skill)
    if source not in TRUSTED_SOURCES:
        plan = _warn(
            plan,
            f'WARNING: Skill "{skill.name}" install triggered from non-bundled source "{source}". '
            "Verify the install recipe is trusted.",
        )
    if spec is None and choice.raw is None:
        message = f"Installer not found: {choice.install_id}"
        return replace(plan, refusal=Refusal("install.installer-not-found", message))
    try:
        if choice.raw is not None:
            steps = steps_for_raw(
                choice.raw, machine=machine, bins=bins, timeout_ms=plan.timeout_ms
            )
            return replace(plan, steps=tuple(steps))
        assert spec is not None
        if spec.kind == "download":
            root = tools_root(book.paths.state_dir, skill.skill_key)
            download = plan_download(
                spec, tools_root=root, home=book.paths.home, timeout_ms=plan.timeout_ms
            )
            return replace(plan, download=download)
        argv = build_install_argv(spec, node_manager=prefs.node_manager)
    except InstallError as exc:
        return replace(
            plan, refusal=_refuse(exc, stderr=spec is not None and spec.kind == "download")
        )
    return _command_plan(plan, spec, argv, bins)


def _warn(plan: SetupPlan, message: str) -> SetupPlan:
    return replace(plan, warnings=(*plan.warnings, message))


def _command_plan(
    plan: SetupPlan, spec: InstallSpec, argv: tuple[str, ...], bins: BinaryLookup
) -> SetupPlan:
    machine, policy, timeout = plan.machine, plan.policy, plan.timeout_ms
    apt_on = "apt" in policy.fallbacks and machine.platform == "linux"
    # Homebrew refuses to run as root: with the apt fallback on, do not even try it.
    skip_brew = apt_on and spec.kind == "brew" and machine.is_root
    missing: InstallError | None = None
    if not skip_brew:
        try:
            steps = plan_command_steps(spec, argv, machine=machine, bins=bins, timeout_ms=timeout)
            return replace(plan, steps=tuple(steps))
        except InstallError as exc:
            missing = exc
    try:
        found = fallback_steps(
            spec,
            plan.skill,
            enabled=policy.fallbacks,
            machine=machine,
            bins=bins,
            timeout_ms=timeout,
        )
    except InstallError as exc:
        return replace(plan, refusal=_refuse(exc))
    if found is None:
        if apt_on and spec.kind == "brew":
            plan = _warn(plan, describe_unknown(spec.formula))
        if missing is None:  # brew was skipped for root, but apt cannot help: try brew
            try:
                steps = plan_command_steps(
                    spec, argv, machine=machine, bins=bins, timeout_ms=timeout
                )
                return replace(plan, steps=tuple(steps))
            except InstallError as exc:
                missing = exc
        return replace(plan, refusal=_refuse(missing))
    kind, note, steps = found
    refused = policy.refusal(kind)
    if refused:
        return replace(plan, refusal=Refusal("install.policy-refused", refused))
    return replace(_warn(plan, note), steps=tuple(steps), fallback=kind)
