"""Every configured MCP server together: load, name and merge below local skills.

Input: :class:`~skillbook.mcp.client.McpServerSpec` values and a discovery of the
local sources. Output: that discovery with the remote skills added at the lowest
precedence (a same-named local skill always wins, and the shadowing is reported),
names qualified where two servers or paths collide, and a ``fetch_missing`` hook for
the ``read`` tool. One server at a time is :mod:`skillbook.mcp.remote_source`.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from skillbook import diagnostics as dg
from skillbook.config.limits import DEFAULT_MAX_SKILLS_LOADED_PER_SOURCE
from skillbook.diagnostics import Diagnostic
from skillbook.mcp.client import McpServerSpec
from skillbook.mcp.remote_source import RemoteLoad, RemoteSkillSource, _run_sync
from skillbook.model import Skill, Source
from skillbook.pipeline.discovery import discover
from skillbook.pipeline.discovery.discover import Discovery, Shadowing

__all__ = [
    "add_remote_skills",
    "fetch_remote_file",
    "load_all",
    "load_remote_skills",
    "merge_remote",
    "qualify_names",
    "remote_fetcher",
]


def load_remote_skills(
    specs: Sequence[McpServerSpec],
    cache_dir: Path,
    *,
    timeout_s: float | None = None,
    prefetch: bool = True,
    max_skills: int = DEFAULT_MAX_SKILLS_LOADED_PER_SOURCE,
    env: Mapping[str, str] | None = None,
) -> tuple[tuple[Skill, ...], tuple[Diagnostic, ...]]:
    """Load every server concurrently; names made unique (see :func:`qualify_names`)."""
    load = load_all(
        specs, cache_dir, timeout_s=timeout_s, prefetch=prefetch, max_skills=max_skills, env=env
    )
    return load.skills, load.diagnostics


def load_all(
    specs: Sequence[McpServerSpec],
    cache_dir: Path,
    *,
    timeout_s: float | None = None,
    prefetch: bool = True,
    max_skills: int = DEFAULT_MAX_SKILLS_LOADED_PER_SOURCE,
    env: Mapping[str, str] | None = None,
) -> RemoteLoad:
    """Every server's load; ``max_skills`` caps each server as one source; ``env`` is
    where ``tokenEnv`` is read (None: ``os.environ``)."""
    sources = [
        RemoteSkillSource(
            s,
            cache_dir=cache_dir,
            timeout_s=timeout_s,
            prefetch=prefetch,
            max_skills=max_skills,
            env=env,
        )
        for s in specs
    ]
    if not sources:
        return RemoteLoad()

    async def run() -> list[RemoteLoad]:
        import anyio

        results: list[RemoteLoad] = [RemoteLoad()] * len(sources)

        async def one(i: int) -> None:
            results[i] = await sources[i].aload()

        async with anyio.create_task_group() as tg:
            for i in range(len(sources)):
                tg.start_soon(one, i)
        return results

    loads = _run_sync(run)
    skills, diags = qualify_names([(s.spec, r) for s, r in zip(sources, loads, strict=True)])
    return RemoteLoad(
        skills,
        tuple(e for r in loads for e in r.entries),
        tuple(d for r in loads for d in r.diagnostics) + diags,
        sum(r.fetched for r in loads),
        sum(r.cache_hits for r in loads),
    )


def qualify_names(
    loads: Sequence[tuple[McpServerSpec, RemoteLoad]],
) -> tuple[tuple[Skill, ...], tuple[Diagnostic, ...]]:
    """Names are labels: collisions are qualified, never resolved by dropping one.

    Inside one server the skill path disambiguates (``acme/billing/refunds``); across
    servers the label does (``docs:refunds``).
    """
    diags: list[Diagnostic] = []
    staged: list[tuple[McpServerSpec, Skill]] = []
    for spec, load in loads:
        counts: dict[str, int] = {}
        for skill in load.skills:
            counts[skill.name] = counts.get(skill.name, 0) + 1
        for skill, entry in zip(load.skills, load.entries, strict=True):
            if counts[skill.name] > 1:
                skill = _renamed(skill, "/".join(entry.segments[1:-1]), diags)
            staged.append((spec, skill))
    owners: dict[str, set[str]] = {}
    for spec, skill in staged:
        owners.setdefault(skill.name, set()).add(spec.name)
    out = [
        _renamed(skill, f"{spec.name}:{skill.name}", diags)
        if len(owners[skill.name]) > 1
        else skill
        for spec, skill in staged
    ]
    return tuple(out), tuple(diags)


def _renamed(skill: Skill, name: str, diags: list[Diagnostic]) -> Skill:
    diags.append(
        dg.info(
            "mcp.name-collision",
            f"remote skill {skill.name!r} from {skill.origin} is listed as {name!r}: "
            "another remote skill has the same name",
            path=skill.file_path,
            skill=name,
        )
    )
    return dataclasses.replace(skill, name=name)


def merge_remote(
    local: Sequence[Skill], remote: Sequence[Skill]
) -> tuple[tuple[Skill, ...], tuple[Shadowing, ...], tuple[Diagnostic, ...]]:
    """Remote skills below every local one: the core's rule for the remote tier."""
    return discover.merge_remote(local, remote)


def add_remote_skills(
    found: Discovery,
    specs: Sequence[McpServerSpec],
    *,
    cache_dir: Path,
    timeout_s: float | None = None,
    prefetch: bool = True,
    max_skills: int = DEFAULT_MAX_SKILLS_LOADED_PER_SOURCE,
    env: Mapping[str, str] | None = None,
) -> Discovery:
    """``found`` with the remote skills added at the lowest precedence (the hook for
    :meth:`skillbook.pipeline.book.Loader.load`)."""
    if not specs:
        return found
    load = load_all(
        specs, cache_dir, timeout_s=timeout_s, prefetch=prefetch, max_skills=max_skills, env=env
    )
    skills, shadowed, diags = merge_remote(found.skills, load.skills)
    return dataclasses.replace(
        found,
        skills=skills,
        loaded=(*found.loaded, *load.skills),
        shadowed=(*found.shadowed, *shadowed),
        diagnostics=(*found.diagnostics, *load.diagnostics, *diags),
    )


def remote_fetcher(
    specs: Sequence[McpServerSpec], *, cache_dir: Path, env: Mapping[str, str] | None = None
) -> Callable[[Skill, str], Path | Diagnostic]:
    """A ``fetch_missing`` hook for :class:`skillbook.runtime.tools.ReadTool`."""

    def fetch(skill: Skill, relative: str) -> Path | Diagnostic:
        return fetch_remote_file(skill, relative, specs, cache_dir=cache_dir, env=env)

    return fetch


def fetch_remote_file(
    skill: Skill,
    ref: str | os.PathLike[str],
    specs: Sequence[McpServerSpec],
    *,
    cache_dir: Path,
    env: Mapping[str, str] | None = None,
) -> Path | Diagnostic:
    """The hook for a ``read`` tool: materialise ``ref`` of a remote ``skill`` from the
    server it came from (matched by ``origin``), or say why not."""
    spec = next((s for s in specs if s.origin == skill.origin), None)
    if spec is None or skill.source != Source.REMOTE:
        return dg.error(
            "mcp.unlisted-file",
            f"{skill.name!r} is not a skill of a configured MCP server",
            skill=skill.name,
        )
    return RemoteSkillSource(spec, cache_dir=cache_dir, env=env).fetch(skill, ref)
