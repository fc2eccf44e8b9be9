"""skillbook: skills for LLM agents, the Python home of the OpenClaw skill system.

Three lines give an agent its skills catalog::

    import skillbook
    book = skillbook.load("path/to/workspace")
    system_prompt = base_instructions + "\\n" + book.system_prompt_section()

Public names are listed in ``__all__``; they load lazily, so ``import skillbook``
stays fast and pulls in no YAML, JSON5, CLI or terminal libraries.
Each stage is importable on its own: ``skillbook.pipeline.parse.skill_file``, ``skillbook.pipeline.discovery.discover``,
``skillbook.pipeline.gating.gate``, ``skillbook.pipeline.gating.status``, ``skillbook.pipeline.prompt.skills_section``, ``skillbook.pipeline.validation.validate``.
"""

# Not `typing`: importing it costs more than the rest of this module, and
# `skillbook --version` pays for every import made here (mypy reads the name).
TYPE_CHECKING = False

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # facade
    "load": "skillbook.pipeline.book",
    "Loader": "skillbook.pipeline.book",
    "SkillBook": "skillbook.pipeline.book",
    "Mode": "skillbook.config.mode",
    # model
    "Skill": "skillbook.model",
    "Source": "skillbook.model",
    "ParsedSkillFile": "skillbook.model",
    "Frontmatter": "skillbook.model",
    "SkillMetadata": "skillbook.model",
    "Requires": "skillbook.model",
    "InstallSpec": "skillbook.model",
    "InvocationPolicy": "skillbook.model",
    "CommandDispatch": "skillbook.model",
    # diagnostics and errors
    "Diagnostic": "skillbook.diagnostics",
    "Severity": "skillbook.diagnostics",
    "SkillbookError": "skillbook.errors",
    "ConfigError": "skillbook.errors",
    "SkillNotFound": "skillbook.errors",
    "AgentNotFound": "skillbook.errors",
    "SourceError": "skillbook.errors",
    "SecretError": "skillbook.errors",
    "ModelNotConfigured": "skillbook.errors",
    "ModelError": "skillbook.errors",
    "EmbeddingError": "skillbook.errors",
    "InstallError": "skillbook.errors",
    "PortInUse": "skillbook.errors",
    "QueryFileError": "skillbook.errors",
    "ScanTargetError": "skillbook.errors",
    "SelectionUnavailable": "skillbook.errors",
    "ServeError": "skillbook.errors",
    "SyncBusy": "skillbook.errors",
    "SyncError": "skillbook.errors",
    "TargetNotSynced": "skillbook.errors",
    "ExperienceError": "skillbook.errors",
    "ExperienceNotFound": "skillbook.errors",
    "RegistryError": "skillbook.errors",
    "RegistryNotFound": "skillbook.errors",
    "RegistryUnavailable": "skillbook.errors",
    "PublishFailed": "skillbook.errors",
    "HubError": "skillbook.errors",
    "HubNotFound": "skillbook.errors",
    # sources
    "SkillSource": "skillbook.pipeline.discovery.sources",
    "SourceLoad": "skillbook.pipeline.discovery.sources",
    "StaticSource": "skillbook.pipeline.discovery.sources",
    "Precedence": "skillbook.pipeline.discovery.sources",
    # stages
    "parse_skill_text": "skillbook.pipeline.parse.skill_file",
    "Paths": "skillbook.config.paths",
    "Config": "skillbook.config.file",
    "load_config": "skillbook.config.file",
    "Root": "skillbook.pipeline.discovery.discover",
    "Limits": "skillbook.pipeline.discovery.discover",
    "DiscoverOptions": "skillbook.pipeline.discovery.discover",
    "Discovery": "skillbook.pipeline.discovery.discover",
    "ParseCache": "skillbook.pipeline.cache.parse_cache",
    "resolve_roots": "skillbook.pipeline.discovery.discover",
    "Host": "skillbook.pipeline.gating.gate",
    "BinaryLookup": "skillbook.pipeline.gating.gate",
    "RemoteEligibility": "skillbook.pipeline.gating.gate",
    "StaticRemote": "skillbook.pipeline.gating.gate",
    "Eligibility": "skillbook.pipeline.gating.gate",
    "evaluate": "skillbook.pipeline.gating.gate",
    "StatusReport": "skillbook.pipeline.gating.status",
    "build_status": "skillbook.pipeline.gating.status",
    "PromptCatalog": "skillbook.pipeline.prompt.skills_section",
    "PromptLimits": "skillbook.pipeline.prompt.skills_section",
    "build_prompt": "skillbook.pipeline.prompt.skills_section",
    "skills_section": "skillbook.pipeline.prompt.skills_section",
    "SkillSnapshot": "skillbook.pipeline.snapshot",
    "SnapshotVersions": "skillbook.pipeline.snapshot",
    "validate_path": "skillbook.pipeline.validation.validate",
}

