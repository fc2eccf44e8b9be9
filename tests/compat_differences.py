"""Every behavioural difference between OpenClaw 2026.4.12 and 2026.9.6 that skillbook knows.

Not a test module. Each entry names the upstream function it comes from (2026.9.6's
source file, as the package's ``dist/`` regions name it), the :class:`skillbook.config.profile.
Profile` field that holds the rule, and the scenario of :mod:`compat_scenarios` that
pins it against both oracles. ``docs/oracle-differences.md`` lists the same ids;
:mod:`test_compat_differences` keeps the three in step, and a profile field that
differs between the two profiles without an entry here fails that test.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Difference:
    id: str
    #: The Profile fields that hold the rule ("catalog.sort_by_name", …).
    rules: tuple[str, ...]
    #: Where 2026.9.6 does it (``file#function``).
    upstream: str
    summary: str
    #: A test (``file::function``, the file relative to tests/) that pins it where no
    #: oracle scenario can (the oracle cannot put HOME at /data, say); otherwise the
    #: scenario of the same id.
    test: str | None = None


DIFFERENCES: tuple[Difference, ...] = (
    Difference(
        "catalog-order",
        ("catalog.sort_by_name", "discovery.sort_by_name"),
        "src/skills/loading/workspace-skill-loader.ts#mergeSkillRecords, "
        "skill-prompt-limits.ts#prepareSkillsForPrompt",
        "skills are sorted by name (localeCompare 'en'), not kept in first-seen order",
    ),
    Difference(
        "default-budget",
        ("catalog.default_max_chars",),
        "src/skills/loading/skill-prompt-limits.ts#DEFAULT_MAX_SKILLS_PROMPT_CHARS",
        "the default catalog budget is 18 000 characters, not 30 000",
    ),
    Difference(
        "compact-descriptions",
        ("catalog.bounded", "catalog.read_full", "catalog.read_compact", "catalog.read_shortened"),
        "src/skills/loading/skill-prompt-limits.ts#prepareSkillsForPrompt, "
        "skill-contract.ts#formatSkillsCompactForPrompt",
        "the second header line is reworded; the compact tier shortens descriptions "
        "(binary search 4..220) before omitting them",
    ),
    Difference(
        "notes-in-budget",
        ("catalog.bounded",),
        "src/skills/loading/skill-prompt-limits.ts#prepareSkillsForPrompt (renderWithinLimit)",
        "the truncation note and the remote note count toward the budget (no 150 reserve)",
    ),
    Difference(
        "agent-prompt-limit",
        ("catalog.agent_limits",),
        "src/skills/discovery/agent-filter.ts#resolveEffectiveAgentSkillsLimits",
        "agents.list[].skillsLimits.maxSkillsPromptChars overrides the budget",
    ),
    Difference(
        "state-paths-absolute",
        ("catalog.keep_state_paths",),
        "src/skills/loading/skill-paths.ts#compactPromptSkills",
        "paths under <state>/skills and <state>/plugin-skills stay absolute unless under "
        "the OS home (which only a container with HOME=/data and the state in "
        "/data/.openclaw can arrange)",
        test="config/test_profile.py::test_state_paths_stay_absolute_in_a_data_container",
    ),
    Difference(
        "home-compaction",
        ("catalog.compact_effective_home",),
        "src/skills/loading/skill-paths.ts#resolveCompactHomePrefixes",
        "catalog paths are written ~/… only under the OS home, not under OPENCLAW_HOME",
    ),
    Difference(
        "snapshot-resolved-kept",
        ("catalog.resolved_only_kept",),
        "src/skills/loading/workspace-skill-prompt.ts#resolveWorkspaceSkillPromptState",
        "a snapshot's resolvedSkills are the skills the catalog shows, not all visible ones",
    ),
    Difference(
        "grouped-discovery",
        ("discovery.grouped_depth", "discovery.grouped_depth_extra"),
        "src/skills/loading/skill-root-discovery.ts#discoverSkillCandidates",
        "folders without SKILL.md are searched down to 6 levels (2 for extra dirs)",
    ),
    Difference(
        "invalid-no-children",
        ("discovery.invalid_falls_back_to_children",),
        "src/skills/loading/local-loader.ts#loadSingleSkillDirectory",
        "an invalid SKILL.md no longer lets its child folders load",
    ),
    Difference(
        "candidates-limit",
        ("discovery.slice_by_candidates",),
        "src/skills/loading/skill-root-discovery.ts#discoverSkillCandidates, "
        "skill-root-loader.ts#loadSkillRootRecords",
        "candidates are cut at maxCandidatesPerRoot; loading stops at maxSkillsLoadedPerSource",
    ),
    Difference(
        "nested-root",
        ("discovery.slice_by_candidates",),
        "src/skills/loading/skill-root-discovery.ts#resolveNestedSkillsRoot",
        "<root>/skills is used only when the root holds no skill; a skills/ child is scanned",
    ),
    Difference(
        "personal-default-state",
        ("discovery.personal_needs_default_state",),
        "src/skills/loading/workspace-skill-sources.ts#resolveWorkspaceSkillSourcePlan "
        "(isDefaultStateDir)",
        "~/.agents/skills is read only when the state dir is the default one",
    ),
    Difference(
        "managed-uncontained",
        ("discovery.uncontained_sources",),
        "src/skills/loading/skill-root-discovery.ts#shouldEnforceConfiguredSkillRootContainment",
        "managed and personal skill folders may link anywhere; the real folder is the skill's",
    ),
    Difference(
        "symlinked-skill-md",
        ("discovery.symlinked_skill_md",),
        "src/skills/loading/local-loader.ts#readSkillFileSync (rejectSymlinks: false)",
        "a symlinked SKILL.md loads when its target stays inside the skill folder; a "
        "hard-linked one does not",
    ),
    Difference(
        "hardlinked-skill-md",
        ("discovery.reject_hardlinks",),
        "src/skills/loading/local-loader.ts#readSkillFileSync (rejectHardlinks)",
        "a SKILL.md with more than one hard link is refused (outside bundled skills)",
    ),
    Difference(
        "manifest-clawdbot",
        ("discovery.manifest_keys",),
        "src/compat/legacy-names.ts#LEGACY_MANIFEST_KEYS",
        "metadata.clawdbot is read when metadata.openclaw is absent",
    ),
    Difference(
        "source-origin-key",
        ("discovery.source_origin_key",),
        "src/skills/loading/skill-entry-metadata.ts#resolveSkillEntryMetadata",
        ".openclaw/source-origin.json's slug is the skill key when the manifest has none",
    ),
    Difference(
        "yaml-errors-invalid",
        ("frontmatter.yaml_errors_invalid", "frontmatter.recovered_fields"),
        "packages/markdown-core/src/frontmatter.ts#parseFrontmatterBlockResult, "
        "src/skills/loading/frontmatter.ts#parseSkillFrontmatter",
        "frontmatter that is not valid YAML makes the skill invalid (after re-quoting a "
        "free-text field once)",
    ),
    Difference(
        "exact-delimiters",
        ("frontmatter.exact_delimiters",),
        "packages/markdown-core/src/frontmatter.ts#extractFrontmatterBlockFromNormalized",
        "the closing --- must be a line of its own; the opening may carry blanks",
    ),
    Difference(
        "bom-loads",
        ("frontmatter.exact_delimiters",),
        "packages/markdown-core/src/frontmatter.ts#normalizeFrontmatterContent",
        "a UTF-8 BOM is stripped (skillbook's deliberate fix under 2026.4)",
    ),
    Difference(
        "download-sha256",
        ("frontmatter.download_sha256",),
        "src/skills/loading/frontmatter.ts#parseInstallSpec",
        "a download spec's sha256 must be 64 hex digits, else the spec is dropped",
    ),
    Difference(
        "skill-key-non-empty",
        ("frontmatter.skill_key_non_empty",),
        "src/skills/loading/frontmatter.ts#resolveSkillManifestMetadata",
        "an empty skillKey counts as absent",
    ),
    Difference(
        "env-blank",
        ("gate.env_trimmed",),
        "src/skills/loading/config.ts#isSkillEnvRequirementSatisfied",
        "a blank env value or apiKey no longer satisfies requires.env",
    ),
    Difference(
        "status-os-normalized",
        ("gate.status_os_normalized",),
        "src/shared/entry-status.ts#evaluateRequirementsFromMetadataWithRemote",
        "the status compares os case-insensitively with macos = darwin (the runtime gate does not)",
    ),
    Difference(
        "always-os-status",
        ("gate.status_os_normalized",),
        "src/shared/entry-status.ts#evaluateRequirementsFromMetadataWithRemote",
        "always: true no longer hides a failed os gate in the status (skillbook's "
        "deliberate fix under 2026.4)",
    ),
    Difference(
        "status-visibility",
        ("gate.status_visibility_fields",),
        "src/skills/discovery/status.ts#buildSkillStatus, buildWorkspaceSkillStatus",
        "status entries carry blockedByAgentFilter, platformIncompatible, modelVisible, "
        "userInvocable, commandVisible; the report agentId and agentSkillFilter",
    ),
    Difference(
        "install-index",
        ("gate.install_index_unfiltered",),
        "src/skills/discovery/status.ts#normalizeInstallOptions",
        "install option ids of id-less specs count in the unfiltered list",
    ),
    Difference(
        "command-specs",
        ("commands.description_max", "commands.rich_specs", "commands.reserved_names"),
        "src/skills/discovery/command-specs.ts#assembleWorkspaceSkillCommandSpecs, "
        "chat-command-invocation.ts#listReservedChatSlashCommandNames",
        "descriptions are no longer cut at 100; specs carry displayName, skillFile, "
        "modelVisible, skillSource; the reserved names changed",
    ),
)

#: Scenarios where skillbook's 2026.4 profile differs from 2026.4.12 on purpose.
DELIBERATE_2026_4 = frozenset({"bom-loads", "always-os-status"})


#: Rules the plan for this profile expected to change and that 2026.9.6 keeps as
#: 2026.4.12 had them, each checked by the scenario of that id (both profiles must
#: match their release; the two releases give the same gates).
SAME: dict[str, str] = {
    "allow-bundled-empty": "skills.allowBundled: [] restricts nothing in either release "
    "(2026.9.6 only adds the custodian bundled tier to what it restricts)",
    "project-symlink-escape": "a <workspace>/.agents/skills folder linking outside stays "
    "refused in both releases (only the managed and personal roots may link anywhere)",
}
