"""``--confirm``: show the command the model wants ``exec`` to run and ask before it runs.

Slash commands the user typed are never asked about; only the model's ``exec`` calls
reach :class:`TerminalConfirm` (``run``) or :meth:`skillbook.cli.chat_cmd.Chat.confirm`.
"""

from __future__ import annotations

import signal
import sys
import unicodedata
from typing import TYPE_CHECKING, Final

import click

from skillbook.cli.printing import Printer
from skillbook.cli.render import clean

if TYPE_CHECKING:
    from skillbook.runtime.providers import ToolCall

CONFIRM_ENV: Final = "SKILLBOOK_CONFIRM_EXEC"
CONFIRM_QUESTION: Final = "Run it? [y/N] "
NO_TERMINAL_NOTICE: Final = (
    "skillbook: --confirm: stdin is not a terminal, so every command the model asks to run "
    "is declined"
)


def _visible(text: str) -> str:
    # Escape format characters (bidi overrides, zero-width) so the command shown is the
    # command that runs; clean() has already dropped ANSI and C0/C1 controls.
    return "".join(
        f"\\u{ord(ch):04x}" if unicodedata.category(ch) == "Cf" else ch for ch in clean(text)
    )


def exec_request_text(call: ToolCall) -> str:
    """The whole command of an ``exec`` call, its skill and folder, as ``--confirm`` shows it."""
    args = call.arguments
    skill, cwd, command = args.get("skill"), args.get("cwd"), args.get("command")
    head = f"as skill {skill}" if isinstance(skill, str) and skill else "with no skill"
    if isinstance(cwd, str) and cwd:
        head += f", in {cwd}"
    body = command if isinstance(command, str) else repr(dict(args))
    return "\n".join(
        [f"? The model wants to run this command {_visible(head)}:"]
        + [f"    {_visible(line)}" for line in body.split("\n")]
    )


def is_yes(answer: str | None) -> bool:
    return (answer or "").strip().lower() in ("y", "yes")


class TerminalConfirm:
    """``--confirm`` for ``run``: asks on stderr, reads the answer from the terminal.

    Called on the event loop's thread, which has nothing else to do while a step's
    commands wait for approval. Ctrl-C at the question aborts the whole run.
    """

    def __init__(self, printer: Printer) -> None:
        self.printer = printer
        self.terminal = sys.stdin.isatty()
        self.warned = False

    def __call__(self, call: ToolCall) -> bool:
        if not self.terminal:
            if not self.warned:
                self.warned = True
                self.printer.end_line()
                click.echo(NO_TERMINAL_NOTICE, err=True)
            return False
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
