"""Discovery: load every skill source and merge their skills by name.

Input: :class:`~skillbook.pipeline.discovery.sources.SkillSource` values (:func:`discover_sources`), or
the filesystem roots of OpenClaw's six sources (:func:`resolve_roots` gives them in
load order; :func:`discover` scans them). Output: a frozen :class:`Discovery` with
the merged skills in first-seen order, every skill loaded before merging, who
shadows whom, and a diagnostic for each place where OpenClaw would drop something
silently.

With default options the loaded set is OpenClaw's (spec §3.3-3.5), with two
deliberate differences: a SKILL.md that starts with a UTF-8 byte-order mark loads
(OpenClaw cannot see its frontmatter), and two *differently named* winners that are
the same real folder (an alias symlink to a skill without a ``name`` field) load
once (``dedupe_realpath=False`` restores OpenClaw's behaviour). Extras beyond the
baseline are opt-in: ``grouped`` loads ``skills/<group>/<skill>/SKILL.md``,
``allow_symlink_targets`` lets symlinked skills point into given folders, and the
``mixed``/``legacy`` modes load standalone ``*.md`` files of a root.

Which folders hold skills and how one folder becomes a skill are the
:class:`~skillbook.pipeline.discovery.root_scanner.RootScanner` and the
:class:`~skillbook.pipeline.discovery.skill_reader.SkillReader` it holds; this module only binds roots
to sources and merges.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path

from skillbook.base import fs as _fs
from skillbook.base import listing as _listing
from skillbook.base.js import js_sorted, locale_compare_key
from skillbook.config.limits import (
    Limits,
)
from skillbook.config.mode import DEFAULT_MODE, Mode
from skillbook.config.paths import Paths, resolve_user_path
from skillbook.config.profile import DEFAULT_PROFILE, Profile
from skillbook.diagnostics import Diagnostic, info, warning
from skillbook.model import Skill, Source
from skillbook.pipeline.cache.footprint import real
from skillbook.pipeline.cache.merge_memo import MergeMemo
from skillbook.pipeline.cache.parse_cache import ParseCache
from skillbook.pipeline.discovery.learned import (
    LEARNED_DIRNAME,
    is_learned_root,
    learned_precedence,
    learned_skills_dir,
)
from skillbook.pipeline.discovery.root_containment import resolve_symlink_targets
from skillbook.pipeline.discovery.root_scanner import RootScanner
from skillbook.pipeline.discovery.skill_reader import SKILL_FILE, SkillReader, limit_list
from skillbook.pipeline.discovery.sources import (
    Precedence,
    SkillSource,
    SourceLoad,
    Tier,
    local_precedence,
)

__all__ = [
    "DiscoverOptions",
    "Discovery",
    "Root",
    "RootSource",
    "Shadowing",
    "discover",
    "discover_sources",
    "make_scanner",
    "merge_remote",
    "openclaw_sources",
    "resolve_roots",
]


@dataclass(frozen=True, slots=True)
class Root:
    """One folder to scan and the source label its skills get."""

    source: Source
    path: Path


@dataclass(frozen=True, slots=True)
class DiscoverOptions:
    limits: Limits = field(default_factory=Limits)
    #: Outside folders that symlinked skills may point into (``skills.load.allowSymlinkTargets``).
    allow_symlink_targets: tuple[Path, ...] = ()
    #: Also load ``<root>/<group>/<skill>/SKILL.md`` (``skills.load.grouped``).
    grouped: bool = False
    #: ``strict`` loads like ``openclaw`` (validation filters later).
    mode: Mode = DEFAULT_MODE
    #: Load a real folder once even when reached under two different names.
    dedupe_realpath: bool = True
    #: The OpenClaw release whose discovery rules apply (:mod:`skillbook.config.profile`).
    profile: Profile = DEFAULT_PROFILE

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", Mode.of(self.mode))


@dataclass(frozen=True, slots=True)
class Shadowing:
    """``hidden`` lost the name ``name`` to ``winner`` (a higher-precedence source)."""

    name: str
    winner: Skill
    hidden: Skill


@dataclass(frozen=True, slots=True)
class Discovery:
    """What discovery found.

    ``skills``: the merged winners in first-seen order (a later source overwrites a
    name's value, the name keeps its first position; remote skills follow the local
    ones); ``loaded``: every skill of every source before merging; ``shadowed``: each
    skill that lost its name to a higher source (a winner dropped as a same-folder
    alias of another name is only diagnosed); ``diagnostics``: everything skipped,
    refused, capped or hidden, in load order; ``roots``: the filesystem roots scanned;
    ``sources``: every source, in load order.
    """

    skills: tuple[Skill, ...]
    loaded: tuple[Skill, ...]
    shadowed: tuple[Shadowing, ...]
    diagnostics: tuple[Diagnostic, ...]
    roots: tuple[Root, ...]
    sources: tuple[SkillSource, ...] = ()

    def get(self, name: str) -> Skill | None:
        for skill in self.skills:
            if skill.name == name:
                return skill
        return None


@dataclass(frozen=True, slots=True)
class RootSource:
    """One filesystem root (spec §3.1) as a skill source, scanned by a shared scanner."""

    root: Root
    scanner: RootScanner = field(compare=False, repr=False)
    precedence: Precedence = field(default_factory=lambda: local_precedence(Source.WORKSPACE))

    @property
    def label(self) -> str:
        return self.root.source.value

    def load(self) -> SourceLoad:
        skills, diags = self.scanner.scan(self.root.source, self.root.path)
        if _learned(self.root):
            diags = [*diags, *_hidden_learned(self.root.path)]
        return SourceLoad(tuple(skills), tuple(diags))


def _hidden_learned(root: Path) -> list[Diagnostic]:
    """A hand-written ``skills/auto/SKILL.md`` makes the learned root one skill (OpenClaw
    reads ``auto/`` as a workspace skill), so the drafts promoted below it are not
    loaded: say so rather than drop them silently."""
    top = os.path.join(root, SKILL_FILE)
    if not _fs.has_file(top):
        return []
    hidden = [
        name
        for name in js_sorted(_listing.list_child_dirs(os.fspath(root)).dirs)
        if _fs.has_file(os.path.join(root, name, SKILL_FILE))
    ]
    if not hidden:
        return []
    return [
        warning(
            "discover.learned-hidden",
            f"{LEARNED_DIRNAME}/{SKILL_FILE} makes {LEARNED_DIRNAME}/ one skill, so the "
            f"learned skills below it are not loaded ({limit_list(hidden)}): move the "
            f"hand-written skill to a folder of its own",
            path=Path(top),
        )
    ]


def make_scanner(
    options: DiscoverOptions, cache: ParseCache | None = None
) -> tuple[RootScanner, list[Diagnostic]]:
    """A scanner for one discovery, and the diagnostics of its settings (missing
    ``allowSymlinkTargets`` entries), reported once however many roots it scans."""
    allowed, diags = resolve_symlink_targets(options.allow_symlink_targets)
    scanner = RootScanner(
        SkillReader(limits=options.limits, cache=cache, profile=options.profile),
        allowed=allowed,
        grouped=options.grouped,
        standalone=options.mode.loads_standalone,
        rules=options.profile.discovery,
    )
    return scanner, diags


def resolve_roots(
    workspace: Path | None,
    paths: Paths,
    *,
    extra_dirs: Sequence[str] = (),
    cwd: Path | None = None,
    profile: Profile = DEFAULT_PROFILE,
) -> list[Root]:
    """OpenClaw's roots in load (= precedence) order (spec §3.1-3.2).

    extra → bundled → managed → personal → project (``<ws>/.agents/skills``) →
    workspace (``<ws>/skills``), with skillbook's learned skills (``<ws>/skills/auto``,
    :mod:`skillbook.pipeline.discovery.learned`) just before the workspace's own. Extra dirs are trimmed,
    blanks dropped, ``~`` expanded with the effective home and resolved against
    ``cwd``. Plugin skill
    folders, which OpenClaw appends to the extra dirs, are a source of their own
    (:class:`skillbook.pipeline.discovery.plugins.PluginSkillSource`). Under a profile whose discovery
    reads ``~/.agents/skills`` only with the default state dir (2026.9's
    ``isDefaultStateDir``), a state dir set by a variable leaves it out.
    """
    base = cwd if cwd is not None else Path.cwd()
    roots: list[Root] = []
    for raw in extra_dirs:
        if not isinstance(raw, str) or not raw.strip():
            continue
        roots.append(Root(Source.EXTRA, resolve_user_path(raw, paths.home, cwd=base)))
    if paths.bundled_dir is not None:
        roots.append(Root(Source.BUNDLED, Path(_fs.abspath(base / paths.bundled_dir))))
    roots.append(Root(Source.MANAGED, paths.managed_dir))
    if not profile.discovery.personal_needs_default_state or _default_state_dir(paths):
        roots.append(Root(Source.PERSONAL, paths.personal_dir))
    if workspace is not None:
        ws = Path(_fs.abspath(base / workspace))
        roots.append(Root(Source.PROJECT, ws / ".agents" / "skills"))
        # Learned skills (skillbook.pipeline.discovery.learned): their own root, just below the workspace's.
        roots.append(Root(Source.WORKSPACE, learned_skills_dir(ws)))
        roots.append(Root(Source.WORKSPACE, ws / "skills"))
    return roots


def _default_state_dir(paths: Paths) -> bool:
    location = paths.config_location
    if not location.state_dir_reason.startswith("$"):
        return True
    state = real(location.state_dir, strict=False)
    return any(state == real(paths.home / d, strict=False) for d in (".openclaw", ".skillbook"))


def openclaw_sources(
    workspace: Path | None,
    paths: Paths,
    scanner: RootScanner,
    *,
    extra_dirs: Sequence[str] = (),
    cwd: Path | None = None,
    profile: Profile = DEFAULT_PROFILE,
) -> list[SkillSource]:
    """OpenClaw's filesystem roots (§3.1) as sources, each at its label's precedence."""
    roots = resolve_roots(workspace, paths, extra_dirs=extra_dirs, cwd=cwd, profile=profile)
    return [
        RootSource(
            root,
            scanner,
            learned_precedence() if _learned(root) else local_precedence(root.source),
        )
        for root in roots
    ]


def _learned(root: Root) -> bool:
    return root.source is Source.WORKSPACE and is_learned_root(root.path)


def discover(
    roots: Sequence[Root],
    *,
    options: DiscoverOptions | None = None,
    cache: ParseCache | None = None,
) -> Discovery:
    """Load every root in the order given and merge by name (later roots win, first
    position kept)."""
    opts = options if options is not None else DiscoverOptions()
    scanner, diags = make_scanner(opts, cache)
    # Precedence by position: the caller's order is the load order, whatever the labels.
    sources = [
        RootSource(root, scanner, Precedence(Tier.LOCAL, index)) for index, root in enumerate(roots)
    ]
    return discover_sources(
        sources,
        diagnostics=diags,
        dedupe_realpath=opts.dedupe_realpath,
        sort_by_name=opts.profile.discovery.sort_by_name,
    )


def discover_sources(
    sources: Sequence[SkillSource],
    *,
    diagnostics: Sequence[Diagnostic] = (),
    dedupe_realpath: bool = True,
    sort_by_name: bool = False,
    merge_memo: MergeMemo | None = None,
) -> Discovery:
    """Load every source in precedence order and merge (see :class:`~skillbook.pipeline.discovery.sources.Tier`).

    ``diagnostics`` go first (findings about the settings rather than a source).
    Sources of equal precedence load in the order given. ``sort_by_name`` (OpenClaw
    2026.9's ``mergeSkillRecords``) orders the local winners by name. ``merge_memo``
    (kept by the caller between builds) answers a merge that an edit cannot change.
    """
    by_rank = sorted(sources, key=lambda s: s.precedence)
    local_sources = [s for s in by_rank if s.precedence.tier is Tier.LOCAL]
    remote_sources = [s for s in by_rank if s.precedence.tier is not Tier.LOCAL]
    diags: list[Diagnostic] = list(diagnostics)
    local = _load_all(local_sources, diags)
    skills, shadowed = _merge_local(
        local, diags, dedupe_realpath=dedupe_realpath, sort_by_name=sort_by_name, memo=merge_memo
    )
    # Remote sources load after the local merge, so their findings read in that order too.
    remote = _load_all(remote_sources, diags)
    if remote:
        merged, hidden, remote_diags = merge_remote(skills, remote)
        skills, shadowed = list(merged), [*shadowed, *hidden]
        diags.extend(remote_diags)
    ordered = (*local_sources, *remote_sources)
    return Discovery(
        skills=tuple(skills),
        loaded=(*local, *remote),
        shadowed=tuple(shadowed),
        diagnostics=tuple(diags),
        roots=tuple(s.root for s in ordered if isinstance(s, RootSource)),
        sources=ordered,
    )


def _merge_local(
    local: list[Skill],
    diags: list[Diagnostic],
    *,
    dedupe_realpath: bool,
    sort_by_name: bool,
    memo: MergeMemo | None,
) -> tuple[list[Skill], list[Shadowing]]:
    """:func:`_merge`, then the name sort; answered by ``memo`` where it can."""
    if memo is not None:
        again = memo.reuse(local, dedupe_realpath=dedupe_realpath, sort_by_name=sort_by_name)
        if again is not None:
            return again, []
    skills, shadowed = _merge(local, diags, dedupe_realpath=dedupe_realpath)
    everyone = not shadowed and len(skills) == len(local)  # then skills is local, in order
    order: list[int] | None = None
    if sort_by_name:
        # Sorted as positions (the same stable sort), so the memo can replay the order.
        order = sorted(range(len(skills)), key=lambda i: locale_compare_key(skills[i].name))
        skills = [skills[i] for i in order]
    if memo is not None:
        if everyone:
            memo.remember(local, order, dedupe_realpath=dedupe_realpath, sort_by_name=sort_by_name)
        else:
            memo.forget()
    return skills, shadowed


def _load_all(sources: Sequence[SkillSource], diags: list[Diagnostic]) -> list[Skill]:
    skills: list[Skill] = []
    for source in sources:
        got = source.load()
        skills.extend(got.skills)
        diags.extend(got.diagnostics)
    return skills


def merge_remote(
    local: Sequence[Skill], remote: Sequence[Skill]
) -> tuple[tuple[Skill, ...], tuple[Shadowing, ...], tuple[Diagnostic, ...]]:
    """Remote skills rank below every local source: one whose name (or config key) a
    local skill has is left out and diagnosed. Kept ones follow the local skills, so
    prompt budgets cut remote skills first."""
    by_name = {s.name: s for s in local}
    keys = {s.skill_key: s for s in local}
    kept: list[Skill] = []
    shadowed: list[Shadowing] = []
    diags: list[Diagnostic] = []
    for skill in remote:
        winner = by_name.get(skill.name) or keys.get(skill.skill_key)
        if winner is None:
            kept.append(skill)
            continue
        shadowed.append(Shadowing(skill.name, winner, skill))
        diags.append(
            warning(
                "discover.remote-shadowed",
                f"remote skill {skill.name!r} from {skill.origin or skill.source} is not "
                f"loaded: the local {winner.source} skill at {winner.file_path} has that "
                "name, and local skills always win",
                path=skill.file_path,
                skill=skill.name,
            )
        )
    return (*local, *kept), tuple(shadowed), tuple(diags)


#: Real folders are de-duplicated by their strings on POSIX, where two paths are equal
#: exactly when their strings are: a skill's path string is at hand, while a path's
#: hash is computed from its parts. Elsewhere (case-insensitive) by the path itself.
_KEY_BY_STRING = os.name == "posix"
_NAME = attrgetter("name")
_REAL_DIR = attrgetter("real_dir")


def _merge(
    loaded: list[Skill], diags: list[Diagnostic], *, dedupe_realpath: bool
) -> tuple[list[Skill], list[Shadowing]]:
    # Later skills of a name win, keeping the first one's position (as the loop did).
    merged: dict[str, Skill] = dict(zip(map(_NAME, loaded), loaded, strict=True))
    shadowed: list[Shadowing] = []
    # Names are nearly always unique: only then is there anyone to report as hidden.
    for skill in loaded if len(merged) != len(loaded) else ():
        winner = merged[skill.name]
        if winner is skill:
            continue
        shadowed.append(Shadowing(skill.name, winner, skill))
        if skill.real_dir is not None and skill.real_dir == winner.real_dir:
            diags.append(
                info(
                    "discover.duplicate-realpath",
                    f"skill {skill.name!r} is the same folder as the {winner.source} skill at "
                    f"{winner.base_dir} (real path {winner.real_dir}); loaded once, from there",
                    path=skill.file_path,
                    skill=skill.name,
                )
            )
        else:
            diags.append(
                info(
                    "discover.shadowed",
                    f"skill {skill.name!r} from {skill.source} is hidden by the skill of the "
                    f"same name from {winner.source} at {winner.file_path}",
                    path=skill.file_path,
                    skill=skill.name,
                )
            )
    winners = list(merged.values())
    if not dedupe_realpath:
        return winners, shadowed
    # Nearly always every real folder is there once: seen in C-level passes (a rebuild
    # after one edit pays this for every skill), the loop below only when it is not.
    # (Path equality is the platform's: on POSIX that of the strings; a Path's hash is
    # kept by the object, and unchanged skills are the same objects build after build.)
    reals: list[Path] = list(filter(None, map(_REAL_DIR, winners)))  # a Path is always true
    if len(set(reals)) == len(reals):
        return winners, shadowed
    # Keep the copy reached without a symlink (else the first seen) of each real folder.
    keeper: dict[str | Path, Skill] = {}
    with_real = 0
    for skill in winners:
        real = skill.real_dir
        if real is None:
            continue
        with_real += 1
        key = str(real) if _KEY_BY_STRING else real
        held = keeper.get(key)
        if held is None or (held.base_dir != real and skill.base_dir == real):
            keeper[key] = skill
    if len(keeper) == with_real:
        return winners, shadowed  # every real folder once: nothing to drop
    kept: list[Skill] = []
    for skill in winners:
        real = skill.real_dir
        first = None if real is None else keeper.get(str(real) if _KEY_BY_STRING else real)
        if first is not None and first is not skill:
            diags.append(
                warning(
                    "discover.duplicate-realpath",
                    f"skill {skill.name!r} at {skill.base_dir} is the same real folder as skill "
                    f"{first.name!r} at {first.base_dir}; only {first.name!r} is loaded",
                    path=skill.file_path,
                    skill=skill.name,
                )
            )
            continue
        kept.append(skill)
    return kept, shadowed
