"""Asking before the model's commands run: the question, the flags, the policy.

On a terminal, ``run`` and ``chat`` ask before each command the model wants ``exec``
to run, unless the config's policy (``skills.exec``) already allows or refuses it;
without a terminal no one can be asked and such commands are refused. ``--yes`` runs
every command unasked; ``--confirm`` asks about every one, even allowlisted ones;
``--no-confirm`` is deprecated and changes nothing. Slash commands the user typed are
never asked about. The decision itself is :mod:`skillbook.runtime.approval`.
"""

from __future__ import annotations

import signal
import sys
from typing import TYPE_CHECKING, Final

import click

from skillbook.cli.printing import Printer
from skillbook.runtime.approval import ExecPolicy, show_command

if TYPE_CHECKING:
    from skillbook.config.file import Config
    from skillbook.runtime.providers.base import ToolCall

CONFIRM_ENV: Final = "SKILLBOOK_CONFIRM_EXEC"
CONFIRM_QUESTION: Final = "Run it? [y/N] "
NO_CONFIRM_NOTICE: Final = (
    "skillbook: --no-confirm (or SKILLBOOK_CONFIRM_EXEC=0) is deprecated and changes nothing: "
    "commands the model runs are asked about by default; pass --yes to run them without asking"
)


def exec_request_text(call: ToolCall) -> str:
    """The whole command of an ``exec`` call, its skill and folder, as the question shows it.

    Every character that could hide or reorder what runs is shown as an escape
    (:func:`skillbook.runtime.approval.show_command`).
    """
    args = call.arguments
    skill, cwd, command = args.get("skill"), args.get("cwd"), args.get("command")
    head = f"as skill {skill}" if isinstance(skill, str) and skill else "with no skill"
    if isinstance(cwd, str) and cwd:
        head += f", in {cwd}"
    body = command if isinstance(command, str) else repr(dict(args))
    return "\n".join(
        [f"? The model wants to run this command {show_command(head)}:"]
        + [f"    {show_command(line)}" for line in body.split("\n")]
    )


def is_yes(answer: str | None) -> bool:
    return (answer or "").strip().lower() in ("y", "yes")


def exec_policy(config: Config, *, confirm: bool | None, yes: bool) -> ExecPolicy | None:
    """The policy ``--yes``/``--confirm`` ask for, or None for the config's own."""
    from skillbook.cli.context import fail

    if yes and confirm:
        fail("--yes and --confirm contradict each other: pass one of them")
    if confirm is False:
        click.echo(NO_CONFIRM_NOTICE, err=True)
    if yes:
        return ExecPolicy.allow_all()
    if confirm:
        return ExecPolicy.from_config(config, ask_everything=True)
    return None


class TerminalConfirm:
    """``run``'s question: asks on stderr, reads the answer from the terminal.

    Called on the event loop's thread, which has nothing else to do while a step's
    commands wait for approval. Ctrl-C at the question aborts the whole run. Only
    given to the agent when stdin is a terminal: piped text is never an answer.
    """

    def __init__(self, printer: Printer) -> None:
        self.printer = printer

    def __call__(self, call: ToolCall) -> bool:
        self.printer.end_line()
        sys.stderr.write(exec_request_text(call) + "\n" + CONFIRM_QUESTION)
        sys.stderr.flush()
        # asyncio.run's own handler only cancels at the next await; the default one
        # interrupts the blocking read.
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            return is_yes(sys.stdin.readline())
        finally:
            signal.signal(signal.SIGINT, previous)
