"""What the ``--for AGENT`` commands share: the project folder and environment they use.

The project is ``--workspace`` when given, else the current folder (not the configured
workspace: the agents' project folders are wherever the user runs the command, as with
the ``skills`` CLI); and how they fetch remote sources (:func:`agent_fetcher`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillbook.cli.context import ERR_WORKSPACE, Context, fail
from skillbook.config.run_settings import Settings
from skillbook.distribution.agents.table import AgentEnv

if TYPE_CHECKING:
    from skillbook.distribution.agents.sources import Fetcher


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
