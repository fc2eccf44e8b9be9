"""The three-line facade: discover, gate and render a workspace's skills.

>>> import skillbook
>>> book = skillbook.load("~/my-workspace")
>>> print(book.prompt)

:func:`load` builds one :class:`SkillBook`; :class:`Loader` keeps the caches
(parsed files, PATH lookups) so that building again after a change is cheap.
The facade has no logic of its own: each step is a call into one stage module.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from skillbook.config import Config, load_config
from skillbook.diagnostics import Diagnostic
from skillbook.discover import (
    DiscoverOptions,
    Discovery,
    Limits,
    ParseCache,
    discover,
    resolve_roots,
)
from skillbook.errors import SkillNotFound
from skillbook.gate import (
    BinaryLookup,
    Host,
    RemoteEligibility,
    apply_filter,
    effective_skill_filter,
)
from skillbook.mode import DEFAULT_MODE, Mode
from skillbook.model import Skill, Source
from skillbook.paths import Paths, resolve_user_path
from skillbook.prompt import (
    PromptCatalog,
    PromptLimits,
    build_prompt,
    home_prefixes,
    skills_section,
)
from skillbook.snapshot import SkillSnapshot, build_snapshot
from skillbook.status import StatusEntry, StatusMemo, StatusReport, build_status

#: What the truncation note tells the reader to run.
CHECK_COMMAND = "skillbook check"
#: OpenClaw's text, for byte-identical comparisons with OpenClaw itself.
OPENCLAW_CHECK_COMMAND = "openclaw skills check"
DEFAULT_READ_TOOL = "read"


@dataclass(frozen=True, slots=True)
class SkillBook:
    """Everything known about one workspace's skills at one moment."""

    workspace: Path | None
    paths: Paths
    config: Config
    agent: str | None
    mode: Mode
    discovery: Discovery
    #: Skills excluded by the spec mode (``strict``) before gating.
    excluded: tuple[Skill, ...]
    status: StatusReport
    #: Gated and filtered: what the prompt, commands and snapshot use.
    eligible: tuple[Skill, ...]
    skill_filter: tuple[str, ...] | None
    catalog: PromptCatalog
    diagnostics: tuple[Diagnostic, ...]

    @property
    def skills(self) -> tuple[Skill, ...]:
        """Every loaded skill after precedence, ready or not."""
        return self.discovery.skills

    @property
    def prompt(self) -> str:
        """The catalog text OpenClaw would put into the system prompt."""
        return self.catalog.text

    def system_prompt_section(self, *, read_tool: str | None = None) -> str:
        """The ``## Skills (mandatory)`` block with the catalog, or ``""`` when empty."""
        tool = read_tool or self.config.skills.read_tool or DEFAULT_READ_TOOL
        return skills_section(self.catalog.text, read_tool=tool)

    def snapshot(self, *, version: int | None = None) -> SkillSnapshot:
        return build_snapshot(
            self.eligible, self.catalog, skill_filter=self.skill_filter, version=version
        )

    def find(self, name: str) -> StatusEntry:
        """The status of a skill by name or skill key; raises :class:`SkillNotFound`."""
        for entry in self.status.skills:
            if entry.name == name:
                return entry
        for entry in self.status.skills:
            if entry.skill_key == name:
                return entry
        raise SkillNotFound(name)

    def get(self, name: str) -> Skill:
        """The loaded skill by name or skill key; raises :class:`SkillNotFound`."""
        entry = self.find(name)
        for skill in self.discovery.skills:
            if skill.file_path == entry.file_path:
                return skill
        raise SkillNotFound(name)


