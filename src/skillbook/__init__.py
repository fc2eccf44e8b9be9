"""skillbook: skills for LLM agents, the Python home of the OpenClaw skill system.

Three lines give an agent its skills catalog::

    import skillbook
    book = skillbook.load("path/to/workspace")
    system_prompt = base_instructions + "\\n" + book.system_prompt_section()

Public names are listed in ``__all__``; they load lazily, so ``import skillbook``
stays fast and pulls in no YAML, JSON5, CLI or terminal libraries.
Each stage is importable on its own: ``skillbook.parse``, ``skillbook.discover``,
``skillbook.gate``, ``skillbook.status``, ``skillbook.prompt``, ``skillbook.validate``.
"""

# Not `typing`: importing it costs more than the rest of this module, and
# `skillbook --version` pays for every import made here (mypy reads the name).
TYPE_CHECKING = False

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # facade
    "load": "skillbook.book",
    "Loader": "skillbook.book",
    "SkillBook": "skillbook.book",
    "Mode": "skillbook.mode",
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
    "SkillSource": "skillbook.sources",
    "SourceLoad": "skillbook.sources",
    "StaticSource": "skillbook.sources",
    "Precedence": "skillbook.sources",
    # stages
    "parse_skill_text": "skillbook.parse",
    "Paths": "skillbook.paths",
    "Config": "skillbook.config",
    "load_config": "skillbook.config",
    "Root": "skillbook.discover",
    "Limits": "skillbook.discover",
    "DiscoverOptions": "skillbook.discover",
    "Discovery": "skillbook.discover",
    "ParseCache": "skillbook.discover",
    "resolve_roots": "skillbook.discover",
    "Host": "skillbook.gate",
    "BinaryLookup": "skillbook.gate",
    "RemoteEligibility": "skillbook.gate",
    "StaticRemote": "skillbook.gate",
    "Eligibility": "skillbook.gate",
    "evaluate": "skillbook.gate",
    "StatusReport": "skillbook.status",
    "build_status": "skillbook.status",
    "PromptCatalog": "skillbook.prompt",
    "PromptLimits": "skillbook.prompt",
    "build_prompt": "skillbook.prompt",
    "skills_section": "skillbook.prompt",
    "SkillSnapshot": "skillbook.snapshot",
    "SnapshotVersions": "skillbook.snapshot",
    "validate_path": "skillbook.validate",
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

    from skillbook.book import Loader, SkillBook, load
    from skillbook.config import Config, load_config
    from skillbook.diagnostics import Diagnostic, Severity
    from skillbook.discover import (
        DiscoverOptions,
        Discovery,
        Limits,
        ParseCache,
        Root,
        resolve_roots,
    )
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
    from skillbook.gate import (
        BinaryLookup,
        Eligibility,
        Host,
        RemoteEligibility,
        StaticRemote,
        evaluate,
    )
    from skillbook.mode import Mode
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
    from skillbook.parse import parse_skill_text
    from skillbook.paths import Paths
    from skillbook.prompt import PromptCatalog, PromptLimits, build_prompt, skills_section
    from skillbook.snapshot import SkillSnapshot, SnapshotVersions
    from skillbook.status import StatusReport, build_status
    from skillbook.validate import validate_path

del TYPE_CHECKING
