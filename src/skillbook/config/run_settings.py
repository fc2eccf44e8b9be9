"""The settings in effect for one run, each with where it came from.

Input: the environment, the working folder and what the caller names (a config file,
a workspace, an agent id, a spec mode), all optional. Output: a frozen
:class:`Settings` holding the :class:`~skillbook.config.paths.Paths` (with the config file
and why it was chosen), the validated :class:`~skillbook.config.file.Config`, the
:class:`~skillbook.config.agent_scope.WorkspaceChoice`, the agent and the mode. It is what
the command line resolves before loading a book and what ``skillbook doctor`` prints;
reasons use the command line's option names (``--config``, ``--mode``). The loader
for them is :meth:`skillbook.pipeline.book.Loader.from_settings`, their skill roots
:func:`skillbook.pipeline.discovery.discover.settings_roots`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from skillbook.base.env import own_env
from skillbook.config.agent_scope import WorkspaceChoice, check_agent_id, locate_workspace
from skillbook.config.file import Config, read_config
from skillbook.config.mode import DEFAULT_MODE
from skillbook.config.paths import Paths
from skillbook.config.profile import DEFAULT_PROFILE

__all__ = ["Settings", "choose_compat", "choose_mode"]


def choose_mode(mode: str | None, config: Config) -> tuple[str, str]:
    """The spec mode and why: ``--mode``, else ``skills.load.mode``, else the default."""
    if mode:
        return mode, "--mode"
    if config.skills.load.mode:
        return config.skills.load.mode, f"skills.load.mode in {config.file}"
    return DEFAULT_MODE, "the default"


def choose_compat(compat: str | None, config: Config) -> tuple[str, str]:
    """The compat profile and why: ``--compat``, else ``skills.compat``, else the default."""
    if compat:
        return compat, "--compat"
    if config.skills.compat:
        return config.skills.compat, f"skills.compat in {config.file}"
    return str(DEFAULT_PROFILE), "the default"


@dataclass(frozen=True, slots=True)
class Settings:
    """Paths, config, workspace, agent and mode of a run (see the module docstring)."""

    paths: Paths
    config: Config
    workspace: WorkspaceChoice
    #: The agent named by the caller (its allowlist applies), or ``None``.
    agent: str | None
    mode: str
    #: ``"--mode"``, ``"skills.load.mode in <file>"`` or ``"the default"``.
    mode_reason: str
    env: Mapping[str, str]
    cwd: Path
    #: The compat profile (``openclaw-2026.4`` …) and why (``--compat`` …).
    compat: str = str(DEFAULT_PROFILE)
    compat_reason: str = "the default"

    @classmethod
    def resolve(
        cls,
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        config: str | os.PathLike[str] | None = None,
        workspace: str | os.PathLike[str] | None = None,
        agent: str | None = None,
        mode: str | None = None,
        config_reason: str = "--config",
        compat: str | None = None,
    ) -> Settings:
        """Resolve everything; raises :class:`~skillbook.errors.ConfigError` for a bad
        config and :class:`~skillbook.errors.AgentNotFound` for an agent it does not list."""
        environ = dict(os.environ) if env is None else own_env(env)
        base = cwd if cwd is not None else Path.cwd()
        paths = Paths.from_env(environ, cwd=base, config=config, config_reason=config_reason)
        cfg = read_config(paths.config_location)
        if agent is not None:
            check_agent_id(cfg, agent)
        chosen = locate_workspace(
            cfg, paths, agent=agent, explicit=workspace, env=environ, cwd=base
        )
        chosen_mode, mode_reason = choose_mode(mode, cfg)
        chosen_compat, compat_reason = choose_compat(compat, cfg)
        return cls(
            paths,
            cfg,
            chosen,
            agent,
            chosen_mode,
            mode_reason,
            environ,
            base,
            chosen_compat,
            compat_reason,
        )
