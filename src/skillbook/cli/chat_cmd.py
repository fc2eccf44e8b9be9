"""``skillbook chat``: a terminal session with a model that uses the workspace's skills.

Without a model, slash commands that run a tool or a command, and ``/skills``, still
work; a model-bound request prints a one-line hint and the chat carries on.
``/reload`` rescans the folders with the book's workspace, config, agent and mode.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import click

from skillbook.cli.confirm import CONFIRM_QUESTION, exec_policy, exec_request_text, is_yes
from skillbook.cli.context import Context
from skillbook.cli.learning import Learning, learn_options
from skillbook.cli.model_options import build_model, model_options
from skillbook.cli.printing import Printer
from skillbook.cli.render import STATUS_TEXT, clean
from skillbook.runtime.agent import Agent
from skillbook.runtime.turn import InvokeResult

if TYPE_CHECKING:
    from skillbook.pipeline.book import SkillBook
    from skillbook.runtime.approval import ExecPolicy
    from skillbook.runtime.providers.base import Message, ToolCall
    from skillbook.runtime.session import SkillSession

#: Chat's own commands; skills may not take these names there.
CHAT_COMMANDS: Final = {
    "/skills": "list the skills and their status",
    "/reload": "rescan the skill folders",
    "/good": "mark the last task good and learn from it now",
    "/bad": "mark the last task bad: nothing is learned from it",
    "/exit": "leave (also Ctrl-D)",
}


@click.command("chat")
@model_options
@learn_options
@click.pass_obj
def chat_cmd(
    obj: Context,
    model: str | None,
    base_url: str | None,
    api_key_env: str | None,
    provider: str | None,
    max_steps: int,
    yes: bool,
    confirm: bool | None,
    learn: bool | None,
    refine: bool | None,
) -> None:
    """Talk with a model that uses the workspace's skills, in the terminal.

    Tab completes slash commands. /skills lists the skills, /reload rescans them,
    /exit (or Ctrl-D) leaves; Ctrl-C cancels the running answer. /good and /bad
    mark the last task; a successful task becomes a draft skill unless --no-learn.
    """
    book = obj.book()
    chat_model, problem = build_model(provider, model, base_url, api_key_env)
    policy = exec_policy(book.config, confirm=confirm, yes=yes)
    learning = Learning(book, learn=learn, refine=refine, model=chat_model, conversation=True)
    chat = Chat(
        book,
        chat_model,
        hint=str(problem or ""),
        max_steps=max_steps,
        policy=policy,
        learning=learning,
    )
    try:
        asyncio.run(chat.run())
    except KeyboardInterrupt:  # Ctrl-C outside a turn leaves, like Ctrl-D
        click.echo()


class Chat:
    """The chat session: reads lines, handles chat commands, runs agent requests."""

    def __init__(
        self,
        book: SkillBook,
        model: Any,
        *,
        hint: str,
        max_steps: int,
        policy: ExecPolicy | None = None,
        learning: Learning | None = None,
    ) -> None:
        from skillbook.pipeline.book import Loader
        from skillbook.runtime.session import SkillSession

        self.hint = hint
        self.interactive = sys.stdin.isatty() and sys.stdout.isatty()
        self.terminal_input = sys.stdin.isatty()
        self.printer = Printer(sys.stdout, sys.stdout, stream_text=True, color=self.interactive)
        # Same workspace, config, agent, mode and profile as the book: /reload rescans.
        loader = Loader(
            book.workspace,
            config=book.config,
            agent=book.agent,
            mode=book.mode,
            compat=book.profile,
        )
        self.session: SkillSession = SkillSession(loader, watch=False)
        builtin = book.profile.commands.reserved_names
        reserved = set(builtin) | {c[1:] for c in CHAT_COMMANDS} | {"quit"}
        self.agent: Agent = Agent(
            self.session,
            model,
            max_steps=max_steps,
            on_event=self.printer,
            reserved_commands=reserved,
            # Piped requests are no answers: without a terminal, no one is asked.
            approve=self.confirm if self.terminal_input else None,
            exec_policy=policy,
            recorder=learning.recorder if learning is not None else None,
        )
        self.history: list[Message] = []
        self.learning = learning

    def say(self, text: str = "") -> None:
        self.printer.end_line()
        self.printer.write(text + "\n")

    async def confirm(self, call: ToolCall) -> bool:
        """Show the command, read y/N; Ctrl-C cancels the whole answer."""
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
            "Type a request or a slash command (/skills, /reload, /good, /bad, /exit). "
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
            await self.settle()
            self.session.close()

    async def settle(self) -> None:
        """Learn from the last task unless the user marked it bad (learning.settle)."""
        if self.learning is not None:
            for line in await self.learning.settle():
                self.say(clean(line))

    async def handle(self, text: str) -> None:
        if text in ("/good", "/bad") and self.learning is not None:
            mark = self.learning.good if text == "/good" else self.learning.bad
            for line in await mark():
                self.say(clean(line))
        elif text == "/skills":
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
            await self.settle()
            result = await self.request(text)
            if self.learning is not None:
                self.learning.after_request()
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
        from skillbook.runtime import ModelError, ModelNotConfigured

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
