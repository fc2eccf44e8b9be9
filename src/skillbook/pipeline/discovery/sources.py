"""The skill-source seam: every place skills come from, behind one small interface.

A :class:`SkillSource` has a ``label`` (the :class:`~skillbook.model.Source` label
its skills carry), a :class:`Precedence`, and ``load()``, which returns the skills
it holds and the diagnostics it found (:class:`SourceLoad`) and never raises for a
bad skill. :func:`skillbook.pipeline.discovery.discover.discover_sources` loads sources in precedence
order and merges them by name. The filesystem roots of OpenClaw (spec §3.1), the
folders of enabled plugins (§3.6) and MCP servers are sources; so is
:class:`StaticSource`, the in-memory fake for tests and for skills made in code.

A source whose skills are not all on disk yet (a remote server materialising files
on demand) also implements :class:`FileFetcher`; the ``read`` tool asks it for a
missing file through :func:`fetcher_for`.

Sources that a config section describes (``skills.mcp``, and the registries of later
releases) live in edge packages, which the core never imports. An edge offers a
:data:`SourceFactory` under the section's dotted name in the :data:`ENTRY_POINT_GROUP`
entry-point group of its distribution; :func:`configured_sources` calls it, only when
the section is configured. Nothing is registered as a side effect of an import, and
a caller can pass its own factories instead.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol, runtime_checkable

from skillbook import diagnostics as dg
from skillbook.diagnostics import Diagnostic
from skillbook.model import SOURCE_PRECEDENCE, Skill, Source

if TYPE_CHECKING:
    from skillbook.config.file import Config
    from skillbook.config.paths import Paths

__all__ = [
    "ENTRY_POINT_GROUP",
    "REMOTE_PRECEDENCE",
    "FileFetcher",
    "Precedence",
    "SkillSource",
    "SourceContext",
    "SourceFactory",
    "SourceLoad",
    "StaticSource",
    "Tier",
    "configured_sources",
    "fetcher_for",
    "installed_factories",
    "local_precedence",
]

_log = logging.getLogger("skillbook.pipeline.discovery.sources")

#: The entry-point group in which edge packages offer a :data:`SourceFactory`,
#: named by the config section it reads (``skills.mcp``).
ENTRY_POINT_GROUP: Final = "skillbook.sources"
#: Room between OpenClaw's six local sources for sources of later releases.
_RANK_STEP: Final = 10


class Tier(enum.IntEnum):
    """Which merge a source's skills go through (higher tiers win)."""

    #: Skills fetched from elsewhere (MCP servers, registries): ranked below every local
    #: skill and listed after them; a local skill with the same name or config key hides one.
    REMOTE = 0
    #: Skill folders on this machine: OpenClaw's merge (§3.2), a higher-precedence source
    #: wins a name and the name keeps the position where it was first seen.
    LOCAL = 1


@dataclass(frozen=True, slots=True, order=True)
class Precedence:
    """Where a source ranks: by tier, then by rank (higher wins; ties keep the given order)."""

    tier: Tier
    rank: int = 0


def local_precedence(source: Source) -> Precedence:
    """OpenClaw's rank of a local source: extra < bundled < managed < personal < project
    < workspace (plugin skill folders share the ``extra`` rank, after the extra dirs)."""
    return Precedence(Tier.LOCAL, (SOURCE_PRECEDENCE.index(source) + 1) * _RANK_STEP)


#: The one rank of remote sources (below every local one).
REMOTE_PRECEDENCE: Final = Precedence(Tier.REMOTE)


