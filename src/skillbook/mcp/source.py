"""Every configured MCP server as one skill source (``skills.mcp``, source ``mcp-remote``).

The core knows nothing of MCP: skillbook's distribution offers :func:`mcp_sources`
under the ``skills.mcp`` name of the ``skillbook.sources`` entry-point group, and
:func:`skillbook.pipeline.discovery.sources.configured_sources` calls it when the config lists servers.
The servers load together (:func:`skillbook.mcp.remote_catalog.load_all`: concurrently,
colliding names qualified) and rank below every local source (the remote tier).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skillbook.config.limits import DEFAULT_MAX_SKILLS_LOADED_PER_SOURCE, Limits
from skillbook.diagnostics import Diagnostic
from skillbook.mcp.client import McpServerSpec
from skillbook.mcp.remote_catalog import fetch_remote_file, load_all
from skillbook.mcp.remote_source import DEFAULT_CACHE_DIRNAME
from skillbook.model import Skill, Source
from skillbook.pipeline.discovery.sources import (
    REMOTE_PRECEDENCE,
    Precedence,
    SkillSource,
    SourceContext,
    SourceLoad,
)

__all__ = ["McpSkillSource", "mcp_sources"]


@dataclass(frozen=True, slots=True)
class McpSkillSource:
    """The skills of ``specs``; files beyond ``SKILL.md`` are fetched when read."""

    specs: tuple[McpServerSpec, ...]
    cache_dir: Path
    timeout_s: float | None = None
    prefetch: bool = True
    #: ``skills.limits.maxSkillsLoadedPerSource``, applied to each server.
    max_skills: int = DEFAULT_MAX_SKILLS_LOADED_PER_SOURCE
    #: The loader's environment, where ``tokenEnv`` is read (None: ``os.environ``); kept
    #: out of ``repr``, since it holds secrets.
    env: Mapping[str, str] | None = field(default=None, repr=False, compare=False)

    @property
    def label(self) -> str:
        return Source.REMOTE.value

    @property
    def precedence(self) -> Precedence:
        return REMOTE_PRECEDENCE

    def load(self) -> SourceLoad:
        got = load_all(
            self.specs,
            self.cache_dir,
            timeout_s=self.timeout_s,
            prefetch=self.prefetch,
            max_skills=self.max_skills,
            env=self.env,
        )
        return SourceLoad(got.skills, got.diagnostics)

    def fetch(self, skill: Skill, relative: str) -> Path | Diagnostic:
        """The ``read`` tool's hook: materialise a listed file from the skill's server."""
        return fetch_remote_file(
            skill, relative, self.specs, cache_dir=self.cache_dir, env=self.env
        )


def mcp_sources(context: SourceContext) -> Sequence[SkillSource]:
    """The source factory for ``skills.mcp``: one source for all configured servers."""
    specs = context.config.skills.mcp_servers
    if not specs:
        return ()
    limits = Limits.from_config(context.config.skills.limits)
    cache_dir = context.paths.state_dir / DEFAULT_CACHE_DIRNAME
    return (
        McpSkillSource(
            specs, cache_dir, max_skills=limits.max_skills_loaded_per_source, env=context.env
        ),
    )
