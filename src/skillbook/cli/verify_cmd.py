"""``skillbook verify [SLUG...]``: are the installed skills still what was installed?

Output: one line per tracked skill (``✓ unchanged``, ``✗ modified (1 changed:
SKILL.md)``, ``✗ folder missing``, ``? no fingerprint recorded``), with ``--remote``
followed by ``  <registry> verify: pass`` (the registry asked; or the decision and reasons); ``--json`` prints
``{"skills": [...]}``. Exit codes: 0 all unchanged (and passed), 1 any modified,
missing, unknown or failed, 2 bad arguments.
"""

from __future__ import annotations

import sys

import click

from skillbook.cli.context import EXIT_FINDINGS, Context, emit_json, emit_lines
from skillbook.cli.registry_support import (
    build_installer,
    global_option,
    registry_error,
    registry_option,
    workdir_of,
)


@click.command("verify")
@click.argument("slugs", nargs=-1, metavar="[SLUG]...")
@click.option(
    "--remote",
    is_flag=True,
    help="Also ask each registry skill's registry to verify the installed version "
    "(GET /api/v1/skills/<slug>/verify).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@registry_option
@global_option
@click.pass_obj
def verify_cmd(
    obj: Context,
    slugs: tuple[str, ...],
    remote: bool,
    as_json: bool,
    registry: str | None,
    site: str | None,
    global_: bool,
) -> None:
    """Check installed skills against the fingerprint recorded when they were installed
    (and, with --remote, against their registry's verification)."""
    from skillbook.distribution.registry import RegistryError
    from skillbook.distribution.registry.verify import verify_skills

    try:
        if remote:
            _, installer = build_installer(
                obj, registry=registry, site=site, global_=global_, as_json=True
            )
            with installer.session():
                results = verify_skills(installer.workdir, slugs, client_for=installer.client)
        else:
            results = verify_skills(workdir_of(obj.settings(), global_), slugs)
    except RegistryError as exc:
        registry_error(exc)
    if as_json:
        emit_json({"skills": [r.to_json() for r in results]})
    else:
        lines = []
        for result in results:
            lines.append(result.line())
            if result.remote_ok is not None:
                lines.append(result.remote_line())
        emit_lines(lines or ["No installed skills are tracked."])
    if any(not r.ok for r in results):
        sys.exit(EXIT_FINDINGS)
