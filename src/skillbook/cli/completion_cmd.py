"""``skillbook completion bash|zsh|fish``: print the shell's completion script.

The script is click's: the shell calls ``skillbook`` back with
``_SKILLBOOK_COMPLETE=<shell>_complete`` to complete commands, options, option values
and skill names (``info NAME``), which come from the workspace the command line
selects so far.
"""

from __future__ import annotations

from typing import Final

import click
from click.shell_completion import get_completion_class

SHELLS: Final = ("bash", "zsh", "fish")
PROG_NAME: Final = "skillbook"
COMPLETE_VAR: Final = "_SKILLBOOK_COMPLETE"
INSTALL: Final = {
    "bash": 'eval "$(skillbook completion bash)"  # in ~/.bashrc',
    "zsh": 'eval "$(skillbook completion zsh)"  # in ~/.zshrc',
    "fish": "skillbook completion fish > ~/.config/fish/completions/skillbook.fish",
}


@click.command("completion")
@click.argument("shell", type=click.Choice(SHELLS))
@click.pass_context
def completion_cmd(ctx: click.Context, shell: str) -> None:
    """Print the shell completion script for bash, zsh or fish (see the examples).

    It completes commands, options and skill names.
    """
    # The root group: cli.app's, which registers this command (and imports it lazily).
    cli = ctx.find_root().command
    complete_class = get_completion_class(shell)
    assert complete_class is not None  # every name in SHELLS is one click knows
    script = complete_class(cli, {}, PROG_NAME, COMPLETE_VAR).source()
    click.echo(f"# skillbook completion for {shell}; enable it with:\n#   {INSTALL[shell]}")
    click.echo(script)
