"""``skillbook run`` (one request) and ``skillbook chat`` (a terminal session).

Both drive :class:`skillbook.runtime.agent.Agent` over the book the global options
select. A slash command whose skill dispatches to a tool runs without any model;
everything else needs one (flags, else ``SKILLBOOK_*``/``OPENAI_*``/``ANTHROPIC_*``
variables, see :func:`skillbook.runtime.providers.model_from_env`). Without one, a
model-bound request prints a one-line hint and exits 2 (``run``) or carries on
(``chat``). Exit codes of ``run``: 0 answered, 1 the dispatched tool failed, 2 could
not run (no model, model request failed, bad options).

``--confirm`` (default ``$SKILLBOOK_CONFIRM_EXEC``) shows each command the model asks
``exec`` to run, with its skill, and runs it only on a "y" typed at the terminal;
slash commands the user typed are not asked about.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import unicodedata
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any, Final, TypeVar

import click

from skillbook.cli.app import EXIT_FINDINGS, Context, emit_json, fail
from skillbook.cli.render import STATUS_TEXT, clean
from skillbook.errors import ModelNotConfigured
from skillbook.runtime.agent import (
    DEFAULT_MAX_STEPS,
    Agent,
    AgentEvent,
    InvokeResult,
    TextDelta,
    ToolDeclined,
    ToolFinished,
    ToolStarted,
)

if TYPE_CHECKING:
    from skillbook.book import SkillBook
    from skillbook.runtime.providers import Message, ToolCall
    from skillbook.runtime.session import SkillSession

F = TypeVar("F", bound=Callable[..., Any])
#: Chat's own commands; skills may not take these names there.
CHAT_COMMANDS: Final = {
    "/skills": "list the skills and their status",
    "/reload": "rescan the skill folders",
    "/exit": "leave (also Ctrl-D)",
}
DEFAULT_TARGET_CHARS: Final = 100
CONFIRM_ENV: Final = "SKILLBOOK_CONFIRM_EXEC"
CONFIRM_QUESTION: Final = "Run it? [y/N] "
NO_TERMINAL_NOTICE: Final = (
    "skillbook: --confirm: stdin is not a terminal, so every command the model asks to run "
    "is declined"
)


def model_options(fn: F) -> F:
    """The options that pick the model, shared by ``run`` and ``chat``."""
    options = [
        click.option("--model", "-m", help="Model name (default: $SKILLBOOK_MODEL)."),
        click.option(
            "--base-url",
            help="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (Ollama); "
            "default: $SKILLBOOK_BASE_URL, $OPENAI_BASE_URL or $ANTHROPIC_BASE_URL.",
        ),
        click.option(
            "--api-key-env",
            metavar="NAME",
            help="Read the API key from this environment variable "
            "(default: OPENAI_API_KEY or ANTHROPIC_API_KEY).",
        ),
        click.option(
            "--provider",
            type=click.Choice(["openai", "anthropic"]),
            help="Wire protocol (default: $SKILLBOOK_PROVIDER, else guessed from the variables set).",
        ),
        click.option(
            "--max-steps",
            type=click.IntRange(min=1),
            default=DEFAULT_MAX_STEPS,
            show_default=True,
            help="Most model calls per request.",
        ),
        click.option(
            "--confirm/--no-confirm",
            envvar=CONFIRM_ENV,
            default=False,
            help="Ask before each command the model runs (default: $SKILLBOOK_CONFIRM_EXEC).",
        ),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def build_model(
    provider: str | None, model: str | None, base_url: str | None, api_key_env: str | None
) -> tuple[Any, ModelNotConfigured | None]:
    """``(model, None)`` or ``(None, the error: a one-line how-to and its .code)``."""
    from skillbook.runtime.providers import model_from_env

    api_key = None
    if api_key_env:
        api_key = os.environ.get(api_key_env, "").strip()
        if not api_key:
            fail(
                f"--api-key-env {api_key_env}: that environment variable is not set or empty",
                error="no-api-key",
            )
    try:
        return (
            model_from_env(
                os.environ, provider=provider, model=model, base_url=base_url, api_key=api_key
            ),
            None,
        )
    except ModelNotConfigured as exc:
        return None, exc


# --------------------------------------------------------------------------- display


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

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, TextDelta) and self.stream_text:
            self.write(clean(event.text))
        elif isinstance(event, ToolStarted):
            self.line(tool_line(event))
        elif isinstance(event, ToolFinished):
            self.line(result_line(event))
        elif isinstance(event, ToolDeclined):
            skill = f"  [{event.skill}]" if event.skill else ""
            self.line(clean(f"  ✗ declined: {first_line(event.target)}{skill}"))

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


# --------------------------------------------------------------------------- confirm


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


# --------------------------------------------------------------------------- run


@click.command("run")
@click.argument("text")
@model_options
@click.option("--json", "as_json", is_flag=True, help="Print the answer and tool calls as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="Do not show tool calls on stderr.")
@click.pass_obj
def run_cmd(
    obj: Context,
    text: str,
    model: str | None,
    base_url: str | None,
    api_key_env: str | None,
    provider: str | None,
    max_steps: int,
    confirm: bool,
    as_json: bool,
    quiet: bool,
) -> None:
    """Answer one request with the workspace's skills and print the answer.

    TEXT is a question, or a slash command like "/weather Shanghai". Commands of skills
    with `command-dispatch: tool` run their tool, and skills with
    `metadata.skillbook.commandExec` run their command, directly, with no model.
    """
    from skillbook.errors import ModelNotConfigured
    from skillbook.runtime.providers import ModelError

    book = obj.book()
    chat_model, problem = build_model(provider, model, base_url, api_key_env)
    stream = not as_json and sys.stdout.isatty()
    tools_out = None if quiet or as_json else sys.stderr
    printer = Printer(sys.stdout, tools_out, stream_text=stream, color=sys.stderr.isatty())
    approve = TerminalConfirm(printer) if confirm else None
    agent = Agent(book, chat_model, max_steps=max_steps, on_event=printer, approve=approve)
    try:
        result = asyncio.run(agent.invoke(text))
    except ModelNotConfigured as exc:
        fail(str(problem or exc), error=(problem or exc).code)
    except ModelError as exc:
        fail(f"model request failed: {exc}", error="model-error")
    turn = result.turn
    if as_json:
        inv = result.invocation
        emit_json(
            {
                "text": result.text,
                "dispatched": result.dispatched,
                "isError": result.is_error,
                "command": inv.command.name if inv else None,
                "skill": inv.command.skill_name if inv else None,
                "model": None if result.dispatched or chat_model is None else chat_model.name,
                "steps": turn.steps if turn else 0,
                "stop": turn.stop if turn else None,
                "toolCalls": [r.to_json() for r in turn.tool_calls]
                if turn
                else ([result.tool_run.to_json()] if result.tool_run else []),
            }
        )
    elif stream and turn is not None:
        printer.end_line()
        if turn.note:
            printer.write(f"\n{turn.note}\n")
    else:
        click.echo(clean(result.text))
    if result.is_error:
        sys.exit(EXIT_FINDINGS)


# --------------------------------------------------------------------------- chat


@click.command("chat")
@model_options
@click.pass_obj
def chat_cmd(
    obj: Context,
    model: str | None,
    base_url: str | None,
    api_key_env: str | None,
    provider: str | None,
    max_steps: int,
    confirm: bool,
) -> None:
    """Talk with a model that uses the workspace's skills, in the terminal.

    Tab completes slash commands. /skills lists the skills, /reload rescans them,
    /exit (or Ctrl-D) leaves; Ctrl-C cancels the running answer.
    """
    book = obj.book()
    chat_model, problem = build_model(provider, model, base_url, api_key_env)
    chat = Chat(book, chat_model, hint=str(problem or ""), max_steps=max_steps, confirm=confirm)
    try:
        asyncio.run(chat.run())
    except KeyboardInterrupt:  # Ctrl-C outside a turn leaves, like Ctrl-D
        click.echo()


class Chat:
    """The chat session: reads lines, handles chat commands, runs agent requests."""

    def __init__(
        self, book: SkillBook, model: Any, *, hint: str, max_steps: int, confirm: bool = False
    ) -> None:
        from skillbook.book import Loader
        from skillbook.commands import DEFAULT_RESERVED_NAMES
        from skillbook.runtime.session import SkillSession

        self.hint = hint
        self.interactive = sys.stdin.isatty() and sys.stdout.isatty()
        self.terminal_input = sys.stdin.isatty()
        self.warned = False
        self.printer = Printer(sys.stdout, sys.stdout, stream_text=True, color=self.interactive)
        # Same workspace, config, agent and mode as the book: /reload rescans the folders.
        loader = Loader(book.workspace, config=book.config, agent=book.agent, mode=book.mode)
        self.session: SkillSession = SkillSession(loader, watch=False)
        reserved = set(DEFAULT_RESERVED_NAMES) | {c[1:] for c in CHAT_COMMANDS} | {"quit"}
        self.agent: Agent = Agent(
            self.session,
            model,
            max_steps=max_steps,
            on_event=self.printer,
            reserved_commands=reserved,
            approve=self.confirm if confirm else None,
        )
        self.history: list[Message] = []

    def say(self, text: str = "") -> None:
        self.printer.end_line()
        self.printer.write(text + "\n")

    async def confirm(self, call: ToolCall) -> bool:
        """``--confirm``: show the command, read y/N; Ctrl-C cancels the whole answer."""
        if not self.terminal_input:
            if not self.warned:
                self.warned = True
                self.printer.end_line()
                click.echo(NO_TERMINAL_NOTICE, err=True)
            return False
        self.say(exec_request_text(call))
        if not self.interactive:
            self.printer.write(CONFIRM_QUESTION)
            answer = await asyncio.to_thread(sys.stdin.readline)
            self.printer.at_line_start = True  # the user's Enter ended the line
            return is_yes(answer)
        from prompt_toolkit import PromptSession

        # handle_sigint=False: prompt_toolkit would otherwise remove the chat's own
        # SIGINT handler (the one that cancels the answer) when the question ends.
        question: PromptSession[str] = PromptSession()
        try:
            return is_yes(await question.prompt_async(CONFIRM_QUESTION, handle_sigint=False))
        except EOFError:
            return False
        except KeyboardInterrupt:
            raise asyncio.CancelledError from None

    async def run(self) -> None:
        book = self.agent.book
        ready = sum(e.eligible for e in book.status.skills)
        name = self.agent.model.name if self.agent.model is not None else "none"
        self.say(f"skillbook chat · model {name} · {ready}/{len(book.status.skills)} skills ready")
        self.say(
            "Type a request or a slash command (/skills, /reload, /exit). "
            "Ctrl-C cancels an answer, Ctrl-D leaves."
        )
        if self.agent.model is None:
            self.say(
                f"skillbook: {self.hint}; slash commands that run a tool or a command, and /skills, still work"
            )
        read = self._prompt_reader() if self.interactive else self._line_reader()
        try:
            while True:
                try:
                    line = await read()
                except (EOFError, KeyboardInterrupt):
                    break
                if line is None:
                    break
                text = line.strip()
                if text in ("/exit", "/quit"):
                    break
                if text:
                    await self.handle(text)
        finally:
            self.session.close()

    async def handle(self, text: str) -> None:
        if text == "/skills":
            self.say("\n".join(skills_lines(self.agent)))
        elif text == "/reload":
            report = self.session.reload()
            self.agent.use_book(report.book)
            changes = [
                f"{label}: {', '.join(names)}"
                for label, names in (
                    ("added", report.added),
                    ("removed", report.removed),
                    ("changed", report.changed),
                )
                if names
            ]
            self.say(
                "Reloaded skills" + (f" ({'; '.join(changes)})" if changes else ", no changes")
            )
        else:
            result = await self.request(text)
            if result is None:
                return
            if result.turn is None:
                self.say(clean(result.text))
            else:
                self.history = list(result.messages)
                self.printer.end_line()
                if result.turn.note:
                    self.say(result.turn.note)

    async def request(self, text: str) -> InvokeResult | None:
        """One agent request; Ctrl-C cancels it (and its commands), not the chat."""
        from skillbook.errors import ModelNotConfigured
        from skillbook.runtime.providers import ModelError

        loop = asyncio.get_running_loop()
        task = asyncio.create_task(self.agent.invoke(text, self.history))
        loop.add_signal_handler(signal.SIGINT, task.cancel)
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # the chat itself is being cancelled
            self.say("[cancelled]")
        except ModelNotConfigured:
            self.say(f"skillbook: {self.hint or 'no model configured'}")
        except ModelError as exc:
            self.say(f"skillbook: model request failed: {exc}")
        finally:
            loop.remove_signal_handler(signal.SIGINT)
        return None

    def _prompt_reader(self) -> Callable[[], Any]:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.completion import Completer, Completion
        from prompt_toolkit.document import Document

        agent = self.agent

        class SlashCompleter(Completer):
            def get_completions(self, document: Document, event: Any) -> Any:
                typed = document.text_before_cursor
                if not typed.startswith("/") or any(c.isspace() for c in typed):
                    return
                words = [(f"/{c.name}", c.description) for c in agent.commands().commands]
                words += list(CHAT_COMMANDS.items())
                for word, meta in words:
                    if word.lower().startswith(typed.lower()):
                        yield Completion(word, -len(typed), display_meta=clean(meta))

        session: PromptSession[str] = PromptSession(completer=SlashCompleter())
        return lambda: session.prompt_async("› ")

    def _line_reader(self) -> Callable[[], Any]:
        async def read() -> str | None:
            line = await asyncio.to_thread(sys.stdin.readline)
            return line or None  # "" is end of input

        return read


def skills_lines(agent: Agent) -> list[str]:
    """``/skills``: every skill with its status and slash command."""
    book = agent.book
    commands = {c.skill_name: c.name for c in agent.commands().commands}
    entries = book.status.skills
    lines = [f"Skills ({sum(e.eligible for e in entries)}/{len(entries)} ready)"]
    width = max((len(e.name) for e in entries), default=0)
    for e in entries:
        command = f"/{commands[e.name]}" if e.name in commands else ""
        status = STATUS_TEXT.get(e.status, e.status)
        lines.append(clean(f"  {status:<16} {e.name:<{width}}  {command}".rstrip()))
    return lines
