"""Skill NAME arguments: lookup with "did you mean", and shell completion of names.

Every command that takes a skill name uses :func:`find_skill` (exits 1 with
suggestions when nothing matches) and ``shell_complete=complete_skill_names``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
from click.shell_completion import CompletionItem

from skillbook.cli.context import ERR_SKILL, EXIT_FINDINGS, Context, emit_json, json_requested
from skillbook.cli.render import clean

if TYPE_CHECKING:
    from skillbook.pipeline.book import SkillBook
    from skillbook.pipeline.gating.status import StatusEntry


def did_you_mean(suggestions: list[str]) -> str:
    """`` Did you mean "a" or "b"?`` (empty without suggestions)."""
    if not suggestions:
        return ""
    return " Did you mean " + " or ".join(f'"{s}"' for s in suggestions) + "?"


def not_found_message(name: str, suggestions: list[str]) -> str:
    hint = did_you_mean(suggestions)
    return f'skill "{name}" not found.{hint} Run `skillbook list` to see available skills.'


def find_skill(book: SkillBook, name: str) -> StatusEntry:
    """The skill by name, skill key or folder name; else exit 1 saying what is close."""
    # Here, not at the top: `skillbook scan` imports this module (through the group)
    # and needs none of the catalog's status types.
    from skillbook.pipeline.lookup import find_entry, not_loaded, suggest_names

    entry = find_entry(book.status.skills, name)
    if entry is not None:
        return entry
    suggestions = suggest_names(book.status.skills, name)
    if json_requested():
        why = not_loaded(book.diagnostics, name)
        misplaced = [] if why else _misplaced(book, name)
        # OpenClaw's shape ({error, skill}) plus skillbook's code and suggestions.
        emit_json(
            {
                "error": "not found",
                "skill": name,
                "code": ERR_SKILL,
                "suggestions": suggestions,
                "notLoaded": [d.to_dict() for d in why],
                "misplaced": [str(p) for p in misplaced],
            }
        )
    else:
        from skillbook.cli.context import current_style

        text = missing_text(book, name, f"skillbook: {not_found_message(name, suggestions)}")
        click.echo(current_style().text(text), err=True)
    sys.exit(EXIT_FINDINGS)


def missing_text(book: SkillBook, name: str, not_found: str) -> str:
    """What to print for a NAME no skill answers to: ``not_found`` (the command's own
    sentence), or the diagnostics of a skill of that name that did not load, then any
    ``NAME/SKILL.md`` outside the skill folders."""
    from skillbook.cli.render import diag_lines
    from skillbook.pipeline.lookup import not_loaded

    why = not_loaded(book.diagnostics, name)
    if why:
        # Its folder is there: "not found, run list" would send the author to a
        # list without it; the diagnostics say what to fix.
        lines = [f'skillbook: skill "{name}" is there but not loaded:']
        lines += [f"  {line}" for line in diag_lines(book, why)]
    else:
        lines = [not_found]
    for path in [] if why else _misplaced(book, name):
        lines.append(
            f"{path} is not in a skill folder skillbook reads: move its folder into "
            f"{_workspace_skills(book)}, or list its parent in skills.load.extraDirs "
            "(`skillbook doctor` shows the skill folders)."
        )
    return clean("\n".join(lines))


def _misplaced(book: SkillBook, name: str) -> list[Path]:
    from skillbook.pipeline.lookup import misplaced_skill_files

    roots = [root.path for root in book.discovery.roots]
    return misplaced_skill_files(book.workspace, name, roots, home=book.paths.home)


def _workspace_skills(book: SkillBook) -> str:
    return f"{book.workspace}/skills/" if book.workspace is not None else "the workspace's skills/"


def complete_skill_names(
    ctx: click.Context, _param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """Names of the skills the command line selects so far (nothing on any error)."""
    obj = ctx.obj if isinstance(ctx.obj, Context) else None
    root = ctx.find_root().params
    if obj is None:
        obj = Context(
            workspace=root.get("workspace"),
            config=root.get("config"),
            agent=root.get("agent"),
            mode=root.get("mode"),
        )
    try:
        from skillbook.config.run_settings import Settings
        from skillbook.pipeline.book import Loader

        settings = Settings.resolve(
            config=obj.config, workspace=obj.workspace, agent=obj.agent, mode=obj.mode
        )
        book = Loader.from_settings(settings).load()
    except Exception:  # completion must never print a traceback into the shell
        return []
    return [
        CompletionItem(e.name, help=clean(" ".join(e.description.split()))[:80])
        for e in book.status.skills
        if e.name.startswith(incomplete)
    ]
