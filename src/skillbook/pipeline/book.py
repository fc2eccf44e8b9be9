"""The three-line facade: discover, gate and render a workspace's skills.

>>> import skillbook
>>> book = skillbook.load("~/my-workspace")
>>> print(book.prompt)

:func:`load` builds one :class:`SkillBook`. :class:`Loader` runs the stages in order:
config and plugins, the sources and their discovery, the legacy manifest keys dropped,
strict mode's split, the gates, the agent's skill filter, the catalog within the
agent's budget; the status report and commands are made on first use. It owns what
makes the next build cheap (the parse store, the root, merge, gate, status and catalog
memos, PATH lookups) and pauses the cyclic garbage collector while it builds.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import attrgetter, eq
from pathlib import Path
from typing import Any

from skillbook import diagnostics as dg
from skillbook.base.env import own_env
from skillbook.base.once import Once
from skillbook.config.file import Config, read_config
from skillbook.config.limits import Limits
from skillbook.config.mode import DEFAULT_MODE, Mode
from skillbook.config.paths import ACCOUNT_HOME, Paths, resolve_user_path
from skillbook.config.profile import Profile, profile_of
from skillbook.config.run_settings import Settings
from skillbook.config.skill_filter import apply_filter, effective_skill_filter
from skillbook.diagnostics import Diagnostic
from skillbook.errors import SkillNotFound
from skillbook.model import Skill, Source
from skillbook.pipeline.cache.change_hint import ChangeHint
from skillbook.pipeline.cache.footprint import make_open, probe, real
from skillbook.pipeline.cache.merge_memo import MergeMemo
from skillbook.pipeline.cache.parse_cache import ParseCache
from skillbook.pipeline.cache.parse_store import ParseStore, cache_folder, store_namespace
from skillbook.pipeline.cache.skill_memo import PositionalMap, SkillMemo
from skillbook.pipeline.commands.bundle_commands import BundleCommand, load_bundle_commands
from skillbook.pipeline.commands.specs import CommandSet, build_command_specs
from skillbook.pipeline.discovery.discover import (
    DiscoverOptions,
    Discovery,
    discover_sources,
    make_scanner,
    openclaw_sources,
)
from skillbook.pipeline.discovery.plugins import PluginRegistry, PluginSkillSource, load_registry
from skillbook.pipeline.discovery.sources import (
    SkillSource,
    SourceContext,
    SourceFactory,
    configured_sources,
    fetcher_for,
)
from skillbook.pipeline.gating.gate import BinaryLookup, Eligibility, Host, RemoteEligibility
from skillbook.pipeline.gating.status import (
    StatusEntry,
    StatusMemo,
    StatusReport,
    build_status,
    evaluate_all,
)
from skillbook.pipeline.parse.manifest import without_legacy_manifest
from skillbook.pipeline.prompt.home_paths import KeptPaths, home_prefixes
from skillbook.pipeline.prompt.skills_section import (
    CatalogMemo,
    PromptCatalog,
    PromptLimits,
    skills_section,
)
from skillbook.pipeline.snapshot import SkillSnapshot, build_snapshot

#: What the truncation note tells the reader to run.
CHECK_COMMAND = "skillbook check"
#: OpenClaw's text, for byte-identical comparisons with OpenClaw itself.
OPENCLAW_CHECK_COMMAND = "openclaw skills check"
DEFAULT_READ_TOOL = "read"
#: Whether a verdict lets its skill into the prompt and commands.
_READY = attrgetter("ready")
_NAME = attrgetter("name")
_SOURCE = attrgetter("source")


@dataclass(frozen=True, slots=True)
class SkillBook:
    """Everything known about one workspace's skills at one moment."""

    workspace: Path | None
    paths: Paths
    config: Config
    agent: str | None
    mode: Mode
    discovery: Discovery
    #: The OpenClaw release reproduced (``skills.compat``, ``--compat``).
    profile: Profile
    #: Skills excluded by the spec mode (``strict``) before gating.
    excluded: tuple[Skill, ...]
    #: The status report, made on first use of :attr:`status` (a prompt needs only
    #: the gates' verdicts, a third of its cost).
    status_report: Once[StatusReport]
    #: Gated and filtered: what the prompt, commands and snapshot use.
    eligible: tuple[Skill, ...]
    skill_filter: tuple[str, ...] | None
    catalog: PromptCatalog
    diagnostics: tuple[Diagnostic, ...]
    #: Slash commands of enabled Claude bundles (``commands/*.md``), after the skills'.
    bundle_commands: tuple[BundleCommand, ...] = ()

    @property
    def skills(self) -> tuple[Skill, ...]:
        """Every loaded skill after precedence, ready or not."""
        return self.discovery.skills

    @property
    def status(self) -> StatusReport:
        """Every loaded skill (after the strict-mode exclusions) with its gates,
        requirements and install options: OpenClaw's status report."""
        return self.status_report.get()

    @property
    def prompt(self) -> str:
        """The catalog text OpenClaw would put into the system prompt."""
        return self.catalog.text

    def system_prompt_section(self, *, read_tool: str | None = None) -> str:
        """The ``## Skills (mandatory)`` block with the catalog, or ``""`` when empty."""
        tool = read_tool or self.config.skills.read_tool or DEFAULT_READ_TOOL
        return skills_section(self.catalog.text, read_tool=tool)

    def commands(self, *, reserved: Iterable[str] | None = None) -> CommandSet:
        """The slash commands: one per eligible user-invocable skill, then the bundles'.

        ``reserved`` defaults to the profile's built-in chat command names."""
        if reserved is None:
            reserved = self.profile.commands.reserved_names
        return build_command_specs(
            self.eligible,
            reserved=reserved,
            bundle_commands=self.bundle_commands,
            profile=self.profile,
        )

    def fetcher(self) -> Callable[[Skill, str], Path | Diagnostic] | None:
        """The ``read`` tool's hook for files a source has not brought to disk yet
        (remote skills), or None when every skill's files are local."""
        return fetcher_for(self.discovery.sources)

    def snapshot(self, *, version: int | None = None) -> SkillSnapshot:
        return build_snapshot(
            self.eligible,
            self.catalog,
            skill_filter=self.skill_filter,
            version=version,
            profile=self.profile,
        )

    def find(self, name: str) -> StatusEntry:
        """The status of a skill by name or skill key; raises :class:`SkillNotFound`."""
        return self.status.find(name)

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
    Parsed files persist on disk between processes (:mod:`skillbook.pipeline.cache.parse_store`):
    ``cache=False``, ``SKILLBOOK_CACHE=0`` or ``skills.cache: false`` keeps them in
    memory only; ``cache=<folder>`` or ``SKILLBOOK_CACHE_DIR`` moves them, and a
    :class:`~skillbook.pipeline.cache.parse_store.ParseStore` is used as given.
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
        sources: Iterable[SkillSource] = (),
        source_factories: Mapping[str, SourceFactory] | None = None,
        compat: Profile | str | None = None,
        cache: bool | str | os.PathLike[str] | ParseStore | None = None,
    ) -> None:
        #: The environment skills are gated against (PATH, env requirements, homes).
        self.env: Mapping[str, str] = dict(os.environ) if env is None else own_env(env)
        self.cwd = cwd if cwd is not None else Path.cwd()
        self.paths, self.config = _locate_config(config, self.env, self.cwd)
        # The result cache's footprint: what finding these folders and the config asked.
        record_paths(self.paths, config_read=not isinstance(config, Config))
        self.workspace = (
            resolve_user_path(os.fspath(workspace), self.paths.home, cwd=self.cwd)
            if workspace is not None
            else None
        )
        #: A workspace the caller named: a typo in it must not pass for "no skills".
        #: (from_settings clears it: the command line checked its workspace already.)
        self.workspace_named = workspace is not None
        self.agent = agent
        self.mode = Mode.of(mode or self.config.skills.load.mode or DEFAULT_MODE)
        #: The OpenClaw release reproduced: ``compat``, else ``skills.compat``, else the default.
        self.profile = profile_of(compat or self.config.skills.compat)
        #: An explicit skill filter; ``None`` lets the agent's allowlist apply.
        self.skill_filter = skill_filter
        self.remote = remote
        self.check_command = check_command
        self.legacy_manifest_keys = legacy_manifest_keys
        #: Sources beside the configured ones (in-memory skills, a registry, a test fake).
        self.sources = tuple(sources)
        #: Factories for config sections such as ``skills.mcp``; None = the installed ones.
        self.source_factories = source_factories
        self.host = Host.with_env(self.env)
        self.bins = BinaryLookup.for_host(self.host)
        #: Where parsed files persist between processes (None: memory only) and why.
        given = cache if isinstance(cache, ParseStore) else None
        self.cache_dir, self.cache_reason = cache_folder(
            cache if not isinstance(cache, ParseStore) else None,
            env=self.env,
            configured=self.config.skills.cache,
            state_dir=self.paths.state_dir,
        )
        if given is not None:
            self.cache_dir, self.cache_reason = Path(given.folder), "a ParseStore"
        self.cache = ParseCache(given if given is not None else self._parse_store())
        if self.cache_dir is None:
            make_open("the parse cache is off")
        if self.remote is not None or self.sources:
            make_open("a remote node or extra sources")
        # Reused across load() calls for skill objects the parse cache hands back unchanged.
        self._status_memo = StatusMemo()
        self._gate_memo = SkillMemo[Eligibility]()
        self._stripped_memo = SkillMemo[Skill]()
        self._catalog_memo = CatalogMemo()
        self._merge_memo = MergeMemo()
        self._ready_flags = PositionalMap[Eligibility, bool]()

    @classmethod
    def from_settings(cls, settings: Settings, **options: Any) -> Loader:
        """A loader for the settings the command line resolved (``options`` pass through)."""
        # Settings.resolve found and read the config: record what that asked.
        record_paths(settings.paths, config_read=True)
        loader = cls(
            settings.workspace.path,
            config=settings.config,
            agent=settings.agent,
            mode=settings.mode,
            env=settings.env,
            cwd=settings.cwd,
            compat=settings.compat,
            **options,
        )
        loader.workspace_named = False
        return loader

    def load(self, *, hint: ChangeHint | None = None) -> SkillBook:
        """Build the book. ``hint`` lists what a file watcher saw change since this
        loader's previous build: remembered roots the watcher covers then look only at
        those paths instead of every file (the result is the same as without it; a
        hint that misses a change makes the build miss it too, so give none unless the
        watcher is known to have seen everything, as :class:`SkillSession` does)."""
        self.cache.hint = hint
        try:
            return self._load_paused()
        finally:
            self.cache.hint = None

    def _load_paused(self) -> SkillBook:
        # A build allocates many small, long-lived objects; the cyclic collector would
        # rescan them again and again (a fifth of a 10,000-skill build). Nothing in a
        # build makes reference cycles, so collection waits until the build is done.
        with _gc_paused():
            return self._load()

    def _parse_store(self) -> ParseStore | None:
        if self.cache_dir is None:
            return None
        return ParseStore(self.cache_dir, namespace=store_namespace(self.profile, self.mode))

    def _load(self) -> SkillBook:
        cfg = self.config
        profile = self.profile
        limits = Limits.from_config(cfg.skills.limits, profile)
        plugins = self.plugins()
        found = self.discover(limits, plugins=plugins)
        self.cache.flush()
        commands, command_diags = load_bundle_commands(plugins, cfg)
        diagnostics: list[Diagnostic] = [*found.diagnostics, *command_diags]
        if self.workspace_named and self.workspace is not None and not self.workspace.is_dir():
            diagnostics.append(_workspace_missing(self.workspace))

        candidates = list(found.skills)
        if not self.legacy_manifest_keys:
            keys = profile.discovery.manifest_keys
            # Memoised: a skill stripped anew each build would be a new object, which the
            # gate, status and catalog memos could never answer from.
            memo = self._stripped_memo
            stripped = memo.get_all(candidates, lambda s: without_legacy_manifest(s, keys))
            memo.prune(candidates)  # its keys are the skills as loaded
            candidates = list(stripped)
        excluded: list[Skill] = []
        if self.mode.is_strict:
            from skillbook.pipeline.validation.validate import split_strict

            candidates, excluded, problems = split_strict(candidates)
            diagnostics.extend(problems)

        verdicts = evaluate_all(
            candidates,
            config=cfg,
            host=self.host,
            bins=self.bins,
            remote=self.remote,
            profile=profile,
            memo=self._gate_memo,
        )
        self._gate_memo.prune(candidates)
        self._status_memo.prune(candidates)

        # Made with the report (on first use): C-level passes over every loaded skill
        # (a session's refresh after one edit makes the report too).
        def status_of() -> StatusReport:
            loaded = found.loaded
            bundled = frozenset(
                map(_NAME, compress(loaded, map(eq, map(_SOURCE, loaded), repeat(Source.BUNDLED))))
            )
            return report(bundled_names=bundled)

        report = functools.partial(
            build_status,
            candidates,
            config=cfg,
            host=self.host,
            bins=self.bins,
            remote=self.remote,
            workspace_dir=self.workspace or self.cwd,
            managed_dir=self.paths.managed_dir,
            memo=self._status_memo,
            profile=profile,
            agent=self.agent,
            eligibility=verdicts,
        )
        status = Once(status_of)
        skill_filter = effective_skill_filter(self.skill_filter, config=cfg, agent_id=self.agent)
        ready = list(compress(candidates, self._ready_flags(verdicts, _READY)))
        eligible = tuple(apply_filter(ready, skill_filter))
        max_chars = limits.max_skills_prompt_chars
        if profile.catalog.agent_limits:
            max_chars = agent_prompt_chars(cfg, self.agent, max_chars)
        catalog = self._catalog_memo.build(
            eligible,
            limits=PromptLimits(max_skills=limits.max_skills_in_prompt, max_chars=max_chars),
            homes=home_prefixes(
                self.paths.home if profile.catalog.compact_effective_home else None,
                self.paths.os_home,
            ),
            remote_note=self.remote.note if self.remote is not None else None,
            priority=cfg.skills.prompt.priority == "source",
            check_command=self.check_command,
            profile=profile,
            keep=self._kept_paths() if profile.catalog.keep_state_paths else None,
        )
        diagnostics.extend(catalog.diagnostics)
        return SkillBook(
            workspace=self.workspace,
            paths=self.paths,
            config=cfg,
            agent=self.agent,
            mode=self.mode,
            discovery=found,
            profile=profile,
            excluded=tuple(excluded),
            status_report=status,
            eligible=eligible,
            skill_filter=tuple(skill_filter) if skill_filter is not None else None,
            catalog=catalog,
            diagnostics=tuple(diagnostics),
            bundle_commands=commands,
        )

    def _kept_paths(self) -> KeptPaths:
        state = self.paths.managed_dir.parent
        roots = [str(self.paths.managed_dir), str(state / "plugin-skills")]
        home = os.path.abspath(self.paths.os_home) if self.paths.os_home is not None else None
        # A container whose home is /data with the state in /data/.openclaw: `~` would
        # point elsewhere there, so 2026.9 keeps those paths absolute even under the home.
        container = home == "/data" and _fs_inside("/data/.openclaw", os.path.abspath(state))
        homes = [home] if home is not None and not container else []
        return KeptPaths(_with_realpaths(roots), _with_realpaths(homes))

    def plugins(self) -> PluginRegistry:
        """The plugins OpenClaw would find for this workspace and config (§3.6)."""
        return load_registry(self.workspace, self.paths, self.config, env=self.env, cwd=self.cwd)

    def discover(
        self, limits: Limits | None = None, *, plugins: PluginRegistry | None = None
    ) -> Discovery:
        """Every source of this workspace and config, loaded and merged (no gating)."""
        cfg = self.config
        registry = plugins if plugins is not None else self.plugins()
        load = cfg.skills.load
        options = DiscoverOptions(
            limits=limits
            if limits is not None
            else Limits.from_config(cfg.skills.limits, self.profile),
            allow_symlink_targets=tuple(
                resolve_user_path(p, self.paths.home, cwd=self.cwd)
                for p in load.allow_symlink_targets
            ),
            grouped=bool(load.grouped),
            mode=self.mode,
            profile=self.profile,
        )
        scanner, diags = make_scanner(options, self.cache)
        local: list[SkillSource] = list(
            openclaw_sources(
                self.workspace,
                self.paths,
                scanner,
                extra_dirs=load.extra_dirs,
                cwd=self.cwd,
                profile=self.profile,
            )
        )
        if self.workspace is not None:
            # Ranked with the extra dirs and listed after them: loaded right after them.
            local.append(PluginSkillSource(registry, cfg, scanner))
        context = SourceContext(cfg, self.paths, self.workspace, self.env)
        configured, unavailable = configured_sources(context, self.source_factories)
        if configured or unavailable:
            make_open("configured skill sources")
        return discover_sources(
            [*local, *self.sources, *configured],
            diagnostics=[*diags, *registry.diagnostics, *unavailable],
            sort_by_name=self.profile.discovery.sort_by_name,
            merge_memo=self._merge_memo,
        )


