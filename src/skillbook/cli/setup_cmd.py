"""``skillbook setup NAME [INSTALL_ID]``: install what a skill needs, after a scan and consent.

Input: the book the global options select, a skill name and optionally an installer
id (``skillbook info NAME`` lists them). Output: the plan (exact argv or download
plan, scan results, warnings), then, once the user agreed, the result and the
skill's status before and after. ``--json`` prints ``{plan, result, status,
hints}``. Exit codes: 0 installed, nothing to do, or a dry run of a runnable plan;
1 the install failed, was blocked or refused, declined, or the skill is unknown;
2 it could not run (bad options or config, or no terminal to ask and no ``--yes``).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Final

import click

from skillbook.cli.context import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, Context, emit_json, emit_lines
from skillbook.cli.progress import terminal_progress as _progress
from skillbook.cli.render import STATUS_TEXT, clean

if TYPE_CHECKING:
    from skillbook.distribution.install.plan import Refusal
    from skillbook.distribution.install.result import InstallResult
    from skillbook.distribution.install.run import SetupResult
    from skillbook.distribution.install.setup import SetupPlan

CONSENT_MESSAGE: Final = (
    "nothing was run: no terminal to ask for consent; review the plan with --dry-run, "
    "then run again with --yes"
)


@click.command("setup")
@click.argument("name")
@click.argument("install_id", required=False)
@click.option(
    "--dry-run", is_flag=True, help="Print the exact commands or download plan; run nothing."
)
@click.option("--yes", "-y", is_flag=True, help="Run without asking (needed without a terminal).")
@click.option(
    "--json", "as_json", is_flag=True, help="Print plan and result as JSON; no prompt, no progress."
)
@click.option(
    "--fallback",
    type=click.Choice(["apt", "pip"]),
    multiple=True,
    help="On Linux, use apt (for brew formulas) or pip (for uv packages) when brew or uv "
    "is missing. Repeatable. Same as skills.install.allowApt / allowPip.",
)
@click.option(
    "--dangerously-force",
    "--dangerously-force-unsafe-install",
    "force",
    is_flag=True,
    help="Install despite critical security-scan findings. Needs --reason.",
)
@click.option(
    "--reason", help="Why the install is forced; recorded in <state dir>/install-audit.jsonl."
)
@click.option(
    "--timeout-ms",
    type=click.IntRange(min=0),
    help="Timeout per command and for downloads (default 300000; clamped to 1000..900000).",
)
@click.pass_obj
def setup_cmd(
    obj: Context,
    name: str,
    install_id: str | None,
    dry_run: bool,
    yes: bool,
    as_json: bool,
    fallback: tuple[str, ...],
    force: bool,
    reason: str | None,
    timeout_ms: int | None,
) -> None:
    """Install the binaries a skill needs, the way OpenClaw would, after a security scan.

    INSTALL_ID picks one of the skill's installers (`skillbook info NAME` lists them);
    without it, the one shown there is used. Nothing runs before you agree to the plan
    (or pass --yes); --dry-run shows it and stops.
    """
    from skillbook.distribution import InstallError
    from skillbook.distribution.install.setup import SetupOptions, plan_setup

    if force and not (reason or "").strip():
        _usage("--dangerously-force needs --reason TEXT (it is recorded in the install audit log)")
    if reason is not None and not force:
        _usage("--reason only goes with --dangerously-force")
    book = obj.book()
    options = SetupOptions(
        timeout_ms=timeout_ms,
        force_reason=reason.strip() if force and reason else None,
        fallbacks=fallback,
    )
    try:
        plan = plan_setup(book, name, install_id, options=options)
    except InstallError as exc:
        if as_json:
            emit_json({"skill": name, "result": _failure_json(exc.code, exc.message)})
        elif exc.code == "install.skill-not-found":
            from skillbook.cli.names import did_you_mean, missing_text
            from skillbook.pipeline.lookup import suggest_names

            hint = did_you_mean(suggest_names(book.status.skills, name))
            first = f"skillbook: {exc.message}.{hint} Run `skillbook list` to see available skills."
            click.echo(missing_text(book, name, first), err=True)
        else:
            click.echo(f"skillbook: {exc.message}.", err=True)
        sys.exit(EXIT_FINDINGS)
    if dry_run:
        _dry_run(plan, as_json=as_json)
    if not as_json:
        emit_lines(plan_lines(plan))
    # A refused plan runs nothing, so it needs no consent; run_setup returns the refusal.
    if not yes and plan.refusal is None:
        _ask_consent(plan, as_json=as_json)
    from skillbook.distribution.install.run import run_setup

    outcome = run_setup(plan, progress=None if as_json else _progress())
    if as_json:
        emit_json({"plan": plan.to_json(), **outcome.to_json()})
    elif plan.refusal is not None:
        _echo_refusal(plan.refusal)
    else:
        emit_lines(result_lines(outcome))
    sys.exit(EXIT_OK if outcome.ok else EXIT_FINDINGS)


def _usage(message: str) -> None:
    click.echo(f"skillbook: {message}", err=True)
    sys.exit(EXIT_ERROR)


def _failure_json(code: str, message: str) -> dict[str, Any]:
    return {
        "ok": False,
        "message": message,
        "stdout": "",
        "stderr": "",
        "code": None,
        "reason": code,
    }


def _dry_run(plan: SetupPlan, *, as_json: bool) -> None:
    refusal = plan.refusal
    ok = refusal is None or refusal.ok
    if as_json:
        out: dict[str, Any] = {"plan": plan.to_json(), "dryRun": True}
        if refusal is not None:
            out["result"] = _refusal_json(plan, refusal)
        emit_json(out)
    else:
        emit_lines(plan_lines(plan))
        if refusal is None:
            emit_lines(["", "Dry run: nothing was run."])
        else:
            _echo_refusal(refusal)
    sys.exit(EXIT_OK if ok else EXIT_FINDINGS)


def _refusal_json(plan: SetupPlan, refusal: Refusal) -> dict[str, Any]:
    out = _failure_json(refusal.code, refusal.message)
    out.update(ok=refusal.ok, stderr=refusal.stderr)
    if plan.warnings:
        out["warnings"] = list(plan.warnings)
    return out


def _echo_refusal(refusal: Refusal) -> None:
    if refusal.ok:
        emit_lines(["", refusal.message])
        return
    click.echo(f"skillbook: {clean(refusal.message)}", err=True)
    if refusal.code == "install.scan-blocked":
        click.echo(
            "skillbook: to install anyway, add --dangerously-force --reason TEXT (recorded)",
            err=True,
        )


def _ask_consent(plan: SetupPlan, *, as_json: bool) -> None:
    if as_json or not (sys.stdin.isatty() and sys.stdout.isatty()):
        if as_json:
            emit_json(
                {
                    "plan": plan.to_json(),
                    "result": _failure_json("install.consent-required", CONSENT_MESSAGE),
                }
            )
        else:
            click.echo(f"skillbook: {CONSENT_MESSAGE}", err=True)
        sys.exit(EXIT_ERROR)
    if not click.confirm("\nRun this plan?", default=False):
        click.echo("Cancelled: nothing was installed.")
        sys.exit(EXIT_FINDINGS)


def plan_lines(plan: SetupPlan) -> list[str]:
    status = STATUS_TEXT.get(plan.before.status, plan.before.status)
    lines = [f"Skill: {plan.skill.name} ({plan.before.source}, {status})"]
    if plan.kind:
        lines.append(f"Installer: {plan.install_id} — {plan.label}")
    if plan.scan is not None:
        scan = plan.scan
        critical = len(scan.critical)
        found = (
            f"{len(scan.findings)} finding(s), {critical} critical"
            if scan.findings
            else "no findings"
        )
        lines.append(f"Scan: {scan.files_scanned} file(s), {found}")
        for f in scan.findings:
            where = f"{f.file}:{f.line}" if f.line is not None else str(f.file)
            lines.append(f"  {f.severity} {f.rule}: {f.message} ({where})")
    lines += [clean(w) for w in plan.warnings]
    if plan.steps or plan.download is not None:
        lines.append("Plan:")
        lines += [f"  $ {s.describe()}" for s in plan.steps]
        if plan.download is not None:
            lines += [f"  {x}" for x in plan.download.describe()]
    return lines


def result_lines(outcome: SetupResult) -> list[str]:
    result: InstallResult = outcome.result
    if not result.ok:
        click.echo(f"skillbook: {clean(result.message)}", err=True)
        return []
    lines = ["", clean(result.message)]
    if outcome.after is not None:
        before = STATUS_TEXT.get(outcome.plan.before.status, outcome.plan.before.status)
        after = STATUS_TEXT.get(outcome.after.status, outcome.after.status)
        lines.append(f"{outcome.plan.skill.name}: {before} → {after}")
    lines += [clean(h) for h in outcome.hints]
    if outcome.audit_file is not None:
        lines.append(f"Recorded in {outcome.audit_file}")
    return lines
