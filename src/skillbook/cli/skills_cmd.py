"""Other tools' spellings: OpenClaw's ``skills …`` and the ``clawhub`` CLI's ``inspect``.

Someone used to ``openclaw skills list`` types ``skillbook skills list``; it runs
``skillbook list`` (spec §10: ``skills`` alone is ``list``). Each subcommand is the
top-level command itself, so options, output and exit codes are the same; the other
skillbook commands work there too (``skills remove``) but only OpenClaw's are listed.

``clawhub inspect SLUG`` shows a registry skill's detail; skillbook has no such command,
so ``inspect`` says which commands answer the question and exits 2 (``explore`` is an
alias of ``search``, in :attr:`skillbook.cli.app.Group.ALIASES`).
"""

from __future__ import annotations

from typing import Final

import click

from skillbook.cli.context import ERR_USAGE, fail
from skillbook.cli.groups import SubcommandGroup

__all__ = ["OPENCLAW_SKILLS", "inspect_cmd", "skills_cmd"]

#: ``openclaw skills <name>`` subcommands (spec §10), each the top-level command.
OPENCLAW_SKILLS: Final = ("list", "info", "check", "search", "install", "update")


class OpenClawSkills(SubcommandGroup):
    """Resolves each name to the ``skillbook`` command of the same name."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(OPENCLAW_SKILLS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        # Any other skillbook command works too (`skills remove`), only unlisted.
        if cmd_name in ("skills", "inspect"):
            return None
        root = ctx.find_root()
        assert isinstance(root.command, click.Group)
        return root.command.get_command(root, cmd_name)

    def spellings(self, ctx: click.Context) -> list[str]:
        # The root group (cli.app's, which imports this module lazily) knows its aliases.
        root = ctx.find_root().command
        if isinstance(root, SubcommandGroup) and root is not self:
            return [n for n in root.spellings(ctx.find_root()) if n != "skills"]
        return list(OPENCLAW_SKILLS)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(n, f"= skillbook {n}") for n in OPENCLAW_SKILLS]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(
    "skills",
    cls=OpenClawSkills,
    invoke_without_command=True,
)
@click.pass_context
def skills_cmd(ctx: click.Context) -> None:
    """OpenClaw's spellings: skills list|info|check|search|install|update are the
    skillbook commands of the same name (skills alone: list)."""
    if ctx.invoked_subcommand is None:
        root = ctx.find_root()
        assert isinstance(root.command, click.Group)
        listing = root.command.get_command(root, "list")
        assert listing is not None
        ctx.invoke(listing)


INSPECT_HINT: Final = (
    "skillbook has no `inspect` (the clawhub CLI's): `skillbook search SLUG` finds a skill "
    "on the registry with its version, `skillbook info NAME` shows an installed one, "
    "`skillbook verify --remote SLUG` asks the registry about the installed version"
)


@click.command(
    "inspect",
    hidden=True,
    add_help_option=False,
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def inspect_cmd(args: tuple[str, ...]) -> None:
    """The clawhub CLI's `inspect`: points to the skillbook commands that answer it."""
    fail(INSPECT_HINT, error=ERR_USAGE)
