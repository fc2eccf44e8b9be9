"""The typed, immutable values that flow between the stages.

parse produces :class:`ParsedSkillFile`; discover turns those into :class:`Skill`;
gate, catalog and commands read :class:`Skill` and never write it.
Field names are Pythonic; ``to_json()`` methods give OpenClaw's camelCase shapes.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from skillbook.base.fast_init import fast_init
from skillbook.base.js import js_trim
from skillbook.diagnostics import Diagnostic

EMPTY_MAP: Mapping[str, Any] = MappingProxyType({})


class Source(enum.StrEnum):
    """Where a skill was found. The values are OpenClaw's source labels."""

    EXTRA = "openclaw-extra"
    BUNDLED = "openclaw-bundled"
    MANAGED = "openclaw-managed"
    PERSONAL = "agents-skills-personal"
    PROJECT = "agents-skills-project"
    WORKSPACE = "openclaw-workspace"
    #: Skills published by a remote MCP server (skillbook only).
    REMOTE = "mcp-remote"


#: Load order = precedence order: a later source overrides an earlier one by name.
SOURCE_PRECEDENCE: tuple[Source, ...] = (
    Source.EXTRA,
    Source.BUNDLED,
    Source.MANAGED,
    Source.PERSONAL,
    Source.PROJECT,
    Source.WORKSPACE,
)


#: Sources whose skills the user put there; opt-in priorities keep them before
#: bundled, extra and remote skills when a prompt budget or a menu cap cuts.
USER_SOURCES: frozenset[str] = frozenset(
    {Source.WORKSPACE, Source.PROJECT, Source.PERSONAL, Source.MANAGED}
)


@fast_init
@dataclass(frozen=True, slots=True)
class InstallSpec:
    """One validated ``metadata.openclaw.install[]`` entry."""

    kind: str  # brew | node | go | uv | download
    id: str | None = None
    label: str | None = None
    bins: tuple[str, ...] = ()
    os: tuple[str, ...] = ()
    formula: str | None = None
    package: str | None = None
    module: str | None = None
    url: str | None = None
    archive: str | None = None
    extract: bool | None = None
    strip_components: float | None = None
    target_dir: str | None = None
    #: A download's digest as OpenClaw 2026.9 reads it (validated at load, in its shape);
    #: set only under the ``openclaw-2026.9`` profile.
    sha256: str | None = None
    #: The digest as written, kept under profiles whose OpenClaw ignores it (2026.4), so
    #: that ``skillbook setup`` still verifies it; never in :meth:`to_json`.
    declared_sha256: str | None = None

    @property
    def expected_sha256(self) -> str | None:
        """The digest a download must have, whichever profile read the spec."""
        return self.sha256 or self.declared_sha256

    def to_json(self) -> dict[str, Any]:
        """OpenClaw's shape, in its key order, undefined fields left out."""
        pairs: list[tuple[str, Any]] = [
            ("kind", self.kind),
            ("id", self.id),
            ("label", self.label),
            ("bins", list(self.bins) if self.bins else None),
            ("os", list(self.os) if self.os else None),
            ("formula", self.formula),
            ("package", self.package),
            ("module", self.module),
            ("url", self.url),
            ("sha256", self.sha256),
            ("archive", self.archive),
            ("extract", self.extract),
            ("stripComponents", self.strip_components),
            ("targetDir", self.target_dir),
        ]
        return {k: v for k, v in pairs if v is not None}


@fast_init
@dataclass(frozen=True, slots=True)
class Requires:
    """``metadata.openclaw.requires``: what must be present for a skill to be ready."""

    bins: tuple[str, ...] = ()
    any_bins: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    config: tuple[str, ...] = ()

    def to_json(self) -> dict[str, list[str]]:
        return {
            "bins": list(self.bins),
            "anyBins": list(self.any_bins),
            "env": list(self.env),
            "config": list(self.config),
        }


@fast_init
@dataclass(frozen=True, slots=True)
class SkillMetadata:
    """The OpenClaw manifest (``metadata.openclaw``), normalised as OpenClaw does.

    ``raw`` keeps the manifest object exactly as parsed (nested maps and lists).
    """

    always: bool | None = None
    emoji: str | None = None
    homepage: str | None = None
    skill_key: str | None = None
    primary_env: str | None = None
    os: tuple[str, ...] | None = None
    requires: Requires | None = None
    install: tuple[InstallSpec, ...] | None = None
    manifest_key: str = "openclaw"
    raw: Mapping[str, Any] = field(default_factory=lambda: EMPTY_MAP, compare=False)

    def to_json(self) -> dict[str, Any]:
        pairs: list[tuple[str, Any]] = [
            ("always", self.always),
            ("skillKey", self.skill_key),
            ("primaryEnv", self.primary_env),
            ("emoji", self.emoji),
            ("homepage", self.homepage),
            ("os", list(self.os) if self.os is not None else None),
            ("requires", self.requires.to_json() if self.requires else None),
            ("install", [s.to_json() for s in self.install] if self.install else None),
        ]
        return {k: v for k, v in pairs if v is not None}


@fast_init
@dataclass(frozen=True, slots=True)
class CommandDispatch:
    """``command-dispatch: tool``: a slash command that calls a tool, no model involved."""

    tool_name: str
    kind: str = "tool"
    arg_mode: str = "raw"

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "toolName": self.tool_name, "argMode": self.arg_mode}