@dataclass(frozen=True, slots=True)
class SourceLoad:
    """What one ``load()`` gave: the skills in the source's own order, and its findings."""

    skills: tuple[Skill, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()


@runtime_checkable
class SkillSource(Protocol):
    """Anything that yields skills: a folder, a plugin, a server, a registry."""

    @property
    def label(self) -> str:
        """The source label its skills carry in ``Skill.source``."""
        ...

    @property
    def precedence(self) -> Precedence: ...

    def load(self) -> SourceLoad:
        """The skills and diagnostics as they are now; never raises for a bad skill."""
        ...


@runtime_checkable
class FileFetcher(Protocol):
    """A source that can bring a file of one of its skills to disk on demand."""

    def fetch(self, skill: Skill, relative: str) -> Path | Diagnostic:
        """The local path of ``relative`` (a path inside the skill's folder), or why not."""
        ...


@dataclass(frozen=True, slots=True)
class StaticSource:
    """A source holding skills given in code: the fake for tests, or generated skills.

    ``label`` defaults to ``openclaw-workspace``; the skills keep their own
    ``source`` field, so build them with the same label (``Skill.create(source=…)``).
    """

    skills: tuple[Skill, ...] = ()
    label: str = Source.WORKSPACE.value
    precedence: Precedence = field(default_factory=lambda: local_precedence(Source.WORKSPACE))
    diagnostics: tuple[Diagnostic, ...] = ()

    def load(self) -> SourceLoad:
        return SourceLoad(tuple(self.skills), tuple(self.diagnostics))


def fetcher_for(
    sources: Iterable[SkillSource],
) -> Callable[[Skill, str], Path | Diagnostic] | None:
    """A ``fetch_missing`` hook that asks the source a skill came from, or None when no
    source can fetch (all skills are on disk)."""
    by_label: dict[str, FileFetcher] = {}
    for source in sources:
        if isinstance(source, FileFetcher):
            by_label.setdefault(source.label, source)
    if not by_label:
        return None

    def fetch(skill: Skill, relative: str) -> Path | Diagnostic:
        owner = by_label.get(skill.source)
        if owner is None:
            return dg.error(
                "discover.not-fetchable",
                f"{skill.name!r} comes from {skill.source}, whose files are all on disk; "
                f"{relative} is not there",
                path=skill.base_dir / relative,
                skill=skill.name,
            )
        return owner.fetch(skill, relative)

    return fetch


# --------------------------------------------------------------------------- from config


@dataclass(frozen=True, slots=True)
class SourceContext:
    """What a :data:`SourceFactory` may read: the validated config and the folders."""

    config: Config
    paths: Paths
    workspace: Path | None
    env: Mapping[str, str]


#: Builds the sources a config section describes (none when it describes none).
SourceFactory = Callable[[SourceContext], Sequence[SkillSource]]


def installed_factories(sections: Collection[str]) -> dict[str, SourceFactory]:
    """The factories installed distributions offer for ``sections`` (entry points).

    Only the entry points named by ``sections`` are loaded, so a config without
    such sections costs nothing and imports nothing.
    """
    if not sections:
        return {}
    from importlib.metadata import entry_points

    found: dict[str, SourceFactory] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in sections and ep.name not in found:
            try:
                found[ep.name] = ep.load()
            except ImportError as exc:
                # Reported as an unavailable section below; the traceback helps a packager.
                _log.warning("cannot load skill source %s (%s)", ep.name, ep.value, exc_info=exc)
    return found


def configured_sources(
    context: SourceContext, factories: Mapping[str, SourceFactory] | None = None
) -> tuple[list[SkillSource], list[Diagnostic]]:
    """The sources of every configured source section (``Config.source_sections``).

    ``factories`` maps section names to factories; ``None`` uses the installed ones
    (:func:`installed_factories`). A configured section with no factory is diagnosed
    (``discover.source-unavailable``), never skipped in silence.
    """
    sections = context.config.source_sections()
    table = installed_factories(sections) if factories is None else factories
    sources: list[SkillSource] = []
    diags: list[Diagnostic] = []
    for section in sections:
        factory = table.get(section)
        if factory is None:
            diags.append(
                dg.warning(
                    "discover.source-unavailable",
                    f"`{section}` is configured, but no installed package provides a skill "
                    f"source for it (entry points `{ENTRY_POINT_GROUP}`), so its skills are "
                    "not loaded; reinstall skillbook, whose metadata declares its sources, or "
                    "pass a factory in `source_factories`",
                    path=context.config.file,
                )
            )
            continue
        sources.extend(factory(context))
    return sources, diags
