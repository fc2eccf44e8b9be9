"""The promotion gate, promotion into the workspace, and rejection.

Input: a pending draft of the :class:`~skillbook.experience.queue.ReviewQueue`. Output:
the gate's :class:`GateReport`, or the promoted draft's files in the workspace:
``skills/auto/<id>/SKILL.md`` (``skills/auto/<id>.md`` in mixed/legacy mode) and
``scripts/auto/<id>.sh``, where discovery and the watchers find them
(:mod:`skillbook.pipeline.discovery.learned`); or the rejected draft in the archive, with the reason.

The gate (:func:`check_draft`) passes a draft when:

* it validates in the promotion mode (``skills.experience.promoteMode``, strict by
  default: the Agent Skills rules); a standalone ``.md`` draft is also validated in its
  own mode, as the loader will read it;
* its description says when to use it (``experience.no-when``);
* it has at least one step (``experience.no-steps``);
* its replay helper parses with ``bash -n`` (``experience.replay-invalid``);
* a run that touched user data unapproved is acknowledged (``experience.risk-unacknowledged``).

Every failure is a :class:`~skillbook.diagnostics.Diagnostic`; a refused promotion
raises :class:`~skillbook.experience.ExperienceError` holding them.

Names: the skill is named after the task (the draft's slug, ``count-words``, or
``name=``), while its folder keeps the id ``<timestamp>-<slug>``. A name another skill
already has (``taken``: every skill of the catalog, shadowed ones too) is refused
(``name-taken``), or with ``suffix=True`` becomes ``<name>-2``, ``<name>-3``…; a
learned skill never silently shadows one. The Agent Skills standard (``strict``) wants
the name to be the folder's: in strict mode the gate warns
(``experience.name-not-folder``) that the timestamped folder will fail ``skillbook
validate --mode strict``, and ``strict_name=True`` names the folder after the skill
instead (the helper keeps ``scripts/auto/<id>.sh``).
"""

from __future__ import annotations

import re
import secrets
import shutil
import tempfile
from collections.abc import Collection
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from skillbook.config.mode import Mode
from skillbook.diagnostics import Diagnostic, error, has_errors, warning
from skillbook.experience import ExperienceError
from skillbook.experience._files import move_dir, write_atomic
from skillbook.experience.draft import Draft
from skillbook.experience.queue import DRAFT_FILE, ReviewQueue
from skillbook.experience.record import iso, utc_now
from skillbook.experience.replay import EXEC_SHELL, check_syntax, render_replay
from skillbook.experience.skill_file import render_skill
from skillbook.pipeline.discovery.learned import learned_scripts_dir, learned_skills_dir
from skillbook.pipeline.validation.strict_rules import MAX_NAME_LENGTH, NAME_RE
from skillbook.pipeline.validation.validate import validate_path

__all__ = [
    "GateReport",
    "Promotion",
    "check_draft",
    "choose_name",
    "promote",
    "reject",
    "unacknowledged_risk",
]

#: A description "says when to use it" when it holds one of these.
_WHEN: Final = re.compile(
    r"\b(?:use (?:it |this )?(?:when|for|to|if)|when (?:the user|asked|you))\b", re.I
)


@dataclass(frozen=True, slots=True)
class GateReport:
    ok: bool
    mode: Mode
    diagnostics: tuple[Diagnostic, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "mode": str(self.mode),
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }


@dataclass(frozen=True, slots=True)
class Promotion:
    """What a promotion wrote. ``how``: ``new`` (a new learned skill), or for a refine
    draft (:mod:`skillbook.experience.refining`) ``edited``, ``override`` or ``as-new``;
    ``replay_path`` is None for a refine (the skill's own text holds the procedure);
    ``backup`` the skill's file before an ``edited`` promotion; ``note`` says what it did."""

    draft: Draft
    skill_path: Path
    replay_path: Path | None
    report: GateReport
    how: str = "new"
    backup: Path | None = None
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.draft.id,
            "name": self.draft.name,
            "kind": self.draft.kind,
            "how": self.how,
            "skill": str(self.skill_path),
            "replay": str(self.replay_path) if self.replay_path is not None else None,
            "gate": self.report.to_json(),
        }
        if self.draft.target is not None:
            out["refines"] = self.draft.target.to_json()
            out["backup"] = str(self.backup) if self.backup is not None else None
            out["note"] = self.note
        return out


