"""The agent table as typed values, resolved against an environment.

Input: the rows of :mod:`skillbook.distribution.agents.rows`, an environment (``HOME``, the XDG and
``*_HOME`` variables) and a project folder. Output: :class:`Agent` values with their
project and global skill folders and whether the agent looks installed. Pure apart
from the existence checks of detection; no process-wide state is read.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final

from skillbook.distribution.agents.rows import ROWS

__all__ = [
    "UNIVERSAL_DIR",
    "Agent",
    "AgentEnv",
    "all_agents",
    "detected_agents",
    "get_agent",
]

#: The project folder several agents share; the ``skills`` CLI's canonical copy lives here.
UNIVERSAL_DIR: Final = ".agents/skills"
#: Bases whose folder an environment variable overrides (variable, default under $HOME).
_HOME_BASES: Final = {
    "claude": ("CLAUDE_CONFIG_DIR", ".claude"),
    "codex": ("CODEX_HOME", ".codex"),
    "vibe": ("VIBE_HOME", ".vibe"),
    "hermes": ("HERMES_HOME", ".hermes"),
    "autohand": ("AUTOHAND_HOME", ".autohand"),
    "grok": ("GROK_HOME", ".grok"),
    "sarvam": ("SARVAM_HOME", ".sarvam"),
}
_OPENCLAW_HOMES: Final = (".openclaw", ".clawdbot", ".moltbot")


@dataclass(frozen=True, slots=True)
class AgentEnv:
    """What the folders depend on: the environment and the project folder."""

    env: Mapping[str, str]
    project: Path

    @property
    def home(self) -> Path:
        # The skills CLI uses os.homedir(), which is $HOME on POSIX.
        return Path(self.env.get("HOME") or os.path.expanduser("~"))

    def base(self, name: str) -> Path | None:
        """The folder a row's ``BASE:`` prefix names; None for an unset ``env.VAR``."""
        if name == "home":
            return self.home
        if name == "cwd":
            return self.project
        if name == "abs":
            return Path("/")
        if name == "config":
            # Not trimmed: the xdg-basedir package takes the variable as it is.
            return Path(self.env.get("XDG_CONFIG_HOME") or self.home / ".config")
        if name.startswith("env."):
            value = self.env.get(name[4:], "").strip()
            return Path(value) if value else None
        if name == "openclaw":
            for folder in _OPENCLAW_HOMES:
                if (self.home / folder).exists():
                    return self.home / folder
            return self.home / _OPENCLAW_HOMES[0]
        var, default = _HOME_BASES[name]
        value = self.env.get(var, "").strip()
        return Path(value) if value else self.home / default

    def resolve(self, spec: str) -> Path | None:
        base, _, rel = spec.partition(":")
        root = self.base(base)
        if root is None:
            return None
        return root / rel if rel else root


@dataclass(frozen=True, slots=True)
class Agent:
    id: str
    display_name: str
    #: Relative to the project, POSIX separators.
    project_dir: str
    #: ``BASE:relative`` (see :mod:`skillbook.distribution.agents.rows`), or None: no global scope.
    global_spec: str | None
    detect: tuple[str, ...]
    flags: frozenset[str]

    @property
    def universal(self) -> bool:
        """Reads the shared ``.agents/skills`` folder of the project."""
        return self.project_dir == UNIVERSAL_DIR

    def folder(self, where: AgentEnv, *, global_: bool) -> Path | None:
        """Where this agent reads skills in that scope; None: no such scope."""
        if not global_:
            return where.project / self.project_dir
        if self.global_spec is None:
            return None
        spec = "skills" if self.global_spec == "openclaw:" else ""
        found = where.resolve(self.global_spec)
        return None if found is None else (found / spec if spec else found)

    def is_detected(self, where: AgentEnv) -> bool:
        return any(all(_holds(cond, where) for cond in alt.split("&")) for alt in self.detect)


def _holds(condition: str, where: AgentEnv) -> bool:
    if condition.startswith("pkgdep:"):
        name = condition[len("pkgdep:") :]
        try:
            data = json.loads((where.project / "package.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        if not isinstance(data, dict):
            return False
        return any(
            isinstance(deps, dict) and bool(deps.get(name))
            for deps in (data.get("dependencies"), data.get("devDependencies"))
        )
    path = where.resolve(condition)
    return path is not None and path.exists()


@cache
def all_agents() -> tuple[Agent, ...]:
    """Every agent of the table, in the table's order."""
    return tuple(
        Agent(id_, display, project, glob, detect, frozenset(flags))
        for id_, display, project, glob, detect, flags in ROWS
    )


def get_agent(agent_id: str) -> Agent | None:
    for agent in all_agents():
        if agent.id == agent_id:
            return agent
    return None


def detected_agents(where: AgentEnv) -> tuple[Agent, ...]:
    """The agents that look installed here (the ``skills`` CLI's detection)."""
    return tuple(a for a in all_agents() if a.is_detected(where))
