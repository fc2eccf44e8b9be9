"""Which agent a run serves and which workspace folder it reads (OpenClaw's agent scope).

Input: a validated :class:`~skillbook.config.file.Config`, the :class:`~skillbook.config.paths.Paths`
of the run, the requested agent id (or ``None``) and the environment. Output: the
known agent ids, the default one, and a :class:`WorkspaceChoice` saying which folder
is the workspace and why. Nothing here reads files; it only asks whether folders exist
where the caller wants to know.

The rules are OpenClaw's ``resolveAgentWorkspaceDir`` and ``resolveDefaultAgentId``:
the agent's own ``workspace``, else for the default agent ``agents.defaults.workspace``
and for another agent ``<agents.defaults.workspace>/<id>``. With neither, OpenClaw uses
its own default, ``~/.openclaw/workspace`` (``workspace-<profile>`` under
``$OPENCLAW_PROFILE``) for the default agent and ``<state dir>/workspace-<id>`` for the
others; skillbook does the same when the config file is OpenClaw's (``openclaw.json``),
and otherwise uses the current folder, which is where a project's ``skills/`` lives.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillbook.config.file import Config
from skillbook.config.paths import OPENCLAW_STATE_DIR_NAMES, Paths, resolve_user_path
from skillbook.config.skill_filter import normalize_agent_id
from skillbook.errors import AgentNotFound

__all__ = [
    "DEFAULT_AGENT_ID",
    "PROFILE_ENV",
    "WorkspaceChoice",
    "check_agent_id",
    "default_agent_id",
    "known_agent_ids",
    "locate_workspace",
    "openclaw_default_workspace",
]

#: The agent id when ``agents.list`` is empty (OpenClaw's ``DEFAULT_AGENT_ID``).
DEFAULT_AGENT_ID = "main"
#: OpenClaw's profile variable: it picks ``~/.openclaw/workspace-<profile>``.
PROFILE_ENV = "OPENCLAW_PROFILE"
_WORKSPACE_DIR_NAME = "workspace"


def known_agent_ids(config: Config) -> tuple[str, ...]:
    """The ids of ``agents.list``, normalised and without repeats; ``("main",)`` when empty."""
    seen: dict[str, None] = {}
    for agent in config.agents.agents:
        seen.setdefault(normalize_agent_id(agent.id), None)
    return tuple(seen) or (DEFAULT_AGENT_ID,)


def default_agent_id(config: Config) -> str:
    """The first agent with ``default: true``, else the first listed, else ``main``."""
    agents = config.agents.agents
    if not agents:
        return DEFAULT_AGENT_ID
    marked = [a for a in agents if a.default]
    return normalize_agent_id((marked[0] if marked else agents[0]).id.strip() or None)


def check_agent_id(config: Config, agent: str | None) -> str:
    """The normalised id of ``agent`` (the default agent for ``None``).

    Raises :class:`~skillbook.errors.AgentNotFound` naming the known ids when the
    config does not list it, as OpenClaw's ``skills.status`` call does. Ids are
    compared normalised (``Ops`` is ``ops``), as everywhere else.
    """
    if agent is None or not agent.strip():
        return default_agent_id(config)
    wanted = normalize_agent_id(agent)
    known = known_agent_ids(config)
    if wanted not in known:
        raise AgentNotFound(agent.strip(), known)
    return wanted


@dataclass(frozen=True, slots=True)
class WorkspaceChoice:
    """The workspace folder of a run, and why it is that one."""

    path: Path
    #: For people: ``"--workspace"``, ``"agents.list[1].workspace"``, ``"the current folder"``, …
    reason: str
    #: Named by the user or the config, so it must exist; defaults may be absent.
    configured: bool
    #: The normalised id of the agent the workspace belongs to.
    agent: str

    def to_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "reason": self.reason,
            "configured": self.configured,
            "exists": self.path.is_dir(),
            "agent": self.agent,
        }


def openclaw_default_workspace(home: Path, env: Mapping[str, str]) -> tuple[Path, str]:
    """``~/.openclaw/workspace``, or ``workspace-<profile>`` under ``$OPENCLAW_PROFILE``."""
    profile = (env.get(PROFILE_ENV) or "").strip()
    base = home / OPENCLAW_STATE_DIR_NAMES[0]
    if profile and profile.lower() != "default":
        return base / f"{_WORKSPACE_DIR_NAME}-{profile}", f"OpenClaw's default (${PROFILE_ENV})"
    return base / _WORKSPACE_DIR_NAME, "OpenClaw's default"


def locate_workspace(
    config: Config,
    paths: Paths,
    *,
    agent: str | None = None,
    explicit: str | os.PathLike[str] | None = None,
    env: Mapping[str, str],
    cwd: Path,
) -> WorkspaceChoice:
    """The workspace: ``explicit`` (``--workspace``), else the agent's, as the module says."""
    default_id = default_agent_id(config)
    wanted = normalize_agent_id(agent) if agent is not None and agent.strip() else default_id

    def user_path(raw: str) -> Path:
        return resolve_user_path(raw, paths.home, cwd=cwd)

    if explicit is not None and os.fspath(explicit).strip():
        return WorkspaceChoice(user_path(os.fspath(explicit)), "--workspace", True, wanted)
    where = f" in {config.file}" if config.file is not None else ""
    for index, entry in enumerate(config.agents.agents):
        own = (entry.workspace or "").strip()
        if normalize_agent_id(entry.id) == wanted and own:
            reason = f"agents.list[{index}].workspace{where}"
            return WorkspaceChoice(user_path(own), reason, True, wanted)
    fallback = (config.agents.default_workspace or "").strip()
    if fallback:
        reason = f"agents.defaults.workspace{where}"
        if wanted == default_id:
            return WorkspaceChoice(user_path(fallback), reason, True, wanted)
        return WorkspaceChoice(
            user_path(fallback) / wanted, f"{reason}, plus the agent id", True, wanted
        )
    if paths.config_location.is_openclaw:
        if wanted == default_id:
            path, reason = openclaw_default_workspace(paths.home, env)
            return WorkspaceChoice(path, f"{reason}, for OpenClaw's config", False, wanted)
        path = paths.state_dir / f"{_WORKSPACE_DIR_NAME}-{wanted}"
        return WorkspaceChoice(
            path, "OpenClaw's default: <state dir>/workspace-<id>", False, wanted
        )
    return WorkspaceChoice(cwd, "the current folder", False, wanted)
