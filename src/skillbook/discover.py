"""Discovery: find the skill folders of every source and merge them by name.

Input: the roots to scan (:func:`resolve_roots` gives OpenClaw's six sources in load
order) and keyword options. Output: a frozen :class:`Discovery` with the merged
skills in first-seen order, every skill loaded before merging, who shadows whom, and
a diagnostic for each place where OpenClaw would drop something silently.

With default options the loaded set is OpenClaw's (spec §3.3-3.5), with two
deliberate differences: a SKILL.md that starts with a UTF-8 byte-order mark loads
(OpenClaw cannot see its frontmatter), and two *differently named* winners that are
the same real folder (an alias symlink to a skill without a ``name`` field) load
once (``dedupe_realpath=False`` restores OpenClaw's behaviour). Extras beyond the
baseline are opt-in: ``grouped`` loads ``skills/<group>/<skill>/SKILL.md``,
``allow_symlink_targets`` lets symlinked skills point into given folders, and the
``mixed``/``legacy`` modes load standalone ``*.md`` files of a root.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillbook import _fs
from skillbook._discover_load import Loader
from skillbook.diagnostics import Diagnostic, info, warning
from skillbook.mode import DEFAULT_MODE, Mode
from skillbook.model import Skill, Source
from skillbook.paths import Paths, resolve_user_path

DEFAULT_MAX_CANDIDATES_PER_ROOT = 300
DEFAULT_MAX_SKILLS_LOADED_PER_SOURCE = 200
DEFAULT_MAX_SKILLS_IN_PROMPT = 150
DEFAULT_MAX_SKILLS_PROMPT_CHARS = 30_000
DEFAULT_MAX_SKILL_FILE_BYTES = 256_000


@dataclass(frozen=True, slots=True)
class Limits:
    """``skills.limits.*`` (spec §3.3); the prompt limits are used by the catalog."""

    max_candidates_per_root: int = DEFAULT_MAX_CANDIDATES_PER_ROOT
    max_skills_loaded_per_source: int = DEFAULT_MAX_SKILLS_LOADED_PER_SOURCE
    max_skills_in_prompt: int = DEFAULT_MAX_SKILLS_IN_PROMPT
    max_skills_prompt_chars: int = DEFAULT_MAX_SKILLS_PROMPT_CHARS
    max_skill_file_bytes: int = DEFAULT_MAX_SKILL_FILE_BYTES


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

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", Mode.of(self.mode))


@dataclass(frozen=True, slots=True)
class Shadowing:
    """``hidden`` lost the name ``name`` to ``winner`` (a later, higher-precedence source)."""

    name: str
    winner: Skill
    hidden: Skill


@dataclass(frozen=True, slots=True)
class Discovery:
    """What :func:`discover` found.

    ``skills``: the merged winners in first-seen order (a later source overwrites a
    name's value, the name keeps its first position); ``loaded``: every skill of every
    root before merging; ``shadowed``: each skill that lost its name to a later source
    (a winner dropped as a same-folder alias of another name is only diagnosed);
    ``diagnostics``: everything skipped, refused, capped or hidden, in load order.
    """

    skills: tuple[Skill, ...]
    loaded: tuple[Skill, ...]
    shadowed: tuple[Shadowing, ...]
    diagnostics: tuple[Diagnostic, ...]
    roots: tuple[Root, ...]

    def get(self, name: str) -> Skill | None:
        for skill in self.skills:
            if skill.name == name:
                return skill
        return None


class ParseCache:
    """Parsed SKILL.md files, owned by the caller and reused across discoveries.

    An entry is used only while the file's (device, inode, size, mtime_ns, ctime_ns)
    are unchanged, so a cached discovery is always as correct as a fresh one; an
    unchanged tree costs only directory listings and ``stat`` calls.
    """

    __slots__ = ("_built", "_entries", "hits", "misses")

    def __init__(self) -> None:
        self._entries: dict[str, tuple[tuple[int, ...], object]] = {}
        self._built: dict[tuple[str, ...], tuple[tuple[int, ...], object]] = {}
        #: Parse lookups answered from the cache / that had to read and parse.
        self.hits = 0
        self.misses = 0

    def lookup(self, path: str, identity: tuple[int, ...]) -> object | None:
        entry = self._entries.get(path)
        if entry is not None and entry[0] == identity:
            self.hits += 1
            return entry[1]
        self.misses += 1
        return None

    def store(self, path: str, identity: tuple[int, ...], value: object) -> None:
        self._entries[path] = (identity, value)

    def lookup_built(self, key: tuple[str, ...], identity: tuple[int, ...]) -> Any:
        """The skill built from a file at ``key`` (path, folder, source, real folder)."""
        entry = self._built.get(key)
        return entry[1] if entry is not None and entry[0] == identity else None

    def store_built(self, key: tuple[str, ...], identity: tuple[int, ...], value: object) -> None:
        self._built[key] = (identity, value)

    def discard(self, path: str) -> None:
        self._entries.pop(path, None)
        for key in [k for k in self._built if k[0] == path]:
            del self._built[key]

    def clear(self) -> None:
        self._entries.clear()
        self._built.clear()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)


def resolve_roots(
    workspace: Path | None,
    paths: Paths,
    *,
    extra_dirs: Sequence[str] = (),
    cwd: Path | None = None,
) -> list[Root]:
    """OpenClaw's roots in load (= precedence) order (spec §3.1-3.2).

    extra → bundled → managed → personal → project (``<ws>/.agents/skills``) →
    workspace (``<ws>/skills``). Extra dirs are trimmed, blanks dropped, ``~``
    expanded with the effective home and resolved against ``cwd``.
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
    roots.append(Root(Source.PERSONAL, paths.personal_dir))
    if workspace is not None:
        ws = Path(_fs.abspath(base / workspace))
        roots.append(Root(Source.PROJECT, ws / ".agents" / "skills"))
        roots.append(Root(Source.WORKSPACE, ws / "skills"))
    return roots


def discover(
    roots: Sequence[Root],
    *,
    options: DiscoverOptions | None = None,
    cache: ParseCache | None = None,
) -> Discovery:
    """Load every root in order and merge by name (later roots win, first position kept)."""
    opts = options if options is not None else DiscoverOptions()
    loader = Loader(
        limits=opts.limits,
        allow_symlink_targets=opts.allow_symlink_targets,
        grouped=opts.grouped,
        standalone=opts.mode.loads_standalone,
        cache=cache,
    )
    loaded: list[Skill] = []
    for root in roots:
        loaded.extend(loader.load_root(root.source, os.fspath(root.path)))
    diags = loader.diagnostics
    skills, shadowed = _merge(loaded, diags, dedupe_realpath=opts.dedupe_realpath)
    return Discovery(
        skills=tuple(skills),
        loaded=tuple(loaded),
        shadowed=tuple(shadowed),
        diagnostics=tuple(diags),
        roots=tuple(roots),
    )


def _merge(
    loaded: list[Skill], diags: list[Diagnostic], *, dedupe_realpath: bool
) -> tuple[list[Skill], list[Shadowing]]:
    merged: dict[str, Skill] = {}
    for skill in loaded:
        merged[skill.name] = skill
    shadowed: list[Shadowing] = []
    for skill in loaded:
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
    # Keep the copy reached without a symlink (else the first seen) of each real folder.
    keeper: dict[Path, Skill] = {}
    for skill in winners:
        real = skill.real_dir
        if real is None:
            continue
        if real not in keeper or (keeper[real].base_dir != real and skill.base_dir == real):
            keeper[real] = skill
    kept: list[Skill] = []
    for skill in winners:
        first = keeper.get(skill.real_dir) if skill.real_dir is not None else None
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