class Loader:
    """Builds :class:`SkillBook` values for one workspace and keeps the caches.

    Nothing is read from ``os.environ`` unless ``env`` is omitted; tests pass it.
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str] | None = None,
        *,
        config: Config | str | os.PathLike[str] | None = None,
        agent: str | None = None,
        skill_filter: Sequence[str] | None = None,
        mode: Mode | str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        remote: RemoteEligibility | None = None,
        check_command: str = CHECK_COMMAND,
        legacy_manifest_keys: bool = True,
    ) -> None:
        #: The environment skills are gated against (PATH, env requirements, homes).
        self.env: Mapping[str, str] = dict(os.environ) if env is None else dict(env)
        self.cwd = cwd if cwd is not None else Path.cwd()
        self.paths = Paths.from_env(self.env, cwd=self.cwd)
        self.workspace = (
            resolve_user_path(os.fspath(workspace), self.paths.home, cwd=self.cwd)
            if workspace is not None
            else None
        )
        self.config = _resolve_config(config, self.paths)
        self.agent = agent
        self.mode = Mode.of(mode or self.config.skills.load.mode or DEFAULT_MODE)
        #: An explicit skill filter; ``None`` lets the agent's allowlist apply.
        self.skill_filter = skill_filter
        self.remote = remote
        self.check_command = check_command
        self.legacy_manifest_keys = legacy_manifest_keys
        self.host = Host(platform=_host_platform(), env=self.env)
        self.bins = BinaryLookup.for_host(self.host)
        self.cache = ParseCache()
        # Reused across load() calls for skill objects the parse cache hands back unchanged.
        self._status_memo = StatusMemo()
        self._last_catalog: tuple[tuple[Skill, ...], tuple[object, ...], PromptCatalog] | None = (
            None
        )

    def load(self) -> SkillBook:
        # A build allocates many small, long-lived objects; the cyclic collector would
        # rescan them again and again (a fifth of a 10,000-skill build). Nothing in a
        # build makes reference cycles, so collection waits until the build is done.
        with _gc_paused():
            return self._load()

    def _load(self) -> SkillBook:
        cfg = self.config
        limits = _limits(cfg)
        roots = resolve_roots(
            self.workspace, self.paths, extra_dirs=cfg.skills.load.extra_dirs, cwd=self.cwd
        )
        options = DiscoverOptions(
            limits=limits,
            allow_symlink_targets=tuple(
                resolve_user_path(p, self.paths.home, cwd=self.cwd)
                for p in cfg.skills.load.allow_symlink_targets
            ),
            grouped=bool(cfg.skills.load.grouped),
            mode=self.mode,
        )
        found = discover(roots, options=options, cache=self.cache)
        if cfg.skills.mcp_servers:
            # Remote skills are the lowest source: a server never shadows a local skill.
            from skillbook.mcp.remote_catalog import add_remote_skills
            from skillbook.mcp.remote_source import DEFAULT_CACHE_DIRNAME

            found = add_remote_skills(
                found,
                cfg.skills.mcp_servers,
                cache_dir=self.paths.state_dir / DEFAULT_CACHE_DIRNAME,
            )
        diagnostics: list[Diagnostic] = list(found.diagnostics)

        candidates = list(found.skills)
        if not self.legacy_manifest_keys:
            candidates = [_without_legacy_manifest(s) for s in candidates]
        excluded: list[Skill] = []
        if self.mode.is_strict:
            from skillbook.validate import passes_strict

            kept: list[Skill] = []
            for skill in candidates:
                ok, problems = passes_strict(skill)
                diagnostics.extend(problems)
                (kept if ok else excluded).append(skill)
            candidates = kept

        bundled_names = frozenset(s.name for s in found.loaded if s.source == Source.BUNDLED)
        status = build_status(
            candidates,
            config=cfg,
            host=self.host,
            bins=self.bins,
            remote=self.remote,
            workspace_dir=self.workspace or self.cwd,
            managed_dir=self.paths.managed_dir,
            bundled_names=bundled_names,
            memo=self._status_memo,
        )
        self._status_memo.prune(candidates)
        skill_filter = effective_skill_filter(self.skill_filter, config=cfg, agent_id=self.agent)
        ready = [s for s, e in zip(candidates, status.skills, strict=True) if e.eligible]
        eligible = tuple(apply_filter(ready, skill_filter))
        catalog = self._catalog(eligible, cfg, limits)
        diagnostics.extend(catalog.diagnostics)
        return SkillBook(
            workspace=self.workspace,
            paths=self.paths,
            config=cfg,
            agent=self.agent,
            mode=self.mode,
            discovery=found,
            excluded=tuple(excluded),
            status=status,
            eligible=eligible,
            skill_filter=tuple(skill_filter) if skill_filter is not None else None,
            catalog=catalog,
            diagnostics=tuple(diagnostics),
        )

    def _catalog(self, eligible: tuple[Skill, ...], cfg: Config, limits: Limits) -> PromptCatalog:
        """The prompt catalog, reused when the same skill objects meet the same settings."""
        params = (
            PromptLimits(
                max_skills=limits.max_skills_in_prompt,
                max_chars=limits.max_skills_prompt_chars,
            ),
            home_prefixes(self.paths.home, self.paths.os_home),
            self.remote.note if self.remote is not None else None,
            cfg.skills.prompt.priority == "source",
            self.check_command,
        )
        last = self._last_catalog
        if (
            last is not None
            and last[1] == params
            and len(last[0]) == len(eligible)
            and all(a is b for a, b in zip(last[0], eligible, strict=True))
        ):
            return last[2]
        limits_, homes, note, priority, check = params
        catalog = build_prompt(
            eligible,
            limits=limits_,
            homes=homes,
            remote_note=note,
            priority=priority,
            check_command=check,
        )
        self._last_catalog = (eligible, params, catalog)
        return catalog


def load(
    workspace: str | os.PathLike[str] | None = None,
    *,
    config: Config | str | os.PathLike[str] | None = None,
    agent: str | None = None,
    skill_filter: Sequence[str] | None = None,
    mode: Mode | str | None = None,
    env: Mapping[str, str] | None = None,
    remote: RemoteEligibility | None = None,
) -> SkillBook:
    """Discover, gate and render the skills of ``workspace`` in one call."""
    return Loader(
        workspace,
        config=config,
        agent=agent,
        skill_filter=skill_filter,
        mode=mode,
        env=env,
        remote=remote,
    ).load()


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _resolve_config(config: Config | str | os.PathLike[str] | None, paths: Paths) -> Config:
    if isinstance(config, Config):
        return config
    if config is not None:
        return load_config(config)
    # skillbook's own file: $SKILLBOOK_CONFIG_PATH, else <state dir>/skillbook.json if present.
    if paths.config_path is not None:
        return load_config(paths.config_path)
    default = paths.state_dir / "skillbook.json"
    return load_config(default) if default.is_file() else Config.empty()


def _limits(cfg: Config) -> Limits:
    given = cfg.skills.limits
    base = Limits()
    return Limits(
        max_candidates_per_root=_or(given.max_candidates_per_root, base.max_candidates_per_root),
        max_skills_loaded_per_source=_or(
            given.max_skills_loaded_per_source, base.max_skills_loaded_per_source
        ),
        max_skills_in_prompt=_or(given.max_skills_in_prompt, base.max_skills_in_prompt),
        max_skills_prompt_chars=_or(given.max_skills_prompt_chars, base.max_skills_prompt_chars),
        max_skill_file_bytes=_or(given.max_skill_file_bytes, base.max_skill_file_bytes),
    )


def _or(value: int | None, default: int) -> int:
    return default if value is None else value


def _host_platform() -> str:
    from skillbook.gate import node_platform

    return node_platform()


def _without_legacy_manifest(skill: Skill) -> Skill:
    """OpenClaw's baseline reads only ``metadata.openclaw``: drop gates from legacy keys."""
    meta = skill.metadata
    if meta is None or meta.manifest_key == "openclaw":
        return skill
    return dataclasses.replace(skill, parsed=dataclasses.replace(skill.parsed, metadata=None))