__all__ = [
    "AgentNotFound",
    "BinaryLookup",
    "CommandDispatch",
    "Config",
    "ConfigError",
    "Diagnostic",
    "DiscoverOptions",
    "Discovery",
    "Eligibility",
    "EmbeddingError",
    "ExperienceError",
    "ExperienceNotFound",
    "Frontmatter",
    "Host",
    "HubError",
    "HubNotFound",
    "InstallError",
    "InstallSpec",
    "InvocationPolicy",
    "Limits",
    "Loader",
    "Mode",
    "ModelError",
    "ModelNotConfigured",
    "ParseCache",
    "ParsedSkillFile",
    "Paths",
    "PortInUse",
    "Precedence",
    "PromptCatalog",
    "PromptLimits",
    "PublishFailed",
    "QueryFileError",
    "RegistryError",
    "RegistryNotFound",
    "RegistryUnavailable",
    "RemoteEligibility",
    "Requires",
    "Root",
    "ScanTargetError",
    "SecretError",
    "SelectionUnavailable",
    "ServeError",
    "Severity",
    "Skill",
    "SkillBook",
    "SkillMetadata",
    "SkillNotFound",
    "SkillSnapshot",
    "SkillSource",
    "SkillbookError",
    "SnapshotVersions",
    "Source",
    "SourceError",
    "SourceLoad",
    "StaticRemote",
    "StaticSource",
    "StatusReport",
    "SyncBusy",
    "SyncError",
    "TargetNotSynced",
    "build_prompt",
    "build_status",
    "evaluate",
    "load",
    "load_config",
    "parse_skill_text",
    "resolve_roots",
    "skills_section",
    "validate_path",
]


def __getattr__(name: str) -> "Any":
    module = _EXPORTS.get(name)
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

    from skillbook.config.file import Config, load_config
    from skillbook.config.mode import Mode
    from skillbook.config.paths import Paths
    from skillbook.diagnostics import Diagnostic, Severity
    from skillbook.errors import (
        ConfigError,
        EmbeddingError,
        ExperienceError,
        ExperienceNotFound,
        HubError,
        HubNotFound,
        InstallError,
        ModelError,
        ModelNotConfigured,
        PortInUse,
        PublishFailed,
        QueryFileError,
        RegistryError,
        RegistryNotFound,
        RegistryUnavailable,
        ScanTargetError,
        SecretError,
        SelectionUnavailable,
        ServeError,
        SkillbookError,
        SkillNotFound,
        SourceError,
        SyncBusy,
        SyncError,
        TargetNotSynced,
    )
    from skillbook.model import (
        CommandDispatch,
        Frontmatter,
        InstallSpec,
        InvocationPolicy,
        ParsedSkillFile,
        Requires,
        Skill,
        SkillMetadata,
        Source,
    )
    from skillbook.pipeline.book import Loader, SkillBook, load
    from skillbook.pipeline.cache.parse_cache import ParseCache
    from skillbook.pipeline.discovery.discover import (
        DiscoverOptions,
        Discovery,
        Limits,
        Root,
        resolve_roots,
    )
    from skillbook.pipeline.gating.gate import (
        BinaryLookup,
        Eligibility,
        Host,
        RemoteEligibility,
        StaticRemote,
        evaluate,
    )
    from skillbook.pipeline.gating.status import StatusReport, build_status
    from skillbook.pipeline.parse.skill_file import parse_skill_text
    from skillbook.pipeline.prompt.skills_section import (
        PromptCatalog,
        PromptLimits,
        build_prompt,
        skills_section,
    )
    from skillbook.pipeline.snapshot import SkillSnapshot, SnapshotVersions
    from skillbook.pipeline.validation.validate import validate_path

del TYPE_CHECKING
