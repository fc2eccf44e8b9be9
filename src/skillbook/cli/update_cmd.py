"""``skillbook update [SLUG | --all]``: update installed skills, never a locally edited
one without ``--force``.

Output: OpenClaw's lines, ``Updated <slug>: <prev or unknown> -> <ver>`` or ``<slug>
already at <ver>`` on stdout, then ``Skipped N pinned skill[s]: …`` (``--all``), failures
and refusals on stderr; ``--json`` prints
``{"results": [...]}``. Exit codes: 0 every skill updated or current, 1 one failed or
was refused (the others still ran), 2 bad arguments.

With ``--for AGENT`` the skills placed where coding agents read them are updated instead
(:mod:`skillbook.distribution.agents.update`, docs/agents.md): ``Updated NAME`` or
``NAME is up to date`` per skill; a refused edit's diff on stdout.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from skillbook.cli.context import EXIT_ERROR, EXIT_FINDINGS, Context, emit_json, emit_lines, fail
from skillbook.cli.registry_support import (
    build_installer,
    dangerous_options,
    force_reason,
    install_options,
    registry_option,
    say_stderr,
)

if TYPE_CHECKING:
    from skillbook.distribution.registry.updater import UpdateResult


@click.command("update")
@click.argument("slug", required=False)
@click.option("--all", "all_", is_flag=True, help="Update every tracked skill.")
@click.option(
    "--force",
    is_flag=True,
    help="Replace skills with local changes (or no recorded fingerprint) and reinstall current ones.",
)
@click.option("--version", "version", help="Update one registry skill to this version.")
@dangerous_options
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@registry_option
@click.option(
    "--for",
    "for_agents",
    multiple=True,
    metavar="AGENT",
    help="Update the skill where this coding agent reads it (repeatable; `all`: every "
    "detected agent), from the source skills-lock.json (with -g: the skills CLI's global "
    "lock) records. See docs/agents.md.",
)
@click.option(
    "-g",
    "--global",
    "global_",
    is_flag=True,
    help="Use the managed skills folder (<state dir>/skills) instead of the workspace; "
    "with --for: the agents' global folders and the global lock.",
)
@click.pass_obj
def update_cmd(
    obj: Context,
    slug: str | None,
    all_: bool,
    force: bool,
    version: str | None,
    dangerous: bool,
    reason: str | None,
    as_json: bool,
    registry: str | None,
    site: str | None,
    for_agents: tuple[str, ...],
    global_: bool,
) -> None:
    """Update a tracked skill (or all) from where it was installed from.

    A skill whose files changed since it was installed is left alone unless --force is
    given: the refusal names the version available and prints your edit and what that
    version changes as unified diffs. --force keeps the edited folder as a backup
    (`skillbook restore NAME`). Each new version is scanned before it replaces the old.
    Pinned skills (`skillbook pin`) are skipped by --all and refused by name.

    With --for AGENT: update the skill (no name: every skill of the lock) where that agent
    reads it, from the source recorded in skills-lock.json (with -g: the skills CLI's
    global lock); a folder edited since it was installed is refused with the diff unless
    --force.
    """
    from skillbook.distribution.registry.updater import NOTHING_TRACKED, update_skills

    if for_agents:
        if slug and all_:
            fail("Use either a skill name or --all.", EXIT_ERROR)
        if version:
            fail(
                "--for does not take --version (a skill is updated to its source's newest)",
                EXIT_ERROR,
            )
        _update_for(obj, slug, for_agents, global_, force, force_reason(dangerous, reason), as_json)
        return
    if not slug and not all_:
        fail("Provide a skill slug or use --all.", EXIT_ERROR)
    if slug and all_:
        fail("Use either a skill slug or --all.", EXIT_ERROR)
    if version and not slug:
        fail("--version requires a single skill slug", EXIT_ERROR)
    reason = force_reason(dangerous, reason)
    settings, installer = build_installer(
        obj, registry=registry, site=site, global_=global_, as_json=as_json
    )
    options = install_options(
        settings,
        version=version,
        force=force,
        force_reason=reason,
    )
    from skillbook.distribution.registry import RegistryError

    try:
        results = update_skills(installer, slug, options)
    except RegistryError as exc:
        from skillbook.cli.registry_support import registry_error

        registry_error(exc)
    if as_json:
        emit_json({"results": [r.to_json() for r in results]})
    elif not results:
        emit_lines([NOTHING_TRACKED])
    skipped = [r.name for r in results if r.skipped]
    results = [r for r in results if not r.skipped]
    for result in results if not as_json else ():
        for warning in result.warnings:
            say_stderr(warning)
        if result.ok:
            emit_lines([result.message])
            if result.backup is not None:
                say_stderr(
                    f"kept the edited {result.name} as backup {result.backup} "
                    f"(`skillbook restore {result.name}` brings it back)"
                )
        else:
            say_stderr(result.message)
            diffs = _diff_lines(result)
            if diffs:
                emit_lines(diffs)
    if skipped and not as_json:
        # The clawhub CLI's line, word for word.
        plural = "" if len(skipped) == 1 else "s"
        emit_lines([f"Skipped {len(skipped)} pinned skill{plural}: {', '.join(skipped)}"])
    if any(not r.ok for r in results):
        sys.exit(EXIT_FINDINGS)


def _diff_lines(result: UpdateResult) -> list[str]:
    """A refused update's two diffs (stdout, so they can be saved or piped)."""
    lines: list[str] = []
    previous = f"{result.name}@{result.previous or 'unknown'}"
    if result.local_diff is not None:
        lines.append(f"# Your edit of {result.name} ({previous} -> the folder):")
        lines += result.local_diff.splitlines() or ["# (no differences)"]
    if result.update_diff is not None and result.available is not None:
        lines.append(
            f"# What {result.available} changes ({previous} -> {result.name}@{result.available}):"
        )
        lines += result.update_diff.splitlines() or ["# (no differences)"]
    return lines


def _update_for(
    obj: Context,
    name: str | None,
    for_agents: tuple[str, ...],
    global_: bool,
    force: bool,
    reason: str | None,
    as_json: bool,
) -> None:
    from skillbook.cli.agents_support import agent_command, agents_failed
    from skillbook.distribution.agents import AgentsError
    from skillbook.distribution.agents.update import update_for

    run = agent_command(obj, for_agents, as_json=as_json, force_reason=reason)
    try:
        results = update_for(
            name,
            run.agents,
            run.where,
            global_=global_,
            force=force,
            fetcher=run.fetcher,
            force_reason=reason,
            state_dir=run.settings.paths.state_dir,
        )
    except AgentsError as exc:
        agents_failed(exc)
    if as_json:
        emit_json({"results": [r.to_json() for r in results]})
    else:
        if not results:
            emit_lines(["No skills installed for these agents to update."])
        for result in results:
            for warning in result.warnings:
                say_stderr(warning)
            if result.ok:
                emit_lines([result.message])
                continue
            say_stderr(result.message)
            if result.diff is not None:
                emit_lines([f"# Your edit of {result.name} (the folder -> the new version):"])
                emit_lines(result.diff.splitlines() or ["# (no differences)"])
    if any(not r.ok for r in results):
        sys.exit(EXIT_FINDINGS)
