"""How ``run`` and ``chat`` show a turn on a terminal: streamed text, one line per tool call.

Input: :data:`~skillbook.runtime.agent.AgentEvent` values as the agent emits them.
Output: text on the given streams, cleaned of terminal control sequences.
"""

from __future__ import annotations

from typing import IO, Final

import click

from skillbook.cli.render import clean
from skillbook.runtime.providers.base import TextDelta
from skillbook.runtime.turn import AgentEvent, ToolDeclined, ToolFinished, ToolStarted

DEFAULT_TARGET_CHARS: Final = 100


def short_path(path: str) -> str:
    """``~/a/b/weather/SKILL.md`` → ``~/…/weather/SKILL.md``."""
    parts = path.split("/")
    return path if len(parts) <= 4 else "/".join([parts[0], "…", *parts[-2:]])


def first_line(text: str, limit: int = DEFAULT_TARGET_CHARS) -> str:
    line = clean(text.strip().split("\n", 1)[0]) if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def tool_line(event: ToolStarted) -> str:
    """``→ read ~/…/weather/SKILL.md`` or ``→ exec curl … [weather]``."""
    name = event.call.name
    target = short_path(event.target) if name == "read" else first_line(event.target)
    skill = f"  [{event.skill}]" if event.skill and name != "read" else ""
    return clean(f"→ {name} {target}{skill}")


def result_line(event: ToolFinished) -> str:
    text = event.result.text
    if event.result.is_error:
        return f"  ✗ {first_line(text)}"
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if event.call.name == "read":
        return f"  ← {lines} lines"
    more = f" (+{lines - 1} lines)" if lines > 1 else ""
    return f"  ← {first_line(text) or '(no output)'}{more}"


def refusal_notice(message: str) -> str:
    """The one line that explains a refused command to the user."""
    from skillbook.runtime.approval import REFUSED_NO_ONE_RESULT

    if message == REFUSED_NO_ONE_RESULT:
        return (
            "skillbook: stdin is not a terminal, so commands the model asks to run are "
            "refused; run them anyway with --yes, or allow command prefixes in skills.exec.allow "
            "or skills.entries.<skill>.exec.allow"
        )
    return "skillbook: commands outside the allowlist are refused (skills.exec.policy is allowlist)"


class Printer:
    """Shows a turn as it happens: streamed text on ``out``, tool lines on ``tools_out``."""

    def __init__(
        self, out: IO[str], tools_out: IO[str] | None, *, stream_text: bool, color: bool
    ) -> None:
        self.out = out
        self.tools_out = tools_out
        self.stream_text = stream_text
        self.color = color
        self.at_line_start = True
        self.refusal_explained = False

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, TextDelta) and self.stream_text:
            self.write(clean(event.text))
        elif isinstance(event, ToolStarted):
            self.line(tool_line(event))
        elif isinstance(event, ToolFinished):
            self.line(result_line(event))
        elif isinstance(event, ToolDeclined):
            skill = f"  [{event.skill}]" if event.skill else ""
            how = "declined" if event.asked else "refused"
            self.line(clean(f"  ✗ {how}: {first_line(event.target)}{skill}"))
            if not event.asked and not self.refusal_explained:
                # Once per session: why nobody was asked, and how to allow commands.
                self.refusal_explained = True
                self.end_line()
                click.echo(refusal_notice(event.message), err=True)

    def write(self, text: str) -> None:
        if text:
            self.out.write(text)
            self.out.flush()
            self.at_line_start = text.endswith("\n")

    def line(self, text: str) -> None:
        if self.tools_out is None:
            return
        self.end_line()
        styled = click.style(text, dim=True) if self.color else text
        self.tools_out.write(styled + "\n")
        self.tools_out.flush()

    def end_line(self) -> None:
        if not self.at_line_start:
            self.write("\n")
