"""``skillbook install SOURCE``: get a skill from a registry, a git repository, a folder
or an archive, scanned before it is installed.

Output: ``Installed <slug>@<version> -> <dir>`` per skill (OpenClaw's line; git
versions are the commit's first 12 characters), warnings on stderr; ``--json`` prints
``{"installed": [...]}``. Exit codes: 0 installed, 1 refused or failed (exists, scan
blocked, not found, registry error), 2 bad arguments.

With ``--for AGENT`` the skill goes where coding agents read skills instead
(:mod:`skillbook.distribution.agents.ops`, docs/agents.md): ``Installed <name> for <agent> -> <path>``
per agent, from any source (registry, git, folder, archive); recorded in
``skills-lock.json`` or, with ``-g``, the ``skills`` CLI's global lock.
"""

from __future__ import annotations

import click

from skillbook.cli.context import EXIT_ERROR, Context, emit_json, emit_lines, fail
from skillbook.cli.registry_support import (
    build_installer,
    dangerous_options,
    force_reason,
    install_options,
    registry_error,
    registry_option,
    say_stderr,
    scan_hint,
)


@click.command("install")
@click.argument("source")
@click.option("--version", "version", help="Install this version (registry skills).")
@click.option("--tag", help="Install the version this tag points at (registry skills).")
@click.option(
    "--force", is_flag=True, help="Replace an installed folder; allow registry-flagged skills."
)
@click.option(
    "--skill",
    "skills",
    multiple=True,
    metavar="NAME",
    help="From a repository (with --for: any source) holding several skills: install "
    "this one (repeatable).",
)
@click.option("--all", "all_skills", is_flag=True, help="Install every skill of the repository.")
@click.option(
    "--name", help="Install under this folder name (one skill from git, folder, archive)."
)
@dangerous_options
@click.option("--json", "as_json", is_flag=True, help="Print what was installed as JSON.")
@click.option(
    "--for",
    "for_agents",
    multiple=True,
    metavar="AGENT",
    help="Put the skill where this coding agent reads skills (repeatable; `all`: every "
    "detected agent), from any source; with --skill NAME only those skills of the "
    "source. See docs/agents.md.",
)
@click.option(
    "--copy",
    is_flag=True,
    help="With --for: a real copy in each agent's folder instead of links to .agents/skills.",
)
@registry_option
@click.option(
    "-g",
    "--global",
    "global_",
    is_flag=True,
    help="Use the managed skills folder (<state dir>/skills) instead of the workspace; "
    "with --for: the agents' global folders.",
)
@click.pass_obj
def install_cmd(
    obj: Context,
    source: str,
    version: str | None,
    tag: str | None,
    force: bool,
    skills: tuple[str, ...],
    all_skills: bool,
    name: str | None,
    dangerous: bool,
    reason: str | None,
    as_json: bool,
    registry: str | None,
    site: str | None,
    for_agents: tuple[str, ...],
    copy: bool,
    global_: bool,
) -> None:
    """Install a skill: SLUG, @owner/slug or skills-sh:owner/repo/slug (registry), a git
    URL or owner/repo[/path][@ref], a folder (./path), or a .zip/.tar.gz archive (file or
    URL).

    Every skill is scanned first; critical findings block the install unless
    --dangerously-force --reason TEXT is given (the reason is recorded). Installed
    skills go to <workspace>/skills/<name> (with --global: the managed folder) and are
    recorded in .clawhub/lock.json (registry) or .skillbook/lock.json (other sources).
    """
    from skillbook.distribution.registry import RegistryError

    reason = force_reason(dangerous, reason)
    if for_agents:
        conflicting = [flag for flag, given in (("--name", name), ("--force", force)) if given]
        if conflicting:
            fail(f"--for does not take {', '.join(conflicting)}", EXIT_ERROR)
        if version and tag:
            fail("use either --version or --tag", EXIT_ERROR)
        _install_for(
            obj,
            source,
            for_agents,
            global_,
            copy,
            reason,
            as_json,
            skills,
            registry=registry,
            site=site,
            version=version,
            tag=tag,
        )
        return
    if copy:
        fail("--copy only goes with --for AGENT", EXIT_ERROR)
    if version and tag:
        fail("use either --version or --tag", EXIT_ERROR)
    settings, installer = build_installer(
        obj, registry=registry, site=site, global_=global_, as_json=as_json
    )
    options = install_options(
        settings,
        version=version,
        tag=tag,
        force=force,
        force_reason=reason,
        skills=skills,
        all_skills=all_skills,
        name=name,
    )
    try:
        outcomes = installer.install(source, options)
    except RegistryError as exc:
        if not as_json:
            scan_hint(exc.code)
        registry_error(exc)
    if as_json:
        emit_json({"installed": [o.to_json() for o in outcomes]})
        return
    lines = []
    for outcome in outcomes:
        for warning in outcome.warnings:
            say_stderr(warning)
        lines.append(f"Installed {outcome.name}@{outcome.display_version()} -> {outcome.target}")
        if outcome.audit_file is not None:
            lines.append(f"Recorded in {outcome.audit_file}")
    emit_lines(lines)


def _install_for(
    obj: Context,
    source: str,
    for_agents: tuple[str, ...],
    global_: bool,
    copy: bool,
    reason: str | None,
    as_json: bool,
    skills: tuple[str, ...],
    *,
    registry: str | None,
    site: str | None,
    version: str | None,
    tag: str | None,
) -> None:
    from skillbook.cli.agents_support import agent_command, agents_failed
    from skillbook.distribution.agents import AgentsError
    from skillbook.distribution.agents.ops import install_for

    run = agent_command(
        obj,
        for_agents,
        as_json=as_json,
        registry=registry,
        site=site,
        version=version,
        tag=tag,
        force_reason=reason,
    )
    try:
        done = install_for(
            source,
            run.agents,
            run.where,
            global_=global_,
            copy=copy,
            force_reason=reason,
            state_dir=run.settings.paths.state_dir,
            picks=skills,
            fetcher=run.fetcher,
        )
    except AgentsError as exc:
        if not as_json:
            scan_hint(exc.code)
        agents_failed(exc)
    if as_json:
        emit_json({"installed": [d.to_json() for d in done]})
        return
    lines = []
    for item in done:
        for warning in item.warnings:
            say_stderr(warning)
        for placement in item.plan.placements:
            lines.append(f"Installed {item.name} for {placement.agent} -> {placement.path}")
    emit_lines(lines)
