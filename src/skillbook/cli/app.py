"""``skillbook``: the command line, a thin layer over :mod:`skillbook.pipeline.book`.

Exit codes: 0 success; 1 findings (``validate`` errors, ``check --fail-on``, ``info``
of an unknown skill); 2 could not run (bad config, unknown agent, bad arguments,
unreadable paths). Errors go to stderr in one line that says what to do, or with
``--json`` to stdout as ``{"error": ..., "code": ...}``.

The small commands live here; bigger ones in ``cli/<name>_cmd.py``, registered in
:attr:`Group.EXTRA` and imported on first use.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final

import click

from skillbook.cli import render
from skillbook.cli.context import (
    EXIT_FINDINGS,
    Context,
    emit_json,
    emit_lines,
    fail,
)
from skillbook.cli.examples import epilog
from skillbook.cli.groups import SubcommandGroup
from skillbook.cli.names import complete_skill_names, find_skill
from skillbook.cli.options import add_global_options, global_options
from skillbook.cli.prompt_output import write_prompt
from skillbook.pipeline.cache import footprint
from skillbook.version import __version__

if TYPE_CHECKING:
    from skillbook.distribution.registry.lockfile import Origin

__all__ = ["Group", "cli", "main"]


class Group(SubcommandGroup):
    """The ``skillbook`` group: its bigger commands live in their own modules.

    They are imported on first use (:meth:`get_command`), so ``skillbook list`` or
    ``prompt`` do not pay for asyncio, the agent loop or the MCP SDK. Every command
    gets the global options and an ``Examples:`` block.
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
        "validate": "skillbook.cli.validate_cmd:validate_cmd",
        "doctor": "skillbook.cli.doctor_cmd:doctor_cmd",
        "new": "skillbook.cli.new_cmd:new_cmd",
        "completion": "skillbook.cli.completion_cmd:completion_cmd",
        "setup": "skillbook.cli.setup_cmd:setup_cmd",
        "scan": "skillbook.cli.scan_cmd:scan_cmd",
        "sync": "skillbook.cli.sync_cmd:sync_cmd",
        "load": "skillbook.cli.load_cmd:load_cmd",
        "search": "skillbook.cli.search_cmd:search_cmd",
        "install": "skillbook.cli.install_cmd:install_cmd",
        "update": "skillbook.cli.update_cmd:update_cmd",
        "remove": "skillbook.cli.remove_cmd:remove_cmd",
        "use": "skillbook.cli.use_cmd:use_cmd",
        "restore": "skillbook.cli.restore_cmd:restore_cmd",
        "verify": "skillbook.cli.verify_cmd:verify_cmd",
        "pin": "skillbook.cli.pin_cmd:pin_cmd",
        "unpin": "skillbook.cli.unpin_cmd:unpin_cmd",
        "sessions": "skillbook.cli.sessions_cmd:sessions_cmd",
        "drafts": "skillbook.cli.drafts_cmd:drafts_cmd",
        "usage": "skillbook.cli.usage_cmd:usage_cmd",
        "registry": "skillbook.cli.registry_cmd:registry_cmd",
        "publish": "skillbook.cli.publish_cmd:publish_cmd",
        "skills": "skillbook.cli.skills_cmd:skills_cmd",
        "inspect": "skillbook.cli.skills_cmd:inspect_cmd",
    }
    #: Other spellings -> command name. Shown on the command's ``--help`` row
    #: ("also: …"), not as rows of their own; ``explore`` is the clawhub CLI's.
    ALIASES: ClassVar[dict[str, str]] = {
        "uninstall": "remove",
        "rm": "remove",
        "explore": "search",
    }

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return self._command(ctx, self.ALIASES.get(cmd_name, cmd_name))

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.EXTRA} - HIDDEN)

    def _command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        # click's own lookup: SubcommandGroup's would name the epilog "skillbook CMD".
        found = click.Group.get_command(self, ctx, cmd_name)
        if found is None and cmd_name in self.EXTRA:
            found = _extra_command(self.EXTRA[cmd_name])
            self.add_command(found, cmd_name)
        if found is not None:
            add_global_options(found)
            if not found.epilog:
                found.epilog = epilog(cmd_name)
        return found

    def spellings(self, ctx: click.Context) -> list[str]:
        """What a mistyped command may be corrected to: commands and aliases, not hidden ones."""
        return [*self.list_commands(ctx), *self.ALIASES]

    def guess(self, name: str) -> str | None:
        return GUESSES.get(name.lower())

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # click cuts summaries to the width with "..."; ours are one line, shown whole.
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                summary = command.get_short_help_str(limit=10_000)
                also = [a for a, target in self.ALIASES.items() if target == name]
                if also:
                    summary = f"{summary} Also: {', '.join(also)}."
                rows.append((name, summary))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


