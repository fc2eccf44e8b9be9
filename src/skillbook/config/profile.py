"""Compatibility profiles: which OpenClaw release skillbook reproduces byte for byte.

Input: a profile name (``skills.compat`` in the config, ``--compat`` on the command
line, ``Loader(compat=…)`` in Python). Output: a frozen :class:`Profile` that holds
*every* rule in which OpenClaw 2026.9.6 differs from 2026.4.12 — defaults, ordering,
catalog wording and budget algorithm, discovery, frontmatter, manifest, gate, status
and command rules. The stages read the rule they need from the profile they are
given; none of them compares profile names. ``docs/oracle-differences.md`` lists
each difference with the upstream function it comes from and the test that pins it.

The default stays ``openclaw-2026.4``: it is the release the specification was
written from and that skillbook's users' catalogs were checked against; a change of
default changes every prompt (order, wording, budget), so it waits for a release
note (see ``docs/compat.md``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

__all__ = [
    "DEFAULT_PROFILE",
    "OPENCLAW_2026_4",
    "OPENCLAW_2026_9",
    "PROFILES",
    "PROFILE_NAMES",
    "CatalogRules",
    "CommandRules",
    "DiscoveryRules",
    "FrontmatterRules",
    "GateRules",
    "Profile",
    "ProfileName",
    "profile_of",
]


class ProfileName(enum.StrEnum):
    OPENCLAW_2026_4 = "openclaw-2026.4"
    OPENCLAW_2026_9 = "openclaw-2026.9"


@dataclass(frozen=True, slots=True)
class CatalogRules:
    """The ``<available_skills>`` catalog (spec §5; 2026.9: ``skill-prompt-limits.ts``)."""

    #: ``skills.limits.maxSkillsPromptChars`` when not set.
    default_max_chars: int
    #: Sort the catalog by name (``localeCompare(…, "en")``) instead of load order.
    sort_by_name: bool
    #: The second header line of the full catalog.
    read_full: str
    #: The second header line of the compact catalog without descriptions.
    read_compact: str
    #: The second header line of a compact catalog with shortened descriptions (None:
    #: the profile has no such tier: descriptions are omitted at once).
    read_shortened: str | None
    #: 2026.4: the budget counts the catalog only and the compact tier keeps 150
    #: characters free for the note. 2026.9 (``prepareSkillsForPrompt``): the note and
    #: the remote note count too, and the compact tier shortens descriptions first.
    bounded: bool
    #: Per-agent ``agents.list[].skillsLimits.maxSkillsPromptChars`` overrides the limit.
    agent_limits: bool
    #: Skills under ``<state>/skills`` and ``<state>/plugin-skills`` keep absolute paths
    #: in the catalog unless they lie under the OS home (``compactPromptSkills``).
    keep_state_paths: bool
    #: ``resolvedSkills`` of a snapshot: every visible skill, or only those kept.
    resolved_only_kept: bool
    #: ``~/`` also stands for the effective home (``OPENCLAW_HOME``), not only the OS home.
    compact_effective_home: bool


@dataclass(frozen=True, slots=True)
class FrontmatterRules:
    """Reading SKILL.md frontmatter (spec §2.2-2.3; 2026.9: ``markdown-core/frontmatter.ts``)."""

    #: The closing ``---`` must be a line of its own (2026.4: any line starting ``---``).
    exact_delimiters: bool
    #: A frontmatter that is not valid YAML makes the skill invalid (2026.4: the line
    #: parser's values are used).
    yaml_errors_invalid: bool
    #: Fields whose unquoted value is re-quoted once when YAML fails on its line.
    recovered_fields: tuple[str, ...] = ()
    #: ``install[].sha256`` of download specs is validated (a bad digest drops the spec).
    download_sha256: bool = False
    #: An empty ``skillKey`` string counts as absent.
    skill_key_non_empty: bool = False


@dataclass(frozen=True, slots=True)
class DiscoveryRules:
    """Which folders are skills (spec §3; 2026.9: ``skill-root-discovery.ts``)."""

    #: Merged skills sorted by name (2026.4: first-seen order).
    sort_by_name: bool
    #: Candidates cut at ``maxCandidatesPerRoot`` (2026.4: at ``maxSkillsLoadedPerSource``).
    slice_by_candidates: bool
    #: An invalid SKILL.md lets its child folders load as skills (``loadSkillsFromDirSafe``).
    invalid_falls_back_to_children: bool
    #: ``<group>/<skill>`` layouts load without ``skills.load.grouped``; the depth for
    #: most roots and for extra dirs that are not a ``skills`` folder (0 = off).
    grouped_depth: int
    grouped_depth_extra: int
    #: Sources whose symlinked skill folders may point anywhere (the real path becomes
    #: the skill's folder).
    uncontained_sources: frozenset[str]
    #: ``~/.agents/skills`` is read only when the state dir is the default one.
    personal_needs_default_state: bool
    #: A symlinked SKILL.md loads when its target stays inside the skill folder.
    symlinked_skill_md: bool
    #: A SKILL.md with more than one hard link is refused (outside bundled skills).
    reject_hardlinks: bool
    #: The manifest keys read, in order (``metadata.<key>``).
    manifest_keys: tuple[str, ...]
    #: ``.openclaw/source-origin.json`` ``slug`` is the skill key when the manifest has none.
    source_origin_key: bool


@dataclass(frozen=True, slots=True)
class GateRules:
    """Eligibility and the status report (spec §4, §10; 2026.9: ``status.ts``)."""

    #: A ``requires.env`` value (process or ``entries.env``) or ``apiKey`` must be
    #: non-blank after trimming (2026.4: any non-empty string).
    env_trimmed: bool
    #: ``os`` in the status report: compared case-insensitively, ``macos`` = ``darwin``.
    status_os_normalized: bool
    #: Status entries carry ``blockedByAgentFilter``, ``platformIncompatible``,
    #: ``modelVisible``, ``userInvocable`` and ``commandVisible``; the report carries
    #: ``agentId`` and ``agentSkillFilter``.
    status_visibility_fields: bool
    #: Install option ids of id-less specs count in the unfiltered list.
    install_index_unfiltered: bool


@dataclass(frozen=True, slots=True)
class CommandRules:
    """Slash commands (spec §6; 2026.9: ``command-specs.ts``)."""

    #: Descriptions cut to this many UTF-16 units (None: never cut).
    description_max: int | None
    #: Specs carry ``displayName``, ``skillFile``, ``modelVisible`` and ``skillSource``.
    rich_specs: bool
    #: OpenClaw's built-in reserved chat command names.
    reserved_names: frozenset[str]


@dataclass(frozen=True, slots=True)
class Profile:
    """Everything that differs between two OpenClaw releases, in one value."""

    name: ProfileName
    #: The OpenClaw release this profile is checked against (the oracle's package).
    openclaw_version: str
    catalog: CatalogRules
    frontmatter: FrontmatterRules
    discovery: DiscoveryRules
    gate: GateRules
    commands: CommandRules

    def __str__(self) -> str:
        return self.name.value


_RESERVED_2026_4: Final = frozenset(
    [
        "acp",
        "activation",
        "agents",
        "allowlist",
        "approve",
        "bash",
        "btw",
        "commands",
        "compact",
        "config",
        "context",
        "debug",
        "elev",
        "elevated",
        "exec",
        "export",
        "export-session",
        "fast",
        "focus",
        "help",
        "id",
        "kill",
        "mcp",
        "model",
        "models",
        "new",
        "plugin",
        "plugins",
        "queue",
        "reason",
        "reasoning",
        "reset",
        "restart",
        "send",
        "session",
        "skill",
        "status",
        "steer",
        "stop",
        "subagents",
        "t",
        "tasks",
        "tell",
        "think",
        "thinking",
        "tools",
        "trace",
        "tts",
        "unfocus",
        "usage",
        "v",
        "verbose",
        "whoami",
    ]
)
#: 2026.9.6 drops focus, kill and unfocus and adds twelve names.
_RESERVED_2026_9: Final = (_RESERVED_2026_4 - {"focus", "kill", "unfocus"}) | frozenset(
    [
        "dashboard",
        "diagnostics",
        "export-trajectory",
        "goal",
        "learn",
        "login",
        "loop",
        "name",
        "openclaw",
        "side",
        "trajectory",
        "update",
    ]
)
_READ_2026_4 = "Use the read tool to load a skill's file when the task matches its {}."
_READ_2026_9 = "Read a skill's file at its listed location when the task matches its {}."

OPENCLAW_2026_4: Final = Profile(
    name=ProfileName.OPENCLAW_2026_4,
    openclaw_version="2026.4.12",
    catalog=CatalogRules(
        default_max_chars=30_000,
        sort_by_name=False,
        read_full=_READ_2026_4.format("description"),
        read_compact=_READ_2026_4.format("name"),
        read_shortened=None,
        bounded=False,
        agent_limits=False,
        keep_state_paths=False,
        resolved_only_kept=False,
        compact_effective_home=True,
    ),
    frontmatter=FrontmatterRules(exact_delimiters=False, yaml_errors_invalid=False),
    discovery=DiscoveryRules(
        sort_by_name=False,
        slice_by_candidates=False,
        invalid_falls_back_to_children=True,
        grouped_depth=0,
        grouped_depth_extra=0,
        uncontained_sources=frozenset(),
        personal_needs_default_state=False,
        symlinked_skill_md=False,
        reject_hardlinks=False,
        manifest_keys=("openclaw",),
        source_origin_key=False,
    ),
    gate=GateRules(
        env_trimmed=False,
        status_os_normalized=False,
        status_visibility_fields=False,
        install_index_unfiltered=False,
    ),
    commands=CommandRules(description_max=100, rich_specs=False, reserved_names=_RESERVED_2026_4),
)

OPENCLAW_2026_9: Final = Profile(
    name=ProfileName.OPENCLAW_2026_9,
    openclaw_version="2026.9.6",
    catalog=CatalogRules(
        default_max_chars=18_000,
        sort_by_name=True,
        read_full=_READ_2026_9.format("description"),
        read_compact=_READ_2026_9.format("name"),
        read_shortened=_READ_2026_9.format("name or description"),
        bounded=True,
        agent_limits=True,
        keep_state_paths=True,
        resolved_only_kept=True,
        compact_effective_home=False,
    ),
    frontmatter=FrontmatterRules(
        exact_delimiters=True,
        yaml_errors_invalid=True,
        recovered_fields=("description", "read_when", "summary"),
        download_sha256=True,
        skill_key_non_empty=True,
    ),
    discovery=DiscoveryRules(
        sort_by_name=True,
        slice_by_candidates=True,
        invalid_falls_back_to_children=False,
        grouped_depth=6,
        grouped_depth_extra=2,
        uncontained_sources=frozenset({"openclaw-managed", "agents-skills-personal"}),
        personal_needs_default_state=True,
        symlinked_skill_md=True,
        reject_hardlinks=True,
        manifest_keys=("openclaw", "clawdbot"),
        source_origin_key=True,
    ),
    gate=GateRules(
        env_trimmed=True,
        status_os_normalized=True,
        status_visibility_fields=True,
        install_index_unfiltered=True,
    ),
    commands=CommandRules(description_max=None, rich_specs=True, reserved_names=_RESERVED_2026_9),
)

#: Every profile by name, in release order.
PROFILES: Final = {p.name.value: p for p in (OPENCLAW_2026_4, OPENCLAW_2026_9)}
PROFILE_NAMES: Final[tuple[str, ...]] = tuple(PROFILES)
#: 2026.4 until the team decides otherwise (see the module docstring).
DEFAULT_PROFILE: Final = OPENCLAW_2026_4


def profile_of(value: Profile | str | None) -> Profile:
    """``value`` as a :class:`Profile` (None: the default); raises ``ValueError`` naming
    the known profiles."""
    if value is None:
        return DEFAULT_PROFILE
    if isinstance(value, Profile):
        return value
    found = PROFILES.get(str(value))
    if found is None:
        raise ValueError(f"unknown compat profile {value!r}; expected one of {', '.join(PROFILES)}")
    return found
