"""``skillbook sessions``: the recorded sessions under ``<state dir>/sessions``.

``list`` shows them newest first; ``show ID`` one of them: the request, each model
step, each tool call with its (redacted) result, approvals, the outcome and whether it
counts as successful. ``ID`` may be a unique prefix or ``last``. What they print passes
the redactor of every secret the settings know of (a session written by an older
version may hold one).
"""

from __future__ import annotations

import click

from skillbook.cli.context import Context, emit_json, emit_lines, fail
from skillbook.cli.groups import SubcommandGroup
from skillbook.cli.render import clean
from skillbook.errors import SkillbookError
from skillbook.experience import ExperienceError
from skillbook.experience.follow import Following
from skillbook.experience.learner import Learner
from skillbook.experience.record import SessionRecord, ToolEntry
from skillbook.experience.redaction import Redactor, known_secrets
from skillbook.experience.store import SessionStore
from skillbook.experience.success import default_success

#: Lines of a tool result shown by ``sessions show`` (``--json`` has all of it).
RESULT_PREVIEW_LINES = 6


@click.group("sessions", cls=SubcommandGroup)
def sessions_cmd() -> None:
    """List and show recorded sessions (what each run or chat turn did)."""


def _store(obj: Context) -> tuple[SessionStore, Redactor]:
    settings = obj.settings()
    redactor = known_secrets(settings.config, settings.env, home=settings.paths.home)
    return SessionStore(settings.paths.state_dir), redactor


@sessions_cmd.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the sessions as JSON.")
@click.option("--limit", "-n", type=click.IntRange(min=1), default=None, help="Show at most N.")
@click.pass_obj
def list_cmd(obj: Context, as_json: bool, limit: int | None) -> None:
    """List recorded sessions, newest first."""
    store, redactor = _store(obj)
    rows = store.summaries(limit)
    if as_json:
        emit_json(redactor.value({"dir": str(store.dir), "sessions": [r.to_json() for r in rows]}))
        return
    if not rows:
        emit_lines([f"No recorded sessions in {store.dir}."])
        return
    lines = []
    for r in rows:
        mark = {"good": " 👍", "bad": " 👎"}.get(r.feedback or "", "")
        failed = f", {r.failed} failed" if r.failed else ""
        request = _short(redactor.text(r.request))
        lines.append(clean(f"{r.id}  {r.stop:<10} {r.tools} tool call(s){failed}{mark}  {request}"))
    emit_lines(lines)


@sessions_cmd.command("show")
@click.argument("session_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="Print the whole session as JSON.")
@click.pass_obj
def show_cmd(obj: Context, session_id: str, as_json: bool) -> None:
    """Show one session: request, steps, tool calls, approvals and outcome."""
    store, redactor = _store(obj)
    try:
        record = redactor.record(store.load(session_id))
    except ExperienceError as exc:
        fail(str(exc), error=exc.code)
    verdict = default_success(record)
    following = _following(obj, record) if verdict else None
    if as_json:
        emit_json(
            {
                **record.to_json(),
                "success": verdict.success,
                "reason": verdict.reason,
                "followed": redactor.value(_followed_json(following)),
            }
        )
        return
    judged = f"Successful: {'yes' if verdict else 'no'} ({verdict.reason})"
    lines = [*session_lines(record), "", judged]
    if following is not None:
        lines.append(redactor.text(clean(_followed_line(following))))
    emit_lines(lines)


def _following(obj: Context, record: SessionRecord) -> Following | None:
    """The skill the session followed, as learning judges it (issue 20: new or refine);
    None when the book cannot be loaded, since the session itself is still worth showing."""
    try:
        return Learner.for_book(obj.book()).followed(record)
    except SkillbookError:
        return None


def _followed_line(following: Following) -> str:
    how = ", ".join(following.followed)
    head = f"Followed: the skill {following.skill.name} ({how})"
    if following.pure:
        return (
            f"{head}: did what it states, so learning leaves no draft (experience.followed-skill)"
        )
    changes = "; ".join(following.changes)
    return f"{head}, and did otherwise: {changes}; learning gives a refine draft"


def _followed_json(following: Following | None) -> dict[str, object] | None:
    if following is None:
        return None
    return {
        "skill": following.skill.name,
        "path": following.skill.path,
        "how": list(following.followed),
        "pure": following.pure,
        "changes": list(following.changes),
    }


def session_lines(record: SessionRecord) -> list[str]:
    lines = [
        f"Session {record.id}",
        f"  started {record.started}, model {record.model or 'none'}, mode {record.mode}",
        f"  workspace {record.workspace or '-'}",
        f"  request: {_short(record.request, 200)}",
    ]
    tools = {t.call_id: t for t in record.tools}
    for step in record.steps:
        lines.append(
            f"  step {step.n}: {_short(step.text) if step.text.strip() else '(tool calls)'}"
        )
        for call in step.calls:
            if call in tools:
                lines += _tool_lines(tools[call])
    unplaced = [t for t in record.tools if not any(t.call_id in s.calls for s in record.steps)]
    for tool in unplaced:
        lines += _tool_lines(tool)
    outcome = record.outcome
    lines.append(
        f"  outcome: {record.stop}" + (f" ({outcome.error})" if outcome and outcome.error else "")
    )
    if record.feedback:
        lines.append(f"  feedback: {record.feedback}")
    return [clean(line) for line in lines]


def _tool_lines(tool: ToolEntry) -> list[str]:
    target = tool.command or tool.path or ""
    skill = f"  [{tool.skill}]" if tool.skill else ""
    asked = {True: " (approved)", False: " (declined by the user)", None: ""}[tool.approved]
    status = "refused" if tool.declined else ("failed" if tool.is_error else "ok")
    out = [f"    → {tool.name} {_short(target)}{skill}{asked}: {status}"]
    shown = tool.result.splitlines()[:RESULT_PREVIEW_LINES]
    out += [f"      {line}" for line in shown]
    if len(tool.result.splitlines()) > RESULT_PREVIEW_LINES:
        out.append("      …")
    return out


def _short(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
