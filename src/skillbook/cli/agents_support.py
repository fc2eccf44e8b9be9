"""What the ``--for AGENT`` commands share: the project folder and environment they use.

The project is ``--workspace`` when given, else the current folder (not the configured
workspace: the agents' project folders are wherever the user runs the command, as with
the ``skills`` CLI).
"""

from __future__ import annotations

from pathlib import Path

from skillbook.cli.context import ERR_WORKSPACE, Context, fail
from skillbook.config.run_settings import Settings
from skillbook.distribution.agents.table import AgentEnv


def agent_env(obj: Context, settings: Settings) -> AgentEnv:
    project = Path(obj.workspace).expanduser() if obj.workspace else Path.cwd()
    if not project.is_dir():
        fail(f"workspace folder {project} does not exist", error=ERR_WORKSPACE)
    return AgentEnv(dict(settings.env), project.absolute())
