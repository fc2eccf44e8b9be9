"""A command group whose subcommands take the global options and have examples.

``skillbook drafts promote ID -w ws`` works like ``skillbook -w ws drafts promote ID``,
and ``--help`` of each subcommand ends with its ``Examples:`` block
(:data:`skillbook.cli.examples.EXAMPLES` under ``"<group> <command>"``).
"""

from __future__ import annotations

import click

from skillbook.cli.examples import epilog
from skillbook.cli.options import add_global_options

__all__ = ["SubcommandGroup"]


class SubcommandGroup(click.Group):
    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is not None:
            add_global_options(found)
            if not found.epilog:
                found.epilog = epilog(f"{self.name} {cmd_name}")
        return found
