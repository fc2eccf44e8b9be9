"""``skillbook verify [SLUG...]``: are the installed skills still what was installed?

Output: one line per tracked skill (``✓ unchanged``, ``✗ modified (1 changed:
SKILL.md)``, ``✗ folder missing``, ``? no fingerprint recorded``); ``--json`` prints
``{"skills": [...]}``. Exit codes: 0 all unchanged, 1 any modified, missing or
unknown, 2 bad arguments.
"""

from __future__ import annotations

import sys

import click

from skillbook.cli.context import EXIT_FINDINGS, Context, emit_json, emit_lines
from skillbook.cli.registry_support import global_option, registry_error, workdir_of


@click.command("verify")
@click.argument("slugs", nargs=-1, metavar="[SLUG]...")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@global_option
@click.pass_obj
def verify_cmd(obj: Context, slugs: tuple[str, ...], as_json: bool, global_: bool) -> None:
    """Check installed skills against the fingerprint recorded when they were installed."""
    from skillbook.registry.errors import RegistryError
    from skillbook.registry.verify import verify_skills

    workdir = workdir_of(obj.settings(), global_)
    try:
        results = verify_skills(workdir, slugs)
    except RegistryError as exc:
        registry_error(exc)
    if as_json:
        emit_json({"skills": [r.to_json() for r in results]})
    else:
        emit_lines([r.line() for r in results] or ["No installed skills are tracked."])
    if any(not r.ok for r in results):
        sys.exit(EXIT_FINDINGS)
