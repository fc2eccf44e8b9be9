"""``skillbook drafts``: the review queue of skills learned from successful runs.

``list``, ``show`` and ``diff`` read the queue; ``promote`` runs the gate (validation in
``skills.experience.promoteMode``, strict by default, plus the quality checks) and
writes the draft to ``skills/auto`` and its helper to ``scripts/auto`` in the
workspace; ``reject`` archives a draft with a reason; ``learn`` builds a draft from a
recorded session. Exit codes: 0 done, 1 the gate refused (each failure is listed),
2 could not run (unknown draft, no workspace). Whatever they print passes the book's
redactor: a known secret (an old draft, a hand-edited file) never reaches the terminal.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from skillbook.cli.context import EXIT_FINDINGS, Context, emit_json, emit_lines, fail
from skillbook.cli.groups import SubcommandGroup
from skillbook.cli.render import clean
from skillbook.cli.validate_cmd import finding_lines
from skillbook.config.mode import Mode
from skillbook.diagnostics import error
from skillbook.errors import SkillNotFound
from skillbook.experience import ExperienceError
from skillbook.experience.draft import Draft
from skillbook.experience.engine import Experience
from skillbook.experience.owner import ownership
from skillbook.experience.promotion import GateReport
from skillbook.experience.replay import render_replay
from skillbook.experience.skill_file import render_skill


@click.group("drafts", cls=SubcommandGroup)
def drafts_cmd() -> None:
    """Review skills learned from successful runs: list, show, diff, promote, reject."""


def _experience(obj: Context) -> Experience:
    return Experience(obj.book())


def _fail(exc: ExperienceError | SkillNotFound) -> None:
    code = getattr(exc, "code", "skill-not-found")
    fail(str(exc), error=code if isinstance(code, str) else "error")


@drafts_cmd.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the drafts as JSON.")
@click.option("--all", "show_all", is_flag=True, help="Also promoted and rejected drafts.")
@click.pass_obj
def list_cmd(obj: Context, as_json: bool, show_all: bool) -> None:
    """List drafts waiting for review (newest first)."""
    exp = _experience(obj)
    drafts = [exp.redactor.draft(d) for d in exp.queue.drafts(None if show_all else "pending")]
    problems = exp.queue.problems
    if as_json:
        emit_json(
            exp.redactor.value(
                {
                    "dir": str(exp.queue.root),
                    "drafts": [_listed(d) for d in drafts],
                    "diagnostics": [d.to_dict() for d in problems],
                }
            )
        )
        return
    for line in finding_lines(problems):
        click.echo(clean(exp.redactor.text(f"skillbook: {line}")), err=True)
    if not drafts:
        emit_lines([f"No drafts{'' if show_all else ' waiting for review'} ({exp.queue.root})."])
        return
    lines = []
    for d in drafts:
        flags = []
        if d.target is not None:
            flags.append(f"refines {d.target.name} ({_where(d)})")
        if d.risks:
            flags.append("⚠ risk")
        if d.near_duplicates:
            flags.append(f"resembles {d.near_duplicates[0].of}")
        if show_all:
            flags.insert(0, d.status)
        extra = f"  [{'; '.join(flags)}]" if flags else ""
        lines.append(clean(f"{d.id}  {d.kind}  runs {d.run_count}  {d.fingerprint}{extra}"))
        lines.append(clean(f"    {d.title}"))
    emit_lines(lines)


@drafts_cmd.command("show")
@click.argument("draft_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="Print the draft and its gate check as JSON.")
@click.option("--replay", is_flag=True, help="Print the replay helper instead of the skill file.")
@click.pass_obj
def show_cmd(obj: Context, draft_id: str, as_json: bool, replay: bool) -> None:
    """Show a draft: its skill file (or replay helper) and what the gate says."""
    exp = _experience(obj)
    try:
        draft = exp.queue.get(draft_id)
    except ExperienceError as exc:
        _fail(exc)
    report: GateReport | None = None
    if draft.status == "pending":
        try:
            report = exp.check(draft.id)
        except ExperienceError as exc:
            # A refine whose skill is gone, or cannot be overridden: still show the draft.
            problem = error("experience.refine-target", f"{exc} ({exc.code})", skill=draft.id)
            report = GateReport(False, Mode.of(exp.config.promote_mode), (problem,))
    shown = exp.redactor.draft(draft)
    if as_json:
        emit_json(
            exp.redactor.value(
                {
                    **shown.to_json(),
                    "skillFile": str(exp.queue.skill_file(draft)),
                    "replayFile": str(exp.queue.replay_file(draft)),
                    "skill": render_skill(shown),
                    "replay": render_replay(shown),
                    "gate": report.to_json() if report is not None else None,
                }
            )
        )
        return
    text = render_replay(shown) if replay else render_skill(shown)
    lines = [f"# {exp.queue.replay_file(draft) if replay else exp.queue.skill_file(draft)}", text]
    lines += _status_lines(shown)
    if report is not None:
        lines.append(
            f"Gate ({report.mode}): "
            + ("passes" if report.ok else f"{len(report.diagnostics)} problem(s)")
        )
        lines += [f"  {line}" for line in finding_lines(report.diagnostics)]
    emit_lines([exp.redactor.text(line) for line in lines])


@drafts_cmd.command("diff")
@click.argument("draft_id", metavar="ID")
@click.option(
    "--with",
    "with_skill",
    metavar="SKILL",
    help="Compare with this skill's SKILL.md (e.g. the one it resembles).",
)
@click.option("--json", "as_json", is_flag=True, help="Print {id, kind, against, diff} as JSON.")
@click.pass_obj
def diff_cmd(obj: Context, draft_id: str, with_skill: str | None, as_json: bool) -> None:
    """Show what a draft changes: against a skill, its last version, or nothing.

    For a refine draft: the change to the skill it refines (its SKILL.md now, then as
    promotion would write it)."""
    exp = _experience(obj)
    try:
        text = exp.diff(draft_id, with_skill=with_skill)
        draft = exp.queue.get(draft_id)
    except (ExperienceError, SkillNotFound) as exc:
        _fail(exc)
    if as_json:
        against = with_skill
        if against is None and draft.target is not None:
            against = draft.target.name
        emit_json({"id": draft.id, "kind": draft.kind, "against": against, "diff": text})
        return
    click.echo(clean(text), nl=False)


@drafts_cmd.command("promote")
@click.argument("draft_id", metavar="ID")
@click.option(
    "--accept-risk",
    is_flag=True,
    help="Acknowledge the risk marker (the run touched user data without approval).",
)
@click.option(
    "--name",
    metavar="NAME",
    help="The skill's name (and slash command) instead of the task's slug.",
)
@click.option(
    "--suffix",
    is_flag=True,
    help="When another skill has the name, take NAME-2, NAME-3… instead of failing.",
)
@click.option(
    "--strict-name",
    is_flag=True,
    help="Name the folder after the skill (skills/auto/NAME), as the Agent Skills "
    "standard (strict mode) requires, instead of <timestamp>-<slug>.",
)
@click.option(
    "--as-new",
    is_flag=True,
    help="A refine draft: write the refined skill as a new skill (--name, else the "
    "task's slug) in skills/auto, instead of editing or overriding the skill it refines.",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the promotion or the gate's findings as JSON."
)
@click.pass_obj
def promote_cmd(
    obj: Context,
    draft_id: str,
    accept_risk: bool,
    name: str | None,
    suffix: bool,
    strict_name: bool,
    as_new: bool,
    as_json: bool,
) -> None:
    """Promote a draft into skills/auto (and scripts/auto) after the gate passes.

    The skill is named after the task (e.g. weekly-report, so /weekly_report), its
    folder keeps <timestamp>-<slug>; a name another skill has is refused (name-taken).

    A refine draft changes the skill it refines: a skill you own (workspace, personal,
    managed) is edited in place and its previous SKILL.md kept; a bundled or installed
    one is never edited: a workspace copy with the change overrides it (or --as-new).
    """
    exp = _experience(obj)
    try:
        done = exp.promote(
            draft_id,
            accept_risk=accept_risk,
            name=name,
            suffix=suffix,
            strict_name=strict_name,
            as_new=as_new,
        )
    except ExperienceError as exc:
        if exc.code != "promotion-refused":
            _fail(exc)
        if as_json:
            emit_json(
                {
                    "error": str(exc),
                    "code": exc.code,
                    "diagnostics": [d.to_dict() for d in exc.diagnostics],
                }
            )
        else:
            emit_lines([f"✗ {exc}", *(f"  {line}" for line in finding_lines(exc.diagnostics))])
        sys.exit(EXIT_FINDINGS)
    if as_json:
        emit_json(done.to_json())
        return
    notes = [d for d in done.report.diagnostics if d.severity != "error"]
    if done.replay_path is None:
        head = [f"✓ promoted {done.draft.id}: {done.note}", f"  skill:  {done.skill_path}"]
        if done.backup is not None:
            head.append(f"  before: {done.backup} (copy it back to undo)")
        if done.how == "override":
            head.append(
                f"  the installed files at {done.draft.target.path if done.draft.target else ''}"
                " are unchanged; remove the override's folder to go back to them"
            )
    else:
        head = [
            f"✓ promoted {done.draft.id} as {done.draft.name}",
            f"  skill:  {done.skill_path}",
            f"  replay: {done.replay_path}",
        ]
    lines = [*head, *(f"  {line}" for line in finding_lines(notes))]
    emit_lines([exp.redactor.text(line) for line in lines])


@drafts_cmd.command("reject")
@click.argument("draft_id", metavar="ID")
@click.option("--reason", "-r", required=True, help="Why (kept in the archive).")
@click.option("--json", "as_json", is_flag=True, help="Print the archived draft as JSON.")
@click.pass_obj
def reject_cmd(obj: Context, draft_id: str, reason: str, as_json: bool) -> None:
    """Archive a draft with a reason; the same procedure is not drafted again."""
    exp = _experience(obj)
    try:
        done = exp.reject(draft_id, reason)
    except ExperienceError as exc:
        _fail(exc)
    done = exp.redactor.draft(done)
    if as_json:
        emit_json(done.to_json())
        return
    emit_lines([f"✓ rejected {done.id}: {done.rejected_reason}"])


@drafts_cmd.command("learn")
@click.argument("session_id", metavar="SESSION")
@click.option("--json", "as_json", is_flag=True, help="Print what was learned as JSON.")
@click.pass_obj
def learn_cmd(obj: Context, session_id: str, as_json: bool) -> None:
    """Build (or update) a draft from a recorded session, e.g. after marking it good."""
    exp = _experience(obj)
    try:
        record = exp.sessions.load(session_id)
    except ExperienceError as exc:
        _fail(exc)
    learned = exp.learner().learn(record)
    if as_json:
        emit_json(exp.redactor.value(learned.to_json()))
        return
    lines = [learned.message(), *(f"  {line}" for line in finding_lines(learned.diagnostics))]
    emit_lines([exp.redactor.text(line) for line in lines])


def _listed(draft: Draft) -> dict[str, object]:
    """A draft's JSON; a refine draft's target also says, as of now, where the skill
    lives (``where``: workspace, bundled …), what installed it, and whether promotion
    would edit it (``owned``) or write an override."""
    out = draft.to_json()
    target = draft.target
    if target is not None:
        owner = ownership(Path(target.path), target.source, target.name)
        out["target"] = {
            **target.to_json(),
            "where": owner.where,
            "installed": owner.installed,
            "owned": owner.owned,
        }
    return out


def _where(draft: Draft) -> str:
    target = draft.target
    assert target is not None
    return ownership(Path(target.path), target.source, target.name).describe()


def _status_lines(draft: Draft) -> list[str]:
    lines = [f"Status: {draft.status}, {draft.run_count} run(s), fingerprint {draft.fingerprint}"]
    if draft.target is not None:
        lines.append(f"Refines: {draft.target.name} ({_where(draft)}) at {draft.target.path}")
        lines += [f"  {change}" for change in draft.target.changes]
        lines.append(f"  The change to the skill: skillbook drafts diff {draft.id}")
    if draft.rejected_reason:
        lines.append(f"Rejected: {draft.rejected_reason}")
    if draft.promoted_to:
        lines.append(f"Promoted to: {draft.promoted_to}")
    if draft.refine_error:
        lines.append(f"Not refined: {draft.refine_error}")
    for near in draft.near_duplicates:
        lines.append(f"Resembles {near.of} ({near.kind}, {near.similarity:.2f})")
    return lines