@fast_init
@dataclass(frozen=True, slots=True)
class InvocationPolicy:
    user_invocable: bool = True
    disable_model_invocation: bool = False

    def to_json(self) -> dict[str, bool]:
        return {
            "userInvocable": self.user_invocable,
            "disableModelInvocation": self.disable_model_invocation,
        }


@fast_init
@dataclass(frozen=True, slots=True)
class Frontmatter:
    """The frontmatter in two views.

    ``values`` is OpenClaw's string view (every value a string, in its order);
    ``data`` is the structured view (the YAML mapping as parsed, or the line-parser
    strings when YAML failed). ``lines`` maps each key to its 1-based line in the file.
    """

    values: Mapping[str, str] = field(default_factory=lambda: EMPTY_MAP)
    data: Mapping[str, Any] = field(default_factory=lambda: EMPTY_MAP)
    yaml_ok: bool = False
    lines: Mapping[str, int] = field(default_factory=lambda: EMPTY_MAP)

    def get(self, key: str) -> str | None:
        return self.values.get(key)

    def line_of(self, key: str) -> int | None:
        return self.lines.get(key)


@fast_init
@dataclass(frozen=True, slots=True)
class ParsedSkillFile:
    """Everything parse learns from the text of one SKILL.md, without touching disk."""

    frontmatter: Frontmatter
    body: str
    body_line: int
    metadata: SkillMetadata | None
    invocation: InvocationPolicy
    dispatch: CommandDispatch | None
    diagnostics: tuple[Diagnostic, ...] = ()
    had_bom: bool = False
    has_frontmatter: bool = False
    #: The profile's frontmatter rules reject the file (2026.9: YAML that does not
    #: parse, an unterminated block); a ``parse.frontmatter-invalid`` error says why.
    invalid: bool = False

    @property
    def name(self) -> str:
        """The ``name`` field trimmed (may be empty: discover falls back to the folder)."""
        return js_trim(self.frontmatter.get("name") or "")

    @property
    def description(self) -> str:
        return js_trim(self.frontmatter.get("description") or "")


@fast_init
@dataclass(frozen=True, slots=True)
class Skill:
    """A loaded skill: a folder with a SKILL.md that has a name and a description."""

    name: str
    description: str
    file_path: Path
    base_dir: Path
    source: str
    parsed: ParsedSkillFile = field(compare=False, repr=False)
    #: The real (symlink-resolved) folder, used for de-duplication.
    real_dir: Path | None = field(default=None, compare=False, repr=False)
    #: For remote skills: where they came from (an MCP server URL or command).
    origin: str | None = None

    @classmethod
    def create(
        cls,
        name: str,
        description: str,
        *,
        base_dir: Path,
        source: str = Source.WORKSPACE.value,
        metadata: SkillMetadata | None = None,
        invocation: InvocationPolicy | None = None,
        frontmatter: Mapping[str, str] | None = None,
        dispatch: CommandDispatch | None = None,
    ) -> Skill:
        """A skill made in code rather than parsed from a file (tests, generated skills).

        ``file_path`` is ``base_dir / "SKILL.md"``; nothing is read from disk.
        """
        values = MappingProxyType(dict(frontmatter or {}))
        parsed = ParsedSkillFile(
            frontmatter=Frontmatter(values=values, data=values),
            body="",
            body_line=1,
            metadata=metadata,
            invocation=invocation if invocation is not None else InvocationPolicy(),
            dispatch=dispatch,
        )
        return cls(
            name=name,
            description=description,
            file_path=base_dir / "SKILL.md",
            base_dir=base_dir,
            source=str(source),
            parsed=parsed,
        )

    @property
    def frontmatter(self) -> Frontmatter:
        return self.parsed.frontmatter

    @property
    def metadata(self) -> SkillMetadata | None:
        return self.parsed.metadata

    @property
    def invocation(self) -> InvocationPolicy:
        return self.parsed.invocation

    @property
    def dispatch(self) -> CommandDispatch | None:
        return self.parsed.dispatch

    @property
    def skill_key(self) -> str:
        """The config key: ``metadata.openclaw.skillKey`` or the name."""
        meta = self.parsed.metadata
        return meta.skill_key if meta is not None and meta.skill_key is not None else self.name

    @property
    def disable_model_invocation(self) -> bool:
        return self.parsed.invocation.disable_model_invocation

    # Agent Skills standard fields, read from the structured frontmatter.
    @property
    def license(self) -> str | None:
        return _str_field(self.parsed.frontmatter, "license")

    @property
    def compatibility(self) -> str | None:
        return _str_field(self.parsed.frontmatter, "compatibility")

    @property
    def allowed_tools(self) -> str | None:
        return _str_field(self.parsed.frontmatter, "allowed-tools")

    @property
    def version(self) -> str | None:
        top = _str_field(self.parsed.frontmatter, "version")
        if top is not None:
            return top
        meta = self.parsed.frontmatter.data.get("metadata")
        if isinstance(meta, Mapping):
            v = meta.get("version")
            if isinstance(v, str | int | float) and not isinstance(v, bool):
                return str(v)
        return None

    def to_json(self) -> dict[str, Any]:
        """OpenClaw's ``Skill`` shape (as in ``entries[].skill``)."""
        return {
            "name": self.name,
            "description": self.description,
            "filePath": str(self.file_path),
            "baseDir": str(self.base_dir),
            "source": self.source,
            "disableModelInvocation": self.disable_model_invocation,
        }


def _str_field(fm: Frontmatter, key: str) -> str | None:
    value = fm.data.get(key)
    if isinstance(value, str):
        return value.strip()
    if value is None:
        return fm.values.get(key)
    return fm.values.get(key)
