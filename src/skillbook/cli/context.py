"""What every command shares: the global options, the settings they select, and output.

Input: the global options (``--workspace --config --agent --mode --compat --color``), given
before or after the command. Output: :class:`Context` (``ctx.obj``), which resolves
:class:`~skillbook.config.run_settings.Settings` and books and exits with one line on error, and
the writers :func:`emit_lines`, :func:`emit_json` and :func:`fail`.

Errors: one line on stderr, ``skillbook: <what is wrong>``; under ``--json`` a JSON
object ``{"error": <message>, "code": <stable code>}`` on stdout instead. Exit codes:
0 success, 1 findings, 2 could not run.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NoReturn

import click

from skillbook.cli import render
from skillbook.cli.style import Style
from skillbook.config.mode import MODE_NAMES
from skillbook.errors import AgentNotFound, ConfigError, SkillbookError
from skillbook.pipeline.cache import footprint

if TYPE_CHECKING:
    from skillbook.config.run_settings import Settings
    from skillbook.pipeline.book import Loader, SkillBook

EXIT_OK: Final = 0
EXIT_FINDINGS: Final = 1
EXIT_ERROR: Final = 2
MODES: Final = MODE_NAMES

#: Stable ``code`` values of ``--json`` errors.
ERR_CONFIG: Final = "config-invalid"
ERR_AGENT: Final = "unknown-agent"
ERR_WORKSPACE: Final = "workspace-missing"
ERR_PATH: Final = "path-not-found"
ERR_SKILL: Final = "skill-not-found"
ERR_EXISTS: Final = "already-exists"
ERR_USAGE: Final = "bad-argument"
ERR_OTHER: Final = "error"


def error_code(exc: BaseException) -> str:
    """The ``--json`` error code of a library exception."""
    if isinstance(exc, ConfigError):
        return ERR_CONFIG
    if isinstance(exc, AgentNotFound):
        return ERR_AGENT
    code = getattr(exc, "code", None)
    return code if isinstance(code, str) and code else ERR_OTHER


@dataclass(frozen=True, slots=True)
class Context:
    """The global options of one invocation (``ctx.obj``)."""

    workspace: str | None = None
    config: str | None = None
    agent: str | None = None
    mode: str | None = None
    compat: str | None = None
    color: str = "auto"
    #: ``--no-cache``: False; None leaves it to SKILLBOOK_CACHE and skills.cache.
    cache: bool | None = None

    @property
    def style(self) -> Style:
        return Style.detect(self.color)

    def settings(self) -> Settings:
        """The settings the options select; exits 2 with one line when they cannot be read."""
        from skillbook.config.run_settings import Settings

        try:
            settings = Settings.resolve(
                env=footprint.recorded(os.environ),
                cwd=Path.cwd(),
                config=self.config,
                workspace=self.workspace,
                agent=self.agent,
                mode=self.mode,
                compat=self.compat,
            )
        except SkillbookError as exc:
            fail(str(exc), error=error_code(exc))
        except OSError as exc:
            fail(_os_error(exc), error=ERR_PATH)
        note = settings.paths.config_location.note()
        if note is not None:
            footprint.make_open("a config note may go to stderr")
        if note is not None and _is_terminal(sys.stderr):
            # Only people at a terminal need telling; scripts see it in `skillbook doctor`.
            click.echo(
                Style.detect(self.color, stream=sys.stderr).text(f"skillbook: {note}"), err=True
            )
        return settings

    def loader(self) -> Loader:
        """A Loader for the selected workspace and config (exits 2 when they are missing)."""
        settings = self.settings()
        chosen = settings.workspace
        footprint.probe(chosen.path)
        if chosen.configured and not chosen.path.is_dir():
            source = "" if chosen.reason == "--workspace" else f" (from {chosen.reason})"
            fail(f"workspace folder {chosen.path}{source} does not exist", error=ERR_WORKSPACE)
        try:
            from skillbook.pipeline.book import Loader

            return Loader.from_settings(
                settings, **({"cache": False} if self.cache is False else {})
            )
        except SkillbookError as exc:
            fail(str(exc), error=error_code(exc))
        except OSError as exc:
            fail(_os_error(exc), error=ERR_PATH)

    def book(self) -> SkillBook:
        loader = self.loader()
        try:
            return loader.load()
        except SkillbookError as exc:
            fail(str(exc), error=error_code(exc))
        except OSError as exc:
            fail(_os_error(exc), error=ERR_PATH)


def _os_error(exc: OSError) -> str:
    return f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": ")


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def current_style() -> Style:
    """The style of the running command (``--color`` and the stream), else detected."""
    ctx = click.get_current_context(silent=True)
    obj = ctx.obj if ctx is not None else None
    return obj.style if isinstance(obj, Context) else Style.detect()


def json_requested() -> bool:
    """True inside a command invoked with ``--json``."""
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.params.get("as_json"))


def fail(message: str, code: int = EXIT_ERROR, *, error: str = ERR_OTHER) -> NoReturn:
    """Stop with ``message``: one line on stderr, or ``{"error", "code"}`` under ``--json``."""
    if json_requested():
        emit_json({"error": message, "code": error})
    else:
        style = Style.detect(stream=sys.stderr)
        click.echo(style.text(render.clean(f"skillbook: {message}")), err=True)
    sys.exit(code)


def emit_json(value: Any) -> None:
    plain = current_style().ascii
    click.echo(json.dumps(render.sanitize_json(value), indent=2, ensure_ascii=plain))


def emit_lines(lines: Sequence[str]) -> None:
    # Skill text must not drive the terminal, wherever a renderer forgot to clean it;
    # colour is added after cleaning, by the style.
    style = current_style()
    text = "\n".join(style.render(line) for line in render.clean("\n".join(lines)).split("\n"))
    click.echo(text, color=style.color)
