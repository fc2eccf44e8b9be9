"""The global options, accepted before the command (``skillbook -w ws list``) and after it
(``skillbook list -w ws``).

:func:`global_options` decorates the ``skillbook`` group; :func:`add_global_options`
gives a command the same options, each of whose callbacks writes into ``ctx.obj`` (a
:class:`~skillbook.cli.context.Context`), so a value after the command wins over one
before it. A spelling the command already uses for its own option (``validate
--mode``) is left to the command.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Final, TypeVar

import click
from click.shell_completion import CompletionItem

from skillbook.cli.context import MODES, Context
from skillbook.cli.style import COLOR_CHOICES
from skillbook.config.profile import PROFILE_NAMES

F = TypeVar("F", bound=Callable[..., Any])


@dataclasses.dataclass(frozen=True, slots=True)
class _Spec:
    field: str
    decls: tuple[str, ...]
    help: str
    type: click.ParamType | None = None  # type: ignore[type-arg]
    metavar: str | None = None
    #: A flag that sets the field to False (``--no-cache``).
    off_flag: bool = False


def _complete_agents(
    ctx: click.Context, _param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """Agent ids of the config the command line names so far (nothing on any error)."""
    from skillbook.config.agent_scope import known_agent_ids
    from skillbook.config.run_settings import Settings

    root = ctx.find_root().params
    obj = ctx.obj if isinstance(ctx.obj, Context) else Context()
    try:
        settings = Settings.resolve(config=obj.config or root.get("config"))
    except Exception:  # completion must never print a traceback into the shell
        return []
    return [CompletionItem(i) for i in known_agent_ids(settings.config) if i.startswith(incomplete)]


SPECS: Final = (
    _Spec(
        "workspace",
        ("--workspace", "-w"),
        "Workspace folder (its skills/ and .agents/skills/). Default: the agent's workspace "
        "from the config, else OpenClaw's ~/.openclaw/workspace for OpenClaw's config, "
        "else the current folder.",
        click.Path(file_okay=False),
        "DIR",
    ),
    _Spec(
        "config",
        ("--config", "-c"),
        "Config file: an OpenClaw openclaw.json or skillbook's own (JSON5). Default: "
        "$SKILLBOOK_CONFIG_PATH, else ~/.skillbook/skillbook.json, else "
        "~/.openclaw/openclaw.json (`skillbook doctor` shows which).",
        click.Path(dir_okay=False),
        "FILE",
    ),
    _Spec(
        "agent",
        ("--agent", "-a"),
        "Agent id whose skill allowlist and workspace apply; must be in agents.list.",
        None,
        "ID",
    ),
    _Spec(
        "mode",
        ("--mode",),
        "Spec mode: openclaw (default), mixed, legacy or strict (Agent Skills rules). "
        "Default: skills.load.mode from the config.",
        click.Choice(MODES),
    ),
    _Spec(
        "compat",
        ("--compat",),
        "OpenClaw release to reproduce byte for byte: openclaw-2026.4 (default) or "
        "openclaw-2026.9. Default: skills.compat from the config.",
        click.Choice(PROFILE_NAMES),
    ),
    _Spec(
        "color",
        ("--color",),
        "Colour: auto (default: on a terminal, unless NO_COLOR), always or never.",
        click.Choice(COLOR_CHOICES),
    ),
    _Spec(
        "cache",
        ("--no-cache", "cache"),
        "Parse every SKILL.md again instead of reusing parsed files kept on disk between "
        "runs, and build the prompt anew instead of reusing a stored result (also "
        "SKILLBOOK_CACHE=0 or skills.cache: false).",
        off_flag=True,
    ),
)


def _store(field: str) -> Callable[[click.Context, click.Parameter, Any], None]:
    def callback(ctx: click.Context, _param: click.Parameter, value: Any) -> None:
        if value is None:
            return
        obj = ctx.obj if isinstance(ctx.obj, Context) else Context()
        ctx.obj = dataclasses.replace(obj, **{field: value})

    return callback


def _kwargs(spec: _Spec, *, for_group: bool) -> dict[str, Any]:
    if spec.off_flag:
        return {
            "is_flag": True,
            "flag_value": False,
            "default": None,
            "help": spec.help if for_group else "Global option (also accepted before the command).",
            "expose_value": for_group,
            "callback": None if for_group else _store(spec.field),
        }
    return {
        "type": spec.type,
        "metavar": spec.metavar,
        "help": spec.help if for_group else "Global option (also accepted before the command).",
        "default": "auto" if for_group and spec.field == "color" else None,
        "expose_value": for_group,
        "callback": None if for_group else _store(spec.field),
        "shell_complete": _complete_agents if spec.field == "agent" else None,
    }


def global_options(fn: F) -> F:
    """Decorate the group with the global options (passed to its callback by name)."""
    for spec in reversed(SPECS):
        fn = click.option(*spec.decls, **_kwargs(spec, for_group=True))(fn)
    return fn


def add_global_options(command: click.Command) -> None:
    """Give ``command`` the global options (once), minus spellings it already uses."""
    if getattr(command, "_skillbook_globals", False):
        return
    taken = {name for param in command.params for name in (*param.opts, *param.secondary_opts)}
    taken |= {param.name for param in command.params if param.name}
    for spec in SPECS:
        decls = tuple(d for d in spec.decls if d not in taken)
        if decls and spec.field not in taken and decls[0].startswith("--"):
            command.params.append(click.Option(list(decls), **_kwargs(spec, for_group=False)))
    command._skillbook_globals = True  # type: ignore[attr-defined]