def load(
    workspace: str | os.PathLike[str] | None = None,
    *,
    config: Config | str | os.PathLike[str] | None = None,
    agent: str | None = None,
    skill_filter: Sequence[str] | None = None,
    mode: Mode | str | None = None,
    env: Mapping[str, str] | None = None,
    remote: RemoteEligibility | None = None,
    compat: Profile | str | None = None,
    cache: bool | str | os.PathLike[str] | None = None,
) -> SkillBook:
    """Discover, gate and render the skills of ``workspace`` in one call.

    ``compat`` names the OpenClaw release to reproduce (``"openclaw-2026.4"``, the
    default, or ``"openclaw-2026.9"``); it overrides ``skills.compat`` of the config.
    ``cache`` False keeps parsed files in memory only (see :class:`Loader`)."""
    return Loader(
        workspace,
        config=config,
        agent=agent,
        skill_filter=skill_filter,
        mode=mode,
        env=env,
        remote=remote,
        compat=compat,
        cache=cache,
    ).load()


def agent_prompt_chars(config: Config, agent: str | None, default: int) -> int:
    """``agents.list[].skillsLimits.maxSkillsPromptChars`` of ``agent`` (2026.9), else ``default``."""
    if agent is None:
        return default
    from skillbook.config.skill_filter import normalize_agent_id

    wanted = normalize_agent_id(agent)
    agents = config.raw.get("agents")
    listed = agents.get("list") if isinstance(agents, Mapping) else None
    for item in listed if isinstance(listed, list) else []:
        if isinstance(item, Mapping) and normalize_agent_id(str(item.get("id", ""))) == wanted:
            limits = item.get("skillsLimits")
            value = limits.get("maxSkillsPromptChars") if isinstance(limits, Mapping) else None
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                return value
            return default
    return default