#: Commands that only point elsewhere: not listed (help, completion), not suggested.
HIDDEN: Final = frozenset({"inspect"})

#: Words from other tools that are no command here, and what does that job. Spelling
#: alone answered `lint` with `list`, `create` with `restore` and `version` with
#: `verify`; these words are not typos. Only text: nothing runs in their stead.
GUESSES: Final[dict[str, str]] = {
    "help": "for help: `skillbook --help` or `skillbook COMMAND --help`",
    "version": "for the version: `skillbook --version`",
    "add": "to add a skill: `skillbook install SOURCE`, or `skillbook new NAME` to start one",
    "show": "to show one skill: `skillbook info NAME`",
    "status": "for what is ready and why not: `skillbook check` (or `skillbook list`)",
    "lint": "to lint skills: `skillbook validate PATH`",
    "init": "to start a skill: `skillbook new NAME`",
    "create": "to start a skill: `skillbook new NAME`",
    "agents": "for coding agents (Claude Code, Codex, Cursor, …): `skillbook install SOURCE "
    "--for AGENT` and `skillbook list --for AGENT` (the ids: docs/agents.md)",
    "find": "to find skills: `skillbook select REQUEST` (among yours) or "
    "`skillbook search QUERY` (in a registry)",
    "config": "for the config in effect and why: `skillbook doctor`",
    "upgrade": "to update installed skills: `skillbook update`",
    "delete": "to remove an installed skill: `skillbook remove NAME`",
}


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
    epilog=epilog(""),
)
@global_options
@click.version_option(__version__, prog_name="skillbook")
@click.pass_context
def cli(
    ctx: click.Context,
    workspace: str | None,
    config: str | None,
    agent: str | None,
    mode: str | None,
    compat: str | None,
    color: str,
    cache: bool | None,
) -> None:
    """Discover, check and render agent skills (SKILL.md), as OpenClaw does.

    Skills come from six sources, highest precedence last: extra dirs, bundled,
    managed (<state dir>/skills), ~/.agents/skills, <workspace>/.agents/skills,
    <workspace>/skills. Global options may also follow the command.
    """
    ctx.obj = Context(
        workspace=workspace,
        config=config,
        agent=agent,
        mode=mode,
        compat=compat,
        color=color,
        cache=cache,
    )
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_cmd)


@cli.command("list")
@click.option(
    "--json", "as_json", is_flag=True, help="Print JSON (OpenClaw's shape plus diagnostics)."
)
@click.option("--eligible", is_flag=True, help="Only skills that are ready to use.")
@click.option("-v", "--verbose", is_flag=True, help="Add a column with what is missing.")
@click.option(
    "--for",
    "for_agent",
    metavar="AGENT",
    help="List the skills in the folder where this coding agent reads skills (docs/agents.md).",
)
@click.option("-g", "--global", "global_", is_flag=True, help="With --for: its global folder.")
@click.pass_obj
def list_cmd(
    obj: Context,
    as_json: bool,
    eligible: bool,
    verbose: bool,
    for_agent: str | None = None,
    global_: bool = False,
) -> None:
    """List skills with their status, source and what they are missing."""
    from skillbook.distribution.registry.origins import installed_origins

    if for_agent is not None:
        _list_for(obj, for_agent, global_, as_json)
        return

    book = obj.book()
    entries = [e for e in book.status.skills if e.eligible or not eligible]
    origins = installed_origins(e.base_dir for e in entries)
    if as_json:
        report = book.status.to_json()
        report["skills"] = [_list_json(e.to_json(), origins.get(e.base_dir)) for e in entries]
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
    table = skills_table(
        entries,
        verbose=verbose,
        ascii=obj.style.ascii,
        installed={d: o.kind for d, o in origins.items()},
    )
    emit_lines([header, *table, *render.footer(book)])


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


