"""Promoting a refine draft: the skill it refines, edited or overridden, never an installed file.

Input: a pending refine :class:`~skillbook.experience.draft.Draft` (``draft.target`` is
the skill it changes) and the workspace. Output: a
:class:`~skillbook.experience.promotion.Promotion` saying what was written, how
(``how``) and where the previous version is kept. Three ways (:class:`RefinePlan`):

``edited``    the user owns the skill (:mod:`skillbook.experience.owner`): its
              ``SKILL.md`` is replaced in place, atomically (temp + rename, its file
              mode kept); the version before is kept in the review queue,
              ``promoted/<id>/original/SKILL.md``, to see or copy back;
``override``  the skill is bundled, installed (a registry's ``origin.json``, a
              ``skills-lock.json``), a plugin's or ``extraDirs``' one, or not writable:
              its files are never touched. A copy of its folder with the refined
              ``SKILL.md`` becomes the workspace skill ``<workspace>/skills/<name>/``,
              which shadows it (workspace skills take precedence over every other
              source). The copy leaves out the installers' tracking folders. An installed
              skill that is itself in ``<workspace>/skills`` cannot be shadowed from
              there: promote it as a new skill;
``as-new``    on request (``as_new=True``, ``--as-new``): the same copy under a new name
              (``name=``, else the draft's slug; a taken name fails or, with ``suffix``,
              takes ``-2``…), in ``<workspace>/skills/auto/<name>/``.

The gate (:func:`check_refine`) validates the refined ``SKILL.md`` in the promotion
mode and scans it with the security scanner. A finding the skill already had is not the
draft's doing and does not block; a new validation error or critical finding does
(``experience.scan-blocked``), as do a missing procedure and an unacknowledged risk.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Collection
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Final

from skillbook.base import atomic as _atomic
from skillbook.config.mode import Mode
from skillbook.diagnostics import Diagnostic, error, has_errors
from skillbook.experience import ExperienceError
from skillbook.experience._files import move_dir, write_atomic
from skillbook.experience.draft import Draft
from skillbook.experience.owner import Ownership, ownership
from skillbook.experience.promotion import (
    GateReport,
    Promotion,
    choose_name,
    missing_steps,
    unacknowledged_risk,
)
from skillbook.experience.queue import DRAFT_FILE, ReviewQueue
from skillbook.experience.record import iso, utc_now
from skillbook.experience.revision import refined_text, rename_skill
from skillbook.pipeline.discovery.learned import learned_skills_dir
from skillbook.pipeline.validation.validate import validate_path

__all__ = ["ORIGINAL_DIR", "RefinePlan", "check_refine", "plan_refine", "promote_refine"]

#: The folder of a refine draft (in the queue) holding the skill's file before the edit.
ORIGINAL_DIR: Final = "original"
#: Installers' tracking folders: a copy must not claim to be the installed skill.
_NOT_COPIED: Final = (".clawhub", ".clawdhub", ".skillbook", ".git")


@dataclass(frozen=True, slots=True)
class RefinePlan:
    """What promoting a refine draft would write (module docstring)."""

    how: str
    #: The refined skill's ``SKILL.md`` (the original's path when ``edited``).
    skill_path: Path
    original_path: Path
    original_text: str
    text: str
    owner: Ownership
    name: str

    def describe(self) -> str:
        """What it does, for people."""
        if self.how == "edited":
            return f"edits the {self.owner.describe()} skill {self.name} in place"
        if self.how == "override":
            return (
                f"writes a local override of the {self.owner.describe()} skill {self.name} "
                f"({self.owner.why}, so its files stay as they are); the workspace skill "
                "shadows it"
            )
        return f"writes the refined skill as a new skill {self.name}"


def plan_refine(
    draft: Draft,
    *,
    workspace: Path,
    as_new: bool = False,
    name: str | None = None,
    taken: Collection[str] = (),
    suffix: bool = False,
    redacted: Draft | None = None,
) -> RefinePlan:
    """The plan for ``draft`` (raises ExperienceError when there is none).

    ``redacted``: the draft as the queue shows it, from which the added section is built
    (the skill's own text is the user's and is kept as it is).
    """
    target = draft.target
    if target is None:
        raise ExperienceError(f"draft {draft.id} refines no skill", code="not-refine")
    original_path = Path(target.path)
    try:
        original = original_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ExperienceError(
            f"cannot read the skill {target.name} the draft refines ({original_path}: "
            f"{getattr(exc, 'strerror', None) or exc}); reject the draft, or promote it "
            "once the skill is back",
            code="skill-gone",
        ) from exc
    owner = ownership(original_path, target.source, target.name)
    text = refined_text(original, redacted if redacted is not None else draft)
    if as_new:
        chosen = choose_name(draft, name, taken, suffix=suffix)
        path = learned_skills_dir(workspace) / chosen / "SKILL.md"
        return RefinePlan(
            "as-new", path, original_path, original, rename_skill(text, chosen), owner, chosen
        )
    if owner.owned:
        return RefinePlan(
            "edited", original_path, original_path, original, text, owner, target.name
        )
    path = workspace / "skills" / target.name / "SKILL.md"
    if _same_folder(path.parent, original_path.parent):
        raise ExperienceError(
            f"the skill {target.name} is installed in the workspace's own skills folder "
            f"({original_path.parent}), so no local override can shadow it; promote the "
            "refined version as a new skill with --as-new (as_new=True)",
            code="cannot-override",
        )
    return RefinePlan("override", path, original_path, original, text, owner, target.name)


def check_refine(
    draft: Draft,
    plan: RefinePlan,
    *,
    mode: Mode | str = Mode.STRICT,
    accept_risk: bool = False,
    path: Path | None = None,
) -> GateReport:
    """The gate for a refine draft (module docstring); never raises for a bad draft."""
    # Here, not at the top: `skillbook run` loads this module to learn, and only a
    # refine promotion needs the scanner's rule set.
    from skillbook.security.scanner import scan_path

    gate_mode = Mode.of(mode)
    found: list[Diagnostic] = []
    folder_name = plan.skill_path.parent.name
    with tempfile.TemporaryDirectory(prefix="skillbook-gate-") as tmp:
        before = Path(tmp) / "before" / folder_name
        after = Path(tmp) / "after" / folder_name
        for folder, text in ((before, plan.original_text), (after, plan.text)):
            folder.mkdir(parents=True)
            (folder / "SKILL.md").write_text(text, encoding="utf-8")
        had = {(d.code, d.message) for d in validate_path(before, mode=gate_mode).diagnostics}
        for d in validate_path(after, mode=gate_mode).diagnostics:
            if (d.code, d.message) not in had:
                found.append(replace(d, path=path, skill=d.skill or draft.id))
        old = {(f.rule, f.excerpt) for f in scan_path(before).blocking()}
        for f in scan_path(after).blocking():
            if (f.rule, f.excerpt) not in old:
                found.append(
                    error(
                        "experience.scan-blocked",
                        f"the refined {plan.name} has a critical security finding "
                        f"({f.rule}, line {f.line}): {f.message}; reject the draft",
                        skill=draft.id,
                        path=path,
                    )
                )
    found += missing_steps(draft, path=path)
    found += unacknowledged_risk(draft, accept_risk=accept_risk, path=path)
    return GateReport(not has_errors(found), gate_mode, tuple(found))


def promote_refine(
    queue: ReviewQueue,
    draft: Draft,
    *,
    workspace: Path,
    mode: Mode | str = Mode.STRICT,
    accept_risk: bool = False,
    now: datetime | None = None,
    as_new: bool = False,
    name: str | None = None,
    taken: Collection[str] = (),
    suffix: bool = False,
) -> Promotion:
    """Promote the pending refine draft ``draft`` (module docstring); raises ExperienceError."""
    if draft.status != "pending":
        raise ExperienceError(
            f"draft {draft.id} is {draft.status}, not pending", code="not-pending"
        )
    plan = plan_refine(
        draft,
        workspace=workspace,
        as_new=as_new,
        name=name,
        taken=taken,
        suffix=suffix,
        redacted=queue.redactor.draft(draft),
    )
    report = check_refine(
        draft, plan, mode=mode, accept_risk=accept_risk, path=queue.skill_file(draft)
    )
    if not report.ok:
        failed = sum(1 for d in report.diagnostics if d.severity == "error")
        raise ExperienceError(
            f"draft {draft.id} did not pass the promotion gate ({failed} problem(s))",
            code="promotion-refused",
            diagnostics=report.diagnostics,
        )
    backup: Path | None = None
    if plan.how == "edited":
        _keep_original(queue.folder(draft.id) / ORIGINAL_DIR / "SKILL.md", plan.original_path)
        _replace_keeping_mode(plan.original_path, plan.text)
        backup = queue.folder(draft.id, "promoted") / ORIGINAL_DIR / "SKILL.md"
    else:
        _copy_skill(plan.original_path, plan.skill_path.parent, plan.text)
    moment = now if now is not None else utc_now()
    done = replace(
        draft,
        status="promoted",
        decided=iso(moment),
        promoted_to=str(plan.skill_path),
        skill_name=plan.name,
    )
    target = queue.move(draft, "promoted")
    queue.write_draft(target / DRAFT_FILE, done)
    return Promotion(
        done, plan.skill_path, None, report, how=plan.how, backup=backup, note=plan.describe()
    )


def _same_folder(a: Path, b: Path) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except OSError:
        return False


def _keep_original(backup: Path, original: Path) -> None:
    # Kept once: promoting again after a crash must not save the edited file as "before".
    if backup.exists():
        return
    write_atomic(backup, original.read_bytes())


def _replace_keeping_mode(path: Path, text: str) -> None:
    mode = stat.S_IMODE(os.stat(path).st_mode)
    _atomic.write_atomic(path, text, mode=mode)


def _copy_skill(skill_file: Path, target: Path, text: str) -> None:
    """The folder of ``skill_file`` copied to ``target`` with ``text`` as its SKILL.md,
    appearing at once. A standalone ``<name>.md`` skill (mixed, legacy) has no folder of
    its own (its parent is a skills root): the copy is the refined file alone."""
    if target.exists():
        raise ExperienceError(
            f"{target} already exists; move it away, or promote with --as-new --name NAME",
            code="target-exists",
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.parent / f".new-{target.name}-{secrets.token_hex(4)}"
    try:
        if skill_file.name == "SKILL.md":
            ignore = shutil.ignore_patterns(*_NOT_COPIED)
            shutil.copytree(skill_file.parent, staging, symlinks=True, ignore=ignore)
        else:
            staging.mkdir()
        write_atomic(staging / "SKILL.md", text)
        move_dir(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
