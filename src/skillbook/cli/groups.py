"""A command group whose subcommands take the global options and have examples.

``skillbook drafts promote ID -w ws`` works like ``skillbook -w ws drafts promote ID``,
and ``--help`` of each subcommand ends with its ``Examples:`` block
(:data:`skillbook.cli.examples.EXAMPLES` under ``"<group> <command>"``).
"""

from __future__ import annotations

import click

from skillbook.cli.examples import epilog
from skillbook.cli.options import add_global_options
from skillbook.cli.suggest import suggest

__all__ = ["SubcommandGroup"]


class SubcommandGroup(click.Group):
    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        # click says only "No such command"; ours names the closest, never its opposite.
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            guess = self.guess(name)
            if guess is not None:
                ctx.fail(f"No such command {name!r}; {guess}.")
            close = suggest(name, self.spellings(ctx))
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            ctx.fail(f"No such command {name!r}.{hint}")
        return super().resolve_command(ctx, args)

    def guess(self, name: str) -> str | None:
        """What a word borrowed from another tool is done with here (None: no idea)."""
        return None

    def spellings(self, ctx: click.Context) -> list[str]:
        """What a mistyped subcommand may be corrected to."""
        return self.list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is not None:
            add_global_options(found)
            if not found.epilog:
                found.epilog = epilog(f"{self.name} {cmd_name}")
        return found
