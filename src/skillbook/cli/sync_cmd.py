"""``skillbook sync TARGET``: copy the workspace's skills into a sandbox workspace."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from skillbook.base.atomic import write_atomic
from skillbook.cli.context import (
    ERR_PATH,
    ERR_USAGE,
    EXIT_FINDINGS,
    EXIT_OK,
    Context,
    emit_json,
    emit_lines,
    error_code,
    fail,
)
from skillbook.config.paths import resolve_user_path
from skillbook.diagnostics import Severity
from skillbook.distribution.sync import SyncError
from skillbook.distribution.sync.copytree import LINK_POLICIES
from skillbook.distribution.sync.result import SyncResult
from skillbook.distribution.sync.sandbox import env_file_text
from skillbook.distribution.sync.workspace import sync_book

EXAMPLES = """\b
Examples:
  skillbook sync /srv/sandbox
      copy the skills into /srv/sandbox/skills, swapped in atomically
  skillbook sync /srv/sandbox --mount /workspace/skills --print-prompt
      and print the catalog with the paths the sandbox sees
  skillbook sync /srv/sandbox --env-file sandbox.env
      and write the declared env var names for docker run --env-file"""


@click.command("sync", epilog=EXAMPLES)
@click.argument("target", type=click.Path(file_okay=False))
@click.option(
    "--mount",
    metavar="PATH",
    help="Where the sandbox sees TARGET/skills (e.g. /skills): write a catalog with "
    "those paths to TARGET/skills/.catalog.md.",
)
@click.option(
    "--print-prompt",
    is_flag=True,
    help="Print that catalog on stdout (the summary goes to stderr). Without --mount "
    "its paths are TARGET/skills/...",
)
@click.option(
    "--env-file",
    type=click.Path(dir_okay=False),
    help="Write the env var names the synced skills declare, one per line, for "
    "`docker run --env-file` (names only, never values).",
)
@click.option(
    "--links",
    type=click.Choice(LINK_POLICIES),
    default="openclaw",
    show_default=True,
    help="openclaw: links copied as OpenClaw does (targets made absolute host paths). "
    "sandbox: symlinked skills copied as folders, links inside a skill kept as "
    "written, links leaving it dropped.",
)
@click.option(
    "--skill",
    "skills",
    multiple=True,
    metavar="NAME",
    help="Sync only these skills (repeatable); like an agent allowlist, only ready skills.",
)
@click.option("--force", is_flag=True, help="Replace TARGET/skills even when no sync made it.")
@click.option(
    "--no-wait", is_flag=True, help="Exit 2 instead of waiting for another sync into TARGET."
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_obj
def sync_cmd(
    obj: Context,
    target: str,
    mount: str | None,
    print_prompt: bool,
    env_file: str | None,
    links: str,
    skills: tuple[str, ...],
    force: bool,
    no_wait: bool,
    as_json: bool,
) -> None:
    """Copy the workspace's skills into TARGET/skills, replacing it in one step.

    The skills are those OpenClaw's sandbox sync copies: every skill that wins its
    name (ready or not), or with --agent/--skill only the ready, allowed ones. Each
    goes to a folder named after its source folder (made unique with -2, -3, ...);
    .git and node_modules are left out. Exit 1 when a skill could not be synced.
    """
    loader = obj.loader()
    if skills:
        loader.skill_filter = list(skills)
    book = loader.load()
    if print_prompt and mount is None:
        mount = str(resolve_user_path(target, book.paths.home) / "skills")
    try:
        result = sync_book(book, target, mount=mount, links=links, force=force, wait=not no_wait)
        if env_file is not None:
            _write_text(Path(env_file), env_file_text(result.env))
    except SyncError as exc:
        fail(str(exc), error=error_code(exc))
    except ValueError as exc:
        fail(str(exc), error=ERR_USAGE)
    except OSError as exc:
        fail(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "), error=ERR_PATH)
    if as_json:
        emit_json(result.to_json())
    else:
        if print_prompt and result.catalog is not None:
            sys.stdout.write(result.catalog.text + "\n")
        lines = _summary(result, env_file)
        if print_prompt:
            click.echo("\n".join(lines), err=True)
        else:
            emit_lines(lines)
    sys.exit(EXIT_OK if result.ok else EXIT_FINDINGS)


def _summary(result: SyncResult, env_file: str | None) -> list[str]:
    if result.skipped:
        return [f"Nothing synced: {d.message}" for d in result.diagnostics]
    total = len(result.synced) + len(result.failed)
    lines = [f"Synced {len(result.synced)} of {_skills(total)} into {result.skills_dir}"]
    width = max((len(s.name) for s in result.synced), default=0)
    for s in result.synced:
        note = f"  ({s.renamed})" if s.renamed else ""
        lines.append(f"  {s.name.ljust(width)}  skills/{s.folder}{note}")
    if result.catalog is not None:
        kept = len(result.catalog.kept)
        lines.append(
            f"Catalog: {result.catalog_path} ({_skills(kept)}, paths under {result.mount})"
        )
    if result.env:
        lines.append("Environment the skills declare:")
        width = max(len(v.name) for v in result.env)
        for v in result.env:
            lines.append(f"  {v.name.ljust(width)}  {v.state:<7}  {', '.join(v.skills)}")
        names = [v.name for v in result.env if v.passable]
        if names:
            lines.append("  docker run " + " ".join(f"--env {n}" for n in names) + " ...")
        if env_file is not None:
            lines.append(f"  names written to {env_file}")
    problems = [d for d in result.diagnostics if d.severity is not Severity.INFO]
    if problems:
        lines.append("Problems:")
        lines.extend(f"  {d.format()}" for d in problems)
    return lines


def _skills(count: int) -> str:
    return f"{count} skill" if count == 1 else f"{count} skills"


def _write_text(path: Path, text: str) -> None:
    """Write through a temporary file and a rename, so readers never see half a file."""
    write_atomic(path, text, prefix=f".{path.name}.tmp-", suffix="")