def _workspace_missing(workspace: Path) -> Diagnostic:
    what = "is not a folder" if workspace.exists() else "does not exist"
    return dg.warning(
        "discover.workspace-missing",
        f"the workspace {workspace} {what}: only skills from other sources (bundled, "
        "managed, personal, extra folders) were loaded; check the path (a relative one is "
        "read from the current folder)",
        path=workspace,
    )


def _fs_inside(root: str, path: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _with_realpaths(paths: Sequence[str]) -> tuple[str, ...]:
    for p in paths:
        probe(p)
    resolved = [real(p, strict=False) for p in paths if os.path.exists(p)]
    return tuple(
        dict.fromkeys([os.path.abspath(p) for p in paths] + [r for r in resolved if r is not None])
    )


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            # The objects of the build (and every other object alive now) move to the
            # oldest generation without a scan: re-enabling the collector would
            # otherwise make its next young collection walk the whole new book. They
            # are still collected by the next full collection, so nothing leaks.
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def record_paths(paths: Paths, *, config_read: bool) -> None:
    """Record in the result cache's footprint what resolving ``paths`` asked of the
    world: every path probed, the config file when it was read, and a home taken from
    the account (which no record can check)."""
    for path in paths.probed:
        probe(path)
    file = paths.config_location.file
    if config_read and file is not None:
        probe(file)
    if paths.origins.get("os_home") == ACCOUNT_HOME:
        make_open("the account's home directory")


def _locate_config(
    config: Config | str | os.PathLike[str] | None, env: Mapping[str, str], cwd: Path
) -> tuple[Paths, Config]:
    """The folders and the config; the state dir follows the config file however it is given."""
    if isinstance(config, Config):
        if config.file is not None:
            return Paths.from_env(env, cwd=cwd, config=config.file), config
        return Paths.from_env(env, cwd=cwd).without_config_file("a Config value (config=)"), config
    paths = Paths.from_env(env, cwd=cwd, config=config)
    return paths, read_config(paths.config_location)
