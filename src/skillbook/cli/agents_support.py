"""What the ``--for AGENT`` commands share: the project folder and environment they use.

The project is ``--workspace`` when given, else the current folder (not the configured
workspace: the agents' project folders are wherever the user runs the command, as with
the ``skills`` CLI); and how they fetch remote sources (:func:`agent_fetcher`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from skillbook.cli.context import ERR_WORKSPACE, Context, fail
from skillbook.config.run_settings import Settings
from skillbook.distribution.agents.table import AgentEnv

if TYPE_CHECKING:
    from skillbook.distribution.agents import AgentsError
    from skillbook.distribution.agents.sources import Fetcher
    from skillbook.distribution.agents.table import Agent


def agent_env(obj: Context, settings: Settings) -> AgentEnv:
    project = Path(obj.workspace).expanduser() if obj.workspace else Path.cwd()
    if not project.is_dir():
        fail(f"workspace folder {project} does not exist", error=ERR_WORKSPACE)
    return AgentEnv(dict(settings.env), project.absolute())


def agent_fetcher(
    obj: Context,
    settings: Settings,
    *,
    registry: str | None = None,
    site: str | None = None,
    as_json: bool = False,
    **values: Any,
) -> Fetcher:
    """How ``--for`` reaches registries and git hosts: the endpoint, network policy and
    git base ``skillbook install`` would use."""
    from skillbook.cli.progress import terminal_progress
    from skillbook.cli.registry_support import endpoint_of, install_options, say_stderr
    from skillbook.distribution.agents.sources import Fetcher

    return Fetcher(
        endpoint_of(settings, registry, site),
        install_options(settings, **values),
        env=dict(settings.env),
        say=say_stderr,
        progress=None if as_json else terminal_progress(),
    )


@dataclass(frozen=True, slots=True)
class AgentCommand:
    """What ``install --for`` and ``update --for`` start from."""

    settings: Settings
    where: AgentEnv
    agents: tuple[Agent, ...]
    fetcher: Fetcher


def agent_command(
    obj: Context, for_agents: tuple[str, ...], *, as_json: bool, **fetch: Any
) -> AgentCommand:
    """The settings, project, agents named by ``--for`` and the fetcher (``fetch``:
    :func:`agent_fetcher`'s options); an unknown agent stops the command
    (:func:`agents_failed`)."""
    from skillbook.distribution.agents import AgentsError
    from skillbook.distribution.agents.ops import resolve_agents

    settings = obj.settings()
    where = agent_env(obj, settings)
    try:
        agents = resolve_agents(for_agents, where)
    except AgentsError as exc:
        agents_failed(exc)
    fetcher = agent_fetcher(obj, settings, as_json=as_json, **fetch)
    return AgentCommand(settings, where, agents, fetcher)


def agents_failed(exc: AgentsError) -> NoReturn:
    """Stop with ``exc``: exit 2 for an agent id that does not exist (the command line is
    wrong), 1 for the rest."""
    fail(exc.message, 2 if exc.code == "agents.unknown" else 1, error=exc.code)
