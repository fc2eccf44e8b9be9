"""``skillbook``: the command line, a thin layer over :mod:`skillbook.book`.

Exit codes: 0 success; 1 findings (``validate`` errors, ``info`` of an unknown
skill); 2 could not run (bad config, bad arguments, unreadable paths).
Errors go to stderr in one line that says what to do.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, NoReturn

import click

from skillbook import __version__
from skillbook.book import Loader, SkillBook
from skillbook.cli import render
from skillbook.config import Config
from skillbook.errors import SkillbookError, SkillNotFound
from skillbook.mode import MODE_NAMES
from skillbook.paths import Paths, resolve_user_path

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2
MODES = MODE_NAMES


@dataclass(frozen=True, slots=True)
class Context:
    workspace: str | None
    config: str | None
    agent: str | None
    mode: str | None

    def loader(self) -> Loader:
        """A Loader for the workspace and config the global options name (exits 2 on error)."""
        try:
            paths = Paths.from_process()
            config = self._config(paths)
            workspace, origin = self.workspace, "--workspace"
            if workspace is None:
                workspace, origin = _config_workspace(config, self.agent) or (os.getcwd(), "")
            if origin and not resolve_user_path(workspace, paths.home).is_dir():
                source = "" if origin == "--workspace" else f" (from {origin} in {config.file})"
                fail(f"workspace folder {workspace}{source} does not exist")
            return Loader(workspace, config=config, agent=self.agent, mode=self.mode)
        except SkillbookError as exc:
            fail(str(exc))
        except OSError as exc:
            fail(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "))

    def book(self) -> SkillBook:
        loader = self.loader()
        try:
            return loader.load()
        except SkillbookError as exc:
            fail(str(exc))
        except OSError as exc:
            fail(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "))

    def _config(self, paths: Paths) -> Config:
        """The config file, read once: ``--config``, else what the library would pick."""
        from skillbook.config import default_config_path, load_config

        path = default_config_path(paths, explicit=self.config)
        return load_config(path) if path is not None else Config.empty()


def _config_workspace(config: Config, agent: str | None) -> tuple[str, str] | None:
    """The agent's workspace and the key it came from, as OpenClaw resolves it.

    The agent is ``--agent``, else the default one (``default: true``, else the first
    listed, else ``main``). Its own ``workspace`` wins; the default agent falls back to
    ``agents.defaults.workspace``, another agent to ``<defaults.workspace>/<id>``.
    Where OpenClaw would fall back to its state dir, skillbook uses the current folder.
    """
    from skillbook.gate import normalize_agent_id

    agents = config.agents.agents
    marked = [a for a in agents if a.default]
    chosen = (marked[0] if marked else agents[0]).id.strip() if agents else ""
    default_id = normalize_agent_id(chosen or None)
    wanted = normalize_agent_id(agent) if agent is not None else default_id
    for index, entry in enumerate(agents):
        if normalize_agent_id(entry.id) == wanted and (entry.workspace or "").strip():
            return entry.workspace or "", f"agents.list[{index}].workspace"
    fallback = (config.agents.default_workspace or "").strip()
    if not fallback:
        return None
    if wanted == default_id:
        return fallback, "agents.defaults.workspace"
    return os.path.join(fallback, wanted), "agents.defaults.workspace"


def fail(message: str, code: int = EXIT_ERROR) -> NoReturn:
    click.echo(f"skillbook: {message}", err=True)
    sys.exit(code)


def emit_json(value: Any) -> None:
    click.echo(json.dumps(render.sanitize_json(value), indent=2, ensure_ascii=False))


def emit_lines(lines: Sequence[str]) -> None:
    # Skill text must not drive the terminal, wherever a renderer forgot to clean it.
    click.echo(render.clean("\n".join(lines)))


class Group(click.Group):
    """The ``skillbook`` group: its bigger commands live in their own modules.

    They are imported on first use (:meth:`get_command`), so ``skillbook list`` or
    ``prompt`` do not pay for asyncio, the agent loop or the MCP SDK.
    """

    #: command name -> "module:attribute"
    EXTRA: ClassVar[dict[str, str]] = {
        "watch": "skillbook.cli.watch_cmd:watch_cmd",
        "run": "skillbook.cli.run_cmd:run_cmd",
        "chat": "skillbook.cli.chat_cmd:chat_cmd",
        "serve": "skillbook.cli.serve_cmd:serve_cmd",
        "commands": "skillbook.cli.commands_cmd:commands_cmd",
        "select": "skillbook.cli.select_cmd:select_cmd",
        "eval": "skillbook.cli.eval_cmd:eval_cmd",
    }

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.EXTRA})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is None and cmd_name in self.EXTRA:
            found = _extra_command(self.EXTRA[cmd_name])
            self.add_command(found, cmd_name)
        return found


def _extra_command(target: str) -> click.Command:
    import importlib

    module, attr = target.split(":")
    command = getattr(importlib.import_module(module), attr)
    assert isinstance(command, click.Command)
    return command


@click.group(
    cls=Group,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--workspace",
    "-w",
    type=click.Path(file_okay=False),
    help="Workspace folder (its skills/ and .agents/skills/). Default: the agent's workspace "
    "from --config, else the current folder.",
)
@click.option(
    "--config",
    "-c",
    type=click.Path(dir_okay=False),
    envvar="SKILLBOOK_CONFIG_PATH",
    help="Config file: an OpenClaw openclaw.json or skillbook's own (JSON5). "
    "Default: $SKILLBOOK_CONFIG_PATH, else <state dir>/skillbook.json if present.",
)
@click.option(
    "--agent", "-a", help="Agent id whose skill allowlist applies (agents.list[].skills)."
)
@click.option(
    "--mode",
    type=click.Choice(MODES),
    help="Spec mode: openclaw (default), mixed, legacy or strict (Agent Skills rules).",
)
@click.version_option(__version__, prog_name="skillbook")
@click.pass_context
def cli(
    ctx: click.Context,
    workspace: str | None,
    config: str | None,
    agent: str | None,
    mode: str | None,
) -> None:
    """Discover, check and render agent skills (SKILL.md), as OpenClaw does.

    Skills come from six sources, highest precedence last: extra dirs, bundled,
    managed (<state dir>/skills), ~/.agents/skills, <workspace>/.agents/skills,
    <workspace>/skills.
    """
    ctx.obj = Context(workspace=workspace, config=config, agent=agent, mode=mode)
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_cmd)


@cli.command("list")
@click.option(
    "--json", "as_json", is_flag=True, help="Print JSON (OpenClaw's shape plus diagnostics)."
)
@click.option("--eligible", is_flag=True, help="Only skills that are ready to use.")
@click.option("-v", "--verbose", is_flag=True, help="Add a column with what is missing.")
@click.pass_obj
def list_cmd(obj: Context, as_json: bool, eligible: bool, verbose: bool) -> None:
    """List skills with their status, source and what they are missing."""
    book = obj.book()
    entries = [e for e in book.status.skills if e.eligible or not eligible]
    if as_json:
        report = book.status.to_json()
        report["skills"] = [
            _list_json(e.to_json()) for e in book.status.skills if e.eligible or not eligible
        ]
        report["diagnostics"] = [d.to_dict() for d in book.diagnostics]
        emit_json(report)
        return
    if not entries:
        if eligible:
            emit_lines(["No eligible skills found. Run `skillbook list` to see all skills."])
        else:
            emit_lines(["No skills found.", *render.footer(book)])
        return
    from skillbook.cli.table import skills_table

    ready = sum(e.eligible for e in book.status.skills)
    header = f"Skills ({ready}/{len(book.status.skills)} ready)"
    emit_lines([header, *skills_table(entries, verbose=verbose), *render.footer(book)])


_LIST_KEYS = (
    "name",
    "description",
    "emoji",
    "eligible",
    "disabled",
    "blockedByAllowlist",
    "source",
    "bundled",
    "primaryEnv",
    "homepage",
    "origin",
    "missing",
)


def _list_json(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: entry[k] for k in _LIST_KEYS if k in entry}


@cli.command("info")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the whole status entry as JSON.")
@click.pass_obj
def info_cmd(obj: Context, name: str, as_json: bool) -> None:
    """Show one skill (by name or skill key): status, requirements, install options."""
    book = obj.book()
    try:
        entry = book.find(name)
    except SkillNotFound:
        if as_json:
            emit_json({"error": "not found", "skill": name})
        else:
            click.echo(
                f'skillbook: skill "{name}" not found. Run `skillbook list` to see available skills.',
                err=True,
            )
        sys.exit(EXIT_FINDINGS)
    if as_json:
        data = entry.to_json()
        data["diagnostics"] = [
            d.to_dict() for d in book.diagnostics if d.path in (entry.file_path, entry.base_dir)
        ]
        emit_json(data)
        return
    emit_lines(render.info_lines(book, entry))


@cli.command("check")
@click.option(
    "--json", "as_json", is_flag=True, help="Print JSON (OpenClaw's shape plus diagnostics)."
)
@click.pass_obj
def check_cmd(obj: Context, as_json: bool) -> None:
    """Audit: what is ready, what is missing, and every skill not loaded or cut, with why."""
    book = obj.book()
    if as_json:
        emit_json(render.check_json(book))
        return
    emit_lines(render.check_lines(book))


@cli.command("prompt")
@click.option(
    "--json", "as_json", is_flag=True, help="Print the catalog and its accounting as JSON."
)
@click.option("--section", is_flag=True, help="Print the whole '## Skills (mandatory)' section.")
@click.option(
    "--read-tool", default=None, help="Name of the read tool in the section (default: read)."
)
@click.pass_obj
def prompt_cmd(obj: Context, as_json: bool, section: bool, read_tool: str | None) -> None:
    """Print the skills catalog exactly as it goes into the system prompt."""
    book = obj.book()
    text = book.system_prompt_section(read_tool=read_tool) if section else book.prompt
    if as_json:
        cat = book.catalog
        emit_json(
            {
                "prompt": text,
                "compact": cat.compact,
                "truncated": cat.truncated,
                "included": [s.name for s in cat.kept],
                "omitted": [s.name for s in cat.omitted],
                "diagnostics": [d.to_dict() for d in cat.diagnostics],
            }
        )
        return
    # The catalog starts with two newlines (OpenClaw's format); print it as is.
    sys.stdout.write(text + ("\n" if text else ""))


@cli.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option(
    "--mode",
    "mode_opt",
    type=click.Choice(MODES),
    default=None,
    help="Rules to apply (default: strict).",
)
@click.option("--json", "as_json", is_flag=True, help="Print results as JSON.")
@click.pass_obj
def validate_cmd(obj: Context, paths: tuple[str, ...], mode_opt: str | None, as_json: bool) -> None:
    """Check skill folders or SKILL.md files; exit 1 if any has errors.

    PATH may be a skill folder, a SKILL.md, or a folder of skill folders.
    """
    from skillbook.validate import validate_many

    mode = mode_opt or obj.mode or "strict"
    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        fail(f"no such file or folder: {missing[0]}")
    results = validate_many([Path(p) for p in paths], mode)
    ok = all(r.ok for r in results)
    if as_json:
        emit_json({"mode": mode, "ok": ok, "results": [r.to_json() for r in results]})
    else:
        lines: list[str] = []
        for r in results:
            mark = "✓" if r.ok else "✗"
            lines.append(f"{mark} {r.path}" + (f" ({r.name})" if r.name else ""))
            lines.extend(f"    {render.clean(d.format())}" for d in r.diagnostics)
        bad = sum(not r.ok for r in results)
        lines.append("")
        lines.append(
            f"{len(results) - bad} valid, {bad} invalid ({mode} mode)"
            if results
            else "No skills found."
        )
        emit_lines(lines)
    sys.exit(EXIT_OK if ok and results else EXIT_FINDINGS)


def main(argv: Sequence[str] | None = None) -> None:
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="skillbook")
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