def _list_for(obj: Context, agent_id: str, global_: bool, as_json: bool) -> None:
    from skillbook.cli.agents_support import agent_env
    from skillbook.distribution.agents import AgentsError
    from skillbook.distribution.agents.ops import list_for, resolve_agents

    where = agent_env(obj, obj.settings())
    try:
        (agent,) = resolve_agents((agent_id,), where)
        found = list_for(agent, where, global_=global_)
    except (AgentsError, ValueError) as exc:
        code = getattr(exc, "code", "agents.unknown")
        fail(str(exc), 2 if code == "agents.unknown" else 1, error=code)
    if as_json:
        emit_json({"agent": agent.id, "global": global_, "skills": [f.to_json() for f in found]})
        return
    if not found:
        emit_lines([f"No skills for {agent.display_name} here."])
        return
    emit_lines([f"{f.name}  {f.path}" + (f" -> {f.link}" if f.link else "") for f in found])


def _list_json(entry: dict[str, Any], installed: Origin | None = None) -> dict[str, Any]:
    out = {k: entry[k] for k in _LIST_KEYS if k in entry}
    if installed is not None:
        out["installed"] = installed.to_json()
    return out


@cli.command("info")
@click.argument("name", shell_complete=complete_skill_names)
@click.option("--json", "as_json", is_flag=True, help="Print the whole status entry as JSON.")
@click.pass_obj
def info_cmd(obj: Context, name: str, as_json: bool) -> None:
    """Show one skill (by name, skill key or folder name): status, requirements, setup."""
    book = obj.book()
    entry = find_skill(book, name)
    if as_json:
        data = entry.to_json()
        from skillbook.distribution.registry.origins import installed_origins

        installed = installed_origins([entry.base_dir]).get(entry.base_dir)
        if installed is not None:
            data["installed"] = installed.to_json()
        data["diagnostics"] = [
            d.to_dict() for d in book.diagnostics if d.path in (entry.file_path, entry.base_dir)
        ]
        emit_json(data)
        return
    from skillbook.distribution.registry.origins import installed_origins

    installed = installed_origins([entry.base_dir]).get(entry.base_dir)
    lines = render.info_lines(book, entry)
    if installed is not None:
        # After "Path:" in the Details block.
        at = next(
            (i + 1 for i, line in enumerate(lines) if line.startswith("  Path: ")), len(lines)
        )
        lines.insert(at, f"  Installed: {installed.describe()}")
    emit_lines(lines)


FAIL_ON = ("warning", "error")


@cli.command("check")
@click.option(
    "--json", "as_json", is_flag=True, help="Print JSON (OpenClaw's shape plus diagnostics)."
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    default=None,
    help="Exit 1 when a diagnostic of this severity or worse exists (for CI).",
)
@click.pass_obj
def check_cmd(obj: Context, as_json: bool, fail_on: str | None) -> None:
    """Audit what is ready, what is missing, and every skill not loaded or cut, with why."""
    from skillbook.cli.scan_cmd import check_section
    from skillbook.cli.usage_cmd import stale_section

    book = obj.book()
    stale, stale_lines = stale_section(book)
    scan_lines, scan_json = check_section(book)
    if as_json:
        report = render.check_json(book)
        report["stale"] = [s.to_json() for s in stale]
        report["diagnostics"] += [s.diagnostic().to_dict() for s in stale]
        emit_json({**report, "security": scan_json})
    else:
        emit_lines([*render.check_lines(book), *stale_lines, *scan_lines])
    if fail_on is not None and render.count_at_least(book.diagnostics, fail_on):
        sys.exit(EXIT_FINDINGS)


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
    # The catalog starts with two newlines (OpenClaw's format); print it as is, as
    # UTF-8 bytes even where the locale could not show them: it is the model's text.
    out = text + ("\n" if text else "")
    recorder = footprint.current()
    if recorder is not None:
        recorder.result = out
    write_prompt(out)


def main(argv: Sequence[str] | None = None) -> None:
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="skillbook")
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
