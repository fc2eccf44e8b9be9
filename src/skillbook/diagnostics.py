"""Diagnostics: what skillbook says about a skill it rejected, degraded or changed.

Every stage reports problems as :class:`Diagnostic` values instead of raising or
skipping silently. Codes are stable (``<stage>.<slug>``) and each one is listed in
:data:`CODES` and in ``docs/diagnostics.md``; a test keeps the two in step.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class Severity(enum.StrEnum):
    """How much a diagnostic matters: errors drop or reject, warnings degrade."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


#: Every diagnostic code skillbook emits, with a one-line summary.
#: ``docs/diagnostics.md`` documents each of them; tests fail on an unlisted code.
CODES: dict[str, str] = {
    # parse: reading one SKILL.md
    "parse.bom": "A UTF-8 byte-order mark was stripped (OpenClaw loses such files).",
    "parse.invalid-utf8": "The file is not valid UTF-8; undecodable bytes were replaced.",
    "parse.binary": "The file holds NUL bytes or other binary content.",
    "parse.internal-error": "A bug in skillbook's parser stopped it on this file (traceback logged).",
    "parse.control-chars": "The frontmatter holds control characters.",
    "parse.no-frontmatter": "The file does not start with a `---` frontmatter block.",
    "parse.unterminated-frontmatter": "The `---` frontmatter block is never closed.",
    "parse.empty-frontmatter": "The frontmatter block is empty.",
    "parse.frontmatter-invalid": "The compat profile's frontmatter rules reject the file.",
    "parse.newer-field": "A field a newer OpenClaw reads is kept but not used by this profile.",
    "parse.yaml-invalid": "The frontmatter is not valid YAML; the line parser was used.",
    "parse.yaml-recovered": "A free-text field is not valid YAML; OpenClaw 2026.9 quotes it and reads it.",
    "parse.yaml-duplicate-key": "A frontmatter key appears twice; the line parser was used.",
    "parse.yaml-alias-bomb": "YAML aliases expand beyond the safety bound; the line parser was used.",
    "parse.yaml-too-deep": "The frontmatter nests deeper than the safety bound.",
    "parse.yaml-not-mapping": "The frontmatter is YAML but not a mapping.",
    "parse.missing-description": "No description: the skill cannot be offered to a model.",
    "parse.missing-name": "No name in the frontmatter; the folder name is used.",
    "parse.metadata-invalid": "The `metadata` value is not a valid JSON5 object; the skill has no gates.",
    "parse.metadata-no-manifest": "`metadata` has no `openclaw` object; the skill has no gates.",
    "parse.metadata-legacy-key": "Gates were read from a legacy key (`clawdbot`, `clawdis`, `moltbot`).",
    "parse.install-dropped": "An install spec was dropped (unknown kind or unsafe value).",
    "parse.field-type": "A field has a value of the wrong type and was ignored.",
    "parse.arg-mode": "`command-arg-mode` is not `raw`; `raw` is used.",
    "parse.dispatch-no-tool": "`command-dispatch: tool` without `command-tool`; no dispatch.",
    # discover: finding skills on disk
    "discover.hardlink": "A hard-linked SKILL.md is refused (openclaw-2026.9 profile).",
    "discover.file-too-large": "SKILL.md is larger than `maxSkillFileBytes`; not read.",
    "discover.symlinked-skill-md": "SKILL.md is a symbolic link; refused.",
    "discover.symlink-escape": "A symlinked skill folder points outside its root; refused.",
    "discover.path-escape": "A skill path resolves outside its root; refused.",
    "discover.unreadable": "A file or folder could not be read.",
    "discover.not-regular-file": "SKILL.md is not a regular file.",
    "discover.over-limit": "A root holds more candidates than the configured limits; some were not loaded.",
    "discover.shadowed": "A skill with the same name in a higher-precedence source hides this one.",
    "discover.duplicate-realpath": "The same skill folder was reached twice (symlink); loaded once.",
    "discover.nested-root": "A `skills/` folder inside the root was used as the root.",
    "discover.grouped-layout": "A folder without SKILL.md holds skill folders one level down.",
    "discover.learned-hidden": "skills/auto/SKILL.md hides the learned skills below it.",
    "discover.hidden-dir": "Skill folders under a dot-directory are not discovered.",
    "discover.root-missing": "A configured skills folder does not exist.",
    "discover.workspace-missing": "The workspace given to load() does not exist; only other sources' skills were loaded.",
    "discover.skill-md-case": "A folder holds `skill.md` in another case; only `SKILL.md` is read.",
    "discover.standalone-md": "A standalone Markdown file was loaded as a skill (mixed/legacy mode).",
    "discover.symlink-loop": "A symbolic link among the skills loops back to itself; skipped.",
    "discover.remote-shadowed": "A remote skill has the name or config key of a local skill; the local one wins and the remote one is not loaded.",
    "discover.source-unavailable": "A config section describes a skill source that no installed package provides.",
    "discover.not-fetchable": "A file of a skill is missing and its source cannot fetch files.",
    # plugin: plugin skill folders (spec §3.6)
    "plugin.load-path": "A `plugins.load.paths` entry or a plugin folder could not be used.",
    "plugin.blocked": "A plugin was refused: it escapes its folder, is world-writable or owned by another user.",
    "plugin.manifest-invalid": "A plugin's manifest or package.json is missing, unreadable or incomplete.",
    "plugin.incompatible": "A plugin needs a newer OpenClaw (`openclaw.install.minHostVersion`).",
    "plugin.duplicate-id": "Two plugins in different folders have the same id; both are loaded.",
    "plugin.inactive": "A plugin that declares skills is off (not allowed, disabled, or another memory plugin).",
    "plugin.path-missing": "A skill folder a plugin declares does not exist.",
    "plugin.path-escape": "A skill or command folder a plugin declares resolves outside the plugin.",
    # validate: strict (Agent Skills) rules
    "validate.name-invalid": "The name breaks the Agent Skills name rules.",
    "validate.name-mismatch": "The name differs from the folder name.",
    "validate.description-length": "The description is empty or longer than 1024 characters.",
    "validate.compatibility-length": "`compatibility` is longer than 500 characters.",
    "validate.unknown-field": "A frontmatter key that the Agent Skills standard does not define.",
    "validate.field-type": "A standard field has the wrong type.",
    "validate.yaml-style": "YAML that strict parsers (skills-ref) refuse: flow style, tags or anchors.",
    "validate.frontmatter": "The frontmatter block is missing, unclosed or not a mapping.",
    "validate.version": "`version` is not a semantic version.",
    "validate.skill-file": "No SKILL.md where one is needed (missing, named `skill.md`, or a standalone `.md` outside mixed/legacy mode).",
    "validate.path": "The path to validate does not exist or is neither a folder nor a Markdown file.",
    "validate.not-discovered": "A SKILL.md under the validated folder that the loader does not read.",
    # experience: sessions, drafts and learned skills (skillbook.experience)
    "experience.not-learned": "A recorded session was not turned into a draft; the message says why.",
    "experience.near-duplicate": "A new draft resembles an existing draft (steps) or skill (description).",
    "experience.no-when": "A draft's description does not say when to use it; it cannot be promoted.",
    "experience.no-steps": "A draft has no procedure step; it cannot be promoted.",
    "experience.replay-invalid": "A draft's replay helper does not parse (`bash -n`); it cannot be promoted.",
    "experience.risk-unacknowledged": "A draft's run touched user data without approval; promotion needs `--accept-risk`.",
    "experience.name-not-folder": "Strict mode: a learned skill's name is not its timestamped folder's; `--strict-name` names the folder after it.",
    "experience.not-promoted": "Automatic promotion of a draft was refused (a taken name, an existing file); it waits for review.",
    "experience.followed-skill": "A run followed an existing skill and did what it states; no draft is made.",
    "experience.refine": "A run followed a skill but did more, less or otherwise; its draft refines that skill.",
    "experience.refine-target": "The skill a refine draft changes is gone, or cannot be overridden from the workspace; the message says what to do.",
    "experience.scan-blocked": "The refined version of a skill has a critical security finding the skill did not have; it cannot be promoted.",
    "experience.refine-failed": "Refining a draft with the model failed; the unrefined draft is kept.",
    "experience.draft-unreadable": "A folder in the review queue has no readable draft.json; it is skipped.",
    "experience.stale-skill": "A skill was not used for `skills.experience.staleAfterDays` days (pin it to keep it quiet).",
    # prompt: the catalog
    "prompt.truncated": "Skills were left out of the prompt catalog by the count or size budget.",
    "prompt.compact": "The catalog uses the compact format (descriptions omitted).",
    # command: slash commands and channel menus
    "command.renamed": "A skill's slash command got a numbered suffix: its name was taken.",
    "command.description-shortened": "A command description was cut to fit a length limit.",
    "command.channel-omitted": "A command was left out of a channel's native menu (limits).",
    "command.bundle-skipped": "A Claude-bundle command file has no prompt after its frontmatter.",
    "command.exec-ignored": "`metadata.skillbook.commandExec` is not used (not a command, remote skill, or `command-dispatch: tool` wins).",
    "mcp.not-served": "A skill or file is not served over MCP (escaping symlink, over the limits, no valid entry).",
    # mcp client: skills from remote MCP servers (skillbook.mcp.remote_source)
    "mcp.server-unreachable": "A configured MCP server could not be started, reached or did not answer in time.",
    "mcp.token-missing": "An HTTP MCP server's `tokenEnv` names an environment variable that is unset or empty.",
    "mcp.unauthorized": "An HTTP MCP server refused the connection for want of a (valid) bearer token.",
    "mcp.no-skills-capability": "A configured MCP server does not declare the Skills extension.",
    "mcp.invalid-response": "An MCP server sent a malformed or failing answer to a skills or read request.",
    "mcp.invalid-entry": "A skills/list entry breaks the extension's rules; that skill is not loaded.",
    "mcp.dynamic-skill": "A remote skill has no file manifest (`dynamic`); it cannot be verified and is not loaded.",
    "mcp.skill-over-limit": "A remote skill exceeds the per-skill file count or size limit; not loaded.",
    "mcp.digest-mismatch": "A file from an MCP server does not match its manifest size or digest; refused, not cached.",
    "mcp.frontmatter-mismatch": "A remote SKILL.md's frontmatter differs from its skills/list entry; refused.",
    "mcp.unlisted-file": "A read of a remote skill file that its held manifest does not list; refused locally.",
    "mcp.name-collision": "Two remote skills share a name; both were renamed with their path or server label.",
    "mcp.untrusted-fields": "Install specs, command-dispatch or skillKey of a remote skill were ignored.",
    "mcp.cache-error": "The MCP skill cache folder could not be written.",
    "mcp.over-limit": "A server lists more skills than `maxSkillsLoadedPerSource`; the rest were not loaded.",
    "mcp.nested-conflict": "A file of a remote skill lies in a nested remote skill's folder with other bytes; not written.",
    # selection: query-time selection of skills (skillbook.selection)
    "selection.unlisted": "Eligible skills were not listed for this request; find_skills reaches them.",
    "selection.pinned-unknown": "A skills.selection.pinned name is not an eligible skill.",
    "selection.trigger-ignored": "A trigger hint of a skill could not be read and was ignored.",
    "selection.backend-unavailable": "An embedding backend could not be used; ranking fell back.",
    "selection.index-error": "The on-disk embedding index could not be read or written.",
    # sync: copying skills into a sandbox workspace (skillbook.distribution.sync)
    "sync.invalid-destination": "A skill has no safe destination folder in the target; not synced.",
    "sync.copy-failed": "A skill could not be copied into the target; not synced.",
    "sync.renamed": "A synced skill's folder got a numbered or normalised name.",
    "sync.symlink-host-path": "A synced skill holds links to host paths (OpenClaw's link copy).",
    "sync.link-dropped": "Links pointing outside a skill were left out of its sandbox copy.",
    "sync.skill-excluded": "A skill folder named `.git` or `node_modules` is left out of the sync.",
    "sync.standalone-skipped": "A standalone Markdown skill (mixed/legacy mode) is not synced.",
    "sync.leftover-removed": "A leftover of an interrupted sync or load was removed.",
    "sync.recovered": "An interrupted swap was completed or undone.",
    "sync.cleanup-failed": "The new tree is in place but the previous one could not be removed yet.",
    "sync.same-workspace": "The target is the source workspace; nothing was synced.",
    "load.edited": "A workspace copy made by `load` was edited; it is not overwritten without force.",
    "load.replaced": "An edited workspace copy was overwritten (forced); the message lists the discarded changes.",
    "sync.env-blocked": "A declared env var that changes how programs start is not passed through.",
    # install: `skillbook setup` results (skillbook.distribution.install); the `reason` of a result
    "install.skill-not-found": "No loaded skill has that name.",
    "install.no-installer": "The skill declares no installer for this platform.",
    "install.installer-not-found": "No installer of the skill has the requested id.",
    "install.ambiguous": "The skill has several installers for this platform; none was picked.",
    "install.wrong-os": "The requested installer is for another operating system.",
    "install.already-present": "Every binary the installer provides is already on PATH; nothing ran.",
    "install.policy-refused": "`skills.install.policy` (or a missing opt-in) refuses the installer.",
    "install.scan-blocked": "The security scan found critical patterns; the install was blocked.",
    "install.scan-failed": "The security scan could not run; the install was blocked.",
    "install.scan-forced": "Critical scan findings were overridden with --dangerously-force (audited).",
    "install.untrusted-source": "The install was triggered from a skill outside bundled, managed and extra dirs.",
    "install.invalid-spec": "The installer value fails the strict pre-run validation.",
    "install.tool-missing": "A tool the installer needs (brew, uv, go, sudo, tar) is missing or could not be installed.",
    "install.target-escape": "A download target resolves outside the skill's tools folder, or that folder is not a real folder.",
    "install.download-failed": "The download failed or was refused (HTTP status, network guard, size limit).",
    "install.checksum-mismatch": "The download does not match the spec's sha256 (or the sha256 is malformed).",
    "install.archive-rejected": "The archive holds an unsafe entry, exceeds a limit, or its type is unknown.",
    "install.command-failed": "The installer command exited non-zero or timed out.",
    "install.consent-required": "No terminal to ask for consent and no --yes; nothing ran.",
    "install.declined": "The user declined the install plan; nothing ran.",
    # registry: `skillbook search/install/update/remove/verify` (skillbook.distribution.registry)
    "registry.invalid-ref": "The install source or slug is malformed (OpenClaw's slug rule, owner handle, repository reference).",
    "registry.invalid-url": "The registry URL is not an http(s) URL.",
    "registry.invalid-token": "The registry token holds a line break.",
    "registry.not-found": "The registry has no such skill or version (404), or a folder, archive or repository path is absent.",
    "registry.unreachable": "The registry could not be reached or timed out, after the retries.",
    "registry.rate-limited": "The registry kept answering 429; the message says when to try again.",
    "registry.server-error": "The registry kept answering 5xx, after the retries.",
    "registry.http-error": "The registry refused the request (a 4xx other than 404 and 429).",
    "registry.bad-response": "The registry's answer is not JSON, or too large.",
    "registry.download-too-large": "A download is larger than the limit (256 MiB).",
    "registry.no-version": "The registry names no installable version (or no such tag).",
    "registry.moderation-blocked": "The registry flags the skill as malware; it is never installed.",
    "registry.moderation-suspicious": "The registry flags the skill as suspicious; it needs --force.",
    "registry.exists": "The target folder exists; install needs --force (or use update).",
    "registry.archive-layout": "The archive has no skill root (no SKILL.md, or several top-level folders).",
    "registry.git-missing": "`git` is not on PATH.",
    "registry.git-failed": "A git command failed or timed out.",
    "registry.choose-skills": "The repository holds several skills; name them with --skill or use --all.",
    "registry.lock-malformed": "A lock file exists but is not a version-1 lock; nothing was written.",
    "registry.not-tracked": "The skill is not tracked by a lock file or origin.json.",
    "registry.local-changes": "The skill was edited since it was installed (or has no fingerprint); update needs --force.",
    "registry.trust-blocked": "The registry's security verdict blocks the release; it is never downloaded.",
    "registry.trust-review": "The registry's security verdict needs review; install needs --force.",
    "registry.trust-unavailable": "The registry's security verdict is missing parts or is for another release.",
    "registry.content-mismatch": "A skills.sh folder does not hash to the contentHash the registry approved.",
    "registry.no-backup": "restore found no backup of the skill (update --force keeps one only over a local edit).",
    "registry.pinned": "The skill is pinned; update and install --force refuse it until unpin.",
    "registry.publish-failed": "skillbook publish stopped: not a skill, not semver, unreachable, or refused.",
    "registry.workdir-unusable": "The skills folder of the workdir is not a folder or cannot be made; nothing was done.",
    "install.fallback": "An opt-in apt or pip fallback replaces an installer whose tool is missing.",
}


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding about one file (or the configuration), with a stable code."""

    code: str
    severity: Severity
    message: str
    path: Path | None = None
    line: int | None = None
    skill: str | None = None

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise ValueError(f"unregistered diagnostic code {self.code!r}")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": self.code,
            "severity": str(self.severity),
            "message": self.message,
        }
        if self.path is not None:
            out["path"] = str(self.path)
        if self.line is not None:
            out["line"] = self.line
        if self.skill is not None:
            out["skill"] = self.skill
        return out

    def format(self) -> str:
        """``path:line: severity [code] message`` — the one-line human form."""
        where = ""
        if self.path is not None:
            where = f"{self.path}:{self.line}: " if self.line else f"{self.path}: "
        return f"{where}{self.severity} [{self.code}] {self.message}"


def error(code: str, message: str, **where: Any) -> Diagnostic:
    return Diagnostic(code, Severity.ERROR, message, **where)


def warning(code: str, message: str, **where: Any) -> Diagnostic:
    return Diagnostic(code, Severity.WARNING, message, **where)


def info(code: str, message: str, **where: Any) -> Diagnostic:
    return Diagnostic(code, Severity.INFO, message, **where)


def has_errors(diagnostics: Iterable[Diagnostic]) -> bool:
    return any(d.severity is Severity.ERROR for d in diagnostics)


def describe_value(value: Any, *, null: str = "null") -> str:
    """What kind of value a message says a wrong field holds: ``a boolean``, ``a number``,
    ``a mapping``, ``a list``, ``null`` (or ``null`` given), else the Python type name."""
    if value is None:
        return null
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return f"a {type(value).__name__}"