def check_draft(
    draft: Draft,
    *,
    mode: Mode | str = Mode.STRICT,
    accept_risk: bool = False,
    path: Path | None = None,
    strict_name: bool = False,
) -> GateReport:
    """Run the gate (module docstring) on a draft; never raises for a bad draft.

    ``path`` is the draft's file that diagnostics name (the queue's copy);
    ``strict_name``: the folder will be named after the skill, not its id.
    """
    gate_mode = Mode.of(mode)
    found: list[Diagnostic] = []
    skill_text = render_skill(draft)
    with tempfile.TemporaryDirectory(prefix="skillbook-gate-") as tmp:
        folder = Path(tmp) / (draft.name if strict_name else draft.id)
        folder.mkdir()
        (folder / "SKILL.md").write_text(skill_text, encoding="utf-8")
        checked = validate_path(folder, mode=gate_mode).diagnostics
        if any(_name_dir(d) for d in checked):
            # The timestamped folder is the layout's choice, not a flaw of the draft:
            # said once, with the way out, instead of refusing every strict promotion.
            checked = tuple(d for d in checked if not _name_dir(d))
            found.append(
                warning(
                    "experience.name-not-folder",
                    f"strict mode: the name {draft.name!r} is not the folder name "
                    f"{folder.name!r}, so `skillbook validate --mode strict` will flag the "
                    "promoted skill; promote with --strict-name (strict_name=True) to name "
                    f"the folder {draft.name!r} (the helper keeps scripts/auto/"
                    f"{draft.replay_filename})",
                    skill=draft.id,
                    path=path,
                )
            )
        found += _located(checked, draft, path)
        if draft.standalone:
            standalone = Path(tmp) / draft.skill_filename
            standalone.write_text(skill_text, encoding="utf-8")
            own = validate_path(standalone, mode=Mode.of(draft.mode)).diagnostics
            found += _located(own, draft, path)
    if not _WHEN.search(draft.description):
        found.append(
            error(
                "experience.no-when",
                'the description does not say when to use the skill (add e.g. "Use when …")',
                skill=draft.id,
                path=path,
            )
        )
    found += missing_steps(draft, path=path)
    problem = check_syntax(render_replay(draft))
    if problem is not None:
        problem = f"the replay helper does not parse: {problem}"
    for number, step in enumerate(draft.steps, 1):
        if problem is not None:
            break
        if step.tool == "exec" and step.command is not None:
            # Each command is data in a here-document for bash: its own shell parses it.
            shell = step.shell or EXEC_SHELL
            failed = check_syntax(step.command, shell=shell)
            if failed is not None:
                problem = f"step {number} does not parse in {shell}: {failed}"
    if problem is not None:
        found.append(error("experience.replay-invalid", problem, skill=draft.id, path=path))
    found += unacknowledged_risk(draft, accept_risk=accept_risk, path=path)
    return GateReport(not has_errors(found), gate_mode, tuple(found))


def missing_steps(draft: Draft, *, path: Path | None) -> list[Diagnostic]:
    """The gate's refusal of a draft without a step (nothing to repeat or to add to a
    skill): new and refine drafts alike; empty when it has one."""
    if draft.steps:
        return []
    return [
        error("experience.no-steps", "the draft has no procedure step", skill=draft.id, path=path)
    ]


def unacknowledged_risk(draft: Draft, *, accept_risk: bool, path: Path | None) -> list[Diagnostic]:
    """The gate's refusal of a risky run (it deleted, pushed, spent…) that nobody approved:
    the reviewer must say ``--accept-risk``; empty when there is no risk or it was accepted."""
    if not draft.risks or accept_risk:
        return []
    what = "; ".join(r.describe() for r in draft.risks)
    return [
        error(
            "experience.risk-unacknowledged",
            f"the run {what} without an approval step; review the steps and promote with "
            "--accept-risk (promote(..., accept_risk=True) in Python) if that is intended",
            skill=draft.id,
            path=path,
        )
    ]


