"""skillbook: skills for LLM agents, the Python home of the OpenClaw skill system.

Three lines give an agent its skills catalog::

    import skillbook
    book = skillbook.load("path/to/workspace")
    system_prompt = base_instructions + "\\n" + book.system_prompt_section()

The public names are the facade, the values it works with, the core's errors and each
stage's entry point, listed once in ``_EXPORTS`` by the module that defines them
(``__all__`` is derived from it). They load lazily, so ``import skillbook`` stays fast
and pulls in no YAML, JSON5, CLI or terminal libraries. Everything else is imported from
the module that defines it: each stage (``skillbook.pipeline.parse.skill_file``,
``skillbook.pipeline.discovery.discover``, ``skillbook.pipeline.gating.gate``,
``skillbook.pipeline.gating.status``, ``skillbook.pipeline.prompt.skills_section``,
``skillbook.pipeline.validation.validate``), and each edge package, whose ``__init__``
holds its exceptions (``skillbook.distribution.registry.RegistryError``).
"""

from skillbook.version import __version__ as __version__

# Not `typing`: importing it costs more than the rest of this module, and
# `skillbook --version` pays for every import made here (mypy reads the name).
TYPE_CHECKING = False


#: Every public name, by the module that defines it: the one list to edit. The
#: ``TYPE_CHECKING`` imports below say the same for type checkers (a test keeps them equal).
_EXPORTS: dict[str, tuple[str, ...]] = {
    # the facade
    "skillbook.pipeline.book": ("load", "Loader", "SkillBook"),
    "skillbook.config.mode": ("Mode",),
    "skillbook.config.file": ("Config", "load_config"),
    "skillbook.config.paths": ("Paths",),
    # values
    "skillbook.model": ("Skill", "Source", "ParsedSkillFile", "SkillMetadata"),
    "skillbook.diagnostics": ("Diagnostic", "Severity"),
    "skillbook.errors": (
        "SkillbookError",
        "ConfigError",
        "SkillNotFound",
        "AgentNotFound",
        "SourceError",
    ),
    # sources
    "skillbook.pipeline.discovery.sources": (
        "SkillSource",
        "SourceLoad",
        "StaticSource",
        "Precedence",
    ),
    # the stages
    "skillbook.pipeline.parse.skill_file": ("parse_skill_text",),
    "skillbook.pipeline.discovery.discover": ("resolve_roots", "DiscoverOptions", "Discovery"),
    "skillbook.config.limits": ("Limits",),
    "skillbook.pipeline.cache.parse_cache": ("ParseCache",),
    "skillbook.pipeline.gating.gate": (
        "evaluate",
        "Host",
        "BinaryLookup",
        "RemoteEligibility",
        "StaticRemote",
    ),
    "skillbook.pipeline.gating.status": ("build_status",),
    "skillbook.pipeline.prompt.skills_section": ("build_prompt", "skills_section", "PromptLimits"),
    "skillbook.pipeline.snapshot": ("SnapshotVersions",),
    "skillbook.pipeline.validation.validate": ("validate_path",),
}

__all__ = [name for names in _EXPORTS.values() for name in names]

_HOMES = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str) -> "Any":
    module = _HOMES.get(name)
    if module is None:
        raise AttributeError(f"module 'skillbook' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])


if TYPE_CHECKING:
    from typing import Any

    # `X as X`: mypy's strict mode takes it as an export (``__all__`` is not a literal);
    # isort would split each such name onto a line of its own.
    # isort: off

    from skillbook.config.file import Config as Config, load_config as load_config
    from skillbook.config.limits import Limits as Limits
    from skillbook.config.mode import Mode as Mode
    from skillbook.config.paths import Paths as Paths
    from skillbook.diagnostics import Diagnostic as Diagnostic, Severity as Severity
    from skillbook.errors import (
        AgentNotFound as AgentNotFound,
        ConfigError as ConfigError,
        SkillbookError as SkillbookError,
        SkillNotFound as SkillNotFound,
        SourceError as SourceError,
    )
    from skillbook.model import (
        ParsedSkillFile as ParsedSkillFile,
        Skill as Skill,
        SkillMetadata as SkillMetadata,
        Source as Source,
    )
    from skillbook.pipeline.book import Loader as Loader, SkillBook as SkillBook, load as load
    from skillbook.pipeline.discovery.discover import (
        DiscoverOptions as DiscoverOptions,
        Discovery as Discovery,
        resolve_roots as resolve_roots,
    )
    from skillbook.pipeline.cache.parse_cache import ParseCache as ParseCache
    from skillbook.pipeline.discovery.sources import (
        Precedence as Precedence,
        SkillSource as SkillSource,
        SourceLoad as SourceLoad,
        StaticSource as StaticSource,
    )
    from skillbook.pipeline.gating.gate import (
        BinaryLookup as BinaryLookup,
        Host as Host,
        RemoteEligibility as RemoteEligibility,
        StaticRemote as StaticRemote,
        evaluate as evaluate,
    )
    from skillbook.pipeline.gating.status import build_status as build_status
    from skillbook.pipeline.parse.skill_file import parse_skill_text as parse_skill_text
    from skillbook.pipeline.prompt.skills_section import (
        PromptLimits as PromptLimits,
        build_prompt as build_prompt,
        skills_section as skills_section,
    )
    from skillbook.pipeline.snapshot import SnapshotVersions as SnapshotVersions
    from skillbook.pipeline.validation.validate import validate_path as validate_path
    # isort: on

del TYPE_CHECKING