def promote(
    queue: ReviewQueue,
    ref: str,
    *,
    workspace: Path,
    mode: Mode | str = Mode.STRICT,
    accept_risk: bool = False,
    now: datetime | None = None,
    name: str | None = None,
    taken: Collection[str] = (),
    suffix: bool = False,
    strict_name: bool = False,
) -> Promotion:
    """Promote the pending draft ``ref`` into ``workspace``; raises ExperienceError.

    ``name`` replaces the slug as the skill's name; ``taken``, ``suffix`` and
    ``strict_name``: the module docstring.
    """
    draft = queue.get(ref)
    if draft.status != "pending":
        raise ExperienceError(
            f"draft {draft.id} is {draft.status}, not pending", code="not-pending"
        )
    if draft.target is not None:
        # Never a second skill for one task by accident: a refine goes through its own
        # promotion (Experience.promote), which edits or overrides the skill it refines.
        raise ExperienceError(
            f"draft {draft.id} refines the skill {draft.target.name}; promote it with "
            "skillbook.experience.refining.promote_refine (Experience.promote does)",
            code="refine-draft",
        )
    draft = replace(draft, skill_name=choose_name(draft, name, taken, suffix=suffix))
    report = check_draft(
        draft,
        mode=mode,
        accept_risk=accept_risk,
        path=queue.skill_file(draft),
        strict_name=strict_name,
    )
    if not report.ok:
        failed = sum(1 for d in report.diagnostics if d.severity == "error")
        raise ExperienceError(
            f"draft {draft.id} did not pass the promotion gate ({failed} problem(s))",
            code="promotion-refused",
            diagnostics=report.diagnostics,
        )
    moment = now if now is not None else utc_now()
    skills_dir, scripts_dir = learned_skills_dir(workspace), learned_scripts_dir(workspace)
    text, replay = queue.clean(render_skill(draft)), queue.clean(render_replay(draft))
    folder = draft.name if strict_name else draft.id
    skill_path = (
        skills_dir / f"{folder}.md" if draft.standalone else skills_dir / folder / "SKILL.md"
    )
    replay_path = scripts_dir / draft.replay_filename
    _claim(skill_path, text)
    write_atomic(replay_path, replay, executable=True)
    if not skill_path.exists():
        if draft.standalone:
            write_atomic(skill_path, text)
        else:
            _write_skill_folder(skill_path.parent, text)
    done = replace(draft, status="promoted", decided=iso(moment), promoted_to=str(skill_path))
    target = queue.move(draft, "promoted")
    queue.write_draft(target / DRAFT_FILE, done)
    return Promotion(done, skill_path, replay_path, report)


def choose_name(
    draft: Draft, name: str | None, taken: Collection[str], *, suffix: bool = False
) -> str:
    """The skill's name: ``name`` or the slug, checked against the rules and ``taken``."""
    wanted = (name if name is not None else draft.name).strip()
    if len(wanted) > MAX_NAME_LENGTH or not NAME_RE.fullmatch(wanted):
        raise ExperienceError(
            f"{wanted!r} is not a skill name: use lower-case letters, digits and single "
            f"hyphens, at most {MAX_NAME_LENGTH} characters (e.g. weekly-report)",
            code="invalid-name",
        )
    if wanted not in taken:
        return wanted
    if not suffix:
        raise ExperienceError(
            f"a skill named {wanted!r} already exists; the learned one would shadow it or "
            f"be hidden. Pick another name with --name, or add --suffix for {wanted}-2",
            code="name-taken",
        )
    for number in range(2, 1000):
        tail = f"-{number}"
        candidate = wanted[: MAX_NAME_LENGTH - len(tail)].rstrip("-") + tail
        if candidate not in taken:
            return candidate
    raise ExperienceError(f"no free name like {wanted!r}", code="name-taken")


def reject(queue: ReviewQueue, ref: str, reason: str, *, now: datetime | None = None) -> Draft:
    """Archive the pending draft ``ref`` with ``reason``; its fingerprint stays known, so
    the same procedure is not drafted again."""
    if not reason.strip():
        raise ExperienceError("a rejection needs a reason", code="invalid-reason")
    draft = queue.get(ref)
    if draft.status != "pending":
        raise ExperienceError(
            f"draft {draft.id} is {draft.status}, not pending", code="not-pending"
        )
    moment = now if now is not None else utc_now()
    done = replace(draft, status="rejected", decided=iso(moment), rejected_reason=reason.strip())
    target = queue.move(draft, "rejected")
    queue.write_draft(target / DRAFT_FILE, done)
    return done


def _claim(skill_path: Path, text: str) -> None:
    """Refuse to overwrite a skill that is not this draft (a crash after writing it is fine)."""
    if not skill_path.exists():
        return
    try:
        same = skill_path.read_text(encoding="utf-8") == text
    except OSError:
        same = False
    if not same:
        raise ExperienceError(
            f"{skill_path} already exists; move it away or reject the draft",
            code="target-exists",
        )


def _write_skill_folder(folder: Path, text: str) -> None:
    """``folder/SKILL.md``, appearing at once: built beside it, then renamed."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = folder.parent / f".new-{folder.name}-{secrets.token_hex(4)}"
    staging.mkdir()
    try:
        write_atomic(staging / "SKILL.md", text)
        move_dir(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _name_dir(d: Diagnostic) -> bool:
    return d.code.endswith("name-mismatch")


def _located(found: tuple[Diagnostic, ...], draft: Draft, path: Path | None) -> list[Diagnostic]:
    # The gate validated a temporary copy: name the draft's own file, not the copy.
    return [replace(d, path=path, skill=d.skill or draft.id) for d in found]
