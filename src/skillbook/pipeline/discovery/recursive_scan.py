"""One root the way OpenClaw 2026.9 scans it (``discoverSkillCandidates``, ``loadSkillRootRecords``).

Input: the parts of a :class:`~skillbook.pipeline.discovery.root_scanner.RootScanner` a
:class:`RecursiveScan` holds (its reader, containment and layouts), a source label
and a root folder. Output: the root's skills. The
:class:`~skillbook.config.profile.DiscoveryRules` of the scanner's profile say when this
is used instead of 2026.4's one-level scan.

What changes against 2026.4 (spec §3.3): candidates are every folder holding a
``SKILL.md`` down to six levels (two for an extra dir that is not a ``skills``
folder), named by their relative path and sorted by ``localeCompare``; the listing
is cut at ``maxCandidatesPerRoot`` and loading stops at ``maxSkillsLoadedPerSource``;
an invalid SKILL.md never lets its children load instead; a ``skills`` child is
always scanned; the nested ``skills/`` root is used only when the root itself holds
no skills; the managed and personal roots may link anywhere (the real folder is the
skill's folder).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from skillbook.base import fs as _fs
from skillbook.base import verified_read as _verified_read
from skillbook.base.js import js_sorted, js_trim, locale_compare_key
from skillbook.config.profile import DiscoveryRules
from skillbook.diagnostics import warning
from skillbook.model import Skill, SkillMetadata, Source
from skillbook.pipeline.cache.scan_reads import touch
from skillbook.pipeline.discovery import scan_fs
from skillbook.pipeline.discovery.learned import is_learned_subdir
from skillbook.pipeline.discovery.root_containment import Containment
from skillbook.pipeline.discovery.root_layouts import Layouts
from skillbook.pipeline.discovery.skill_reader import SKILL_FILE, SkillReader, limit_list

NESTED_ROOT_NAME = "skills"
_MAX_KEY = "skills.limits.maxSkillsLoadedPerSource"


def has_skill_file(folder: str) -> bool:
    """``hasSkillFileCandidate``: anything named SKILL.md (``lstat``), even a broken link."""
    path = os.path.join(folder, SKILL_FILE)
    touch(path)
    try:
        os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return True


def _plain_dirs(folder: str) -> list[str]:
    """Child folders, symbolic links left out (``followSymlinks: false``), JS-sorted."""
    listing = scan_fs.list_child_dirs(folder)
    return js_sorted(d for d in listing.dirs if d not in listing.linked)


def _has_link_child(folder: str, skip: str | None) -> bool:
    touch(folder)
    try:
        with os.scandir(folder) as it:
            for entry in it:
                name = entry.name
                if name == skip or name.startswith(".") or name == "node_modules":
                    continue
                if entry.is_symlink():
                    return True
    except OSError:
        return False
    return False


def _contains_skills(folder: str, *, skip: str, limit: int, depth: int) -> bool:
    """``containsDiscoverableSkill``: a SKILL.md (or a symlinked child) below ``folder``."""
    queue = [(folder, 0)]
    for current, level in queue:
        if level > 0 and has_skill_file(current):
            return True
        if level >= depth:
            continue
        if _has_link_child(current, skip if level == 0 else None):
            return True
        for name in _plain_dirs(current)[:limit]:
            if level == 0 and name == skip:
                continue
            queue.append((os.path.join(current, name), level + 1))
    return False


def nested_root(root_dir: str, limit: int, depth: int) -> str:
    """``resolveNestedSkillsRoot`` of 2026.9: ``<root>/skills`` only when the root
    itself holds no skill and some folder below ``skills/`` does."""
    nested = os.path.join(root_dir, NESTED_ROOT_NAME)
    if not scan_fs.is_dir(nested):
        return root_dir
    if not has_skill_file(root_dir) and _contains_skills(
        root_dir, skip=NESTED_ROOT_NAME, limit=limit, depth=depth
    ):
        return root_dir
    queue = [(nested, 0)]
    for current, level in queue:
        if has_skill_file(current):
            return nested
        if level >= depth:
            continue
        queue.extend((os.path.join(current, n), level + 1) for n in _plain_dirs(current)[:limit])
    return root_dir


@dataclass(frozen=True, slots=True)
class _Place:
    """One root being scanned: its label, folder, real path and the folder skills are
    searched in (``<root>/skills`` when that is the nested root)."""

    source: Source
    root_dir: str
    root_real: str
    base_dir: str
    #: The managed and personal roots of 2026.9 may link anywhere.
    uncontained: bool

    @property
    def label(self) -> str:
        return self.source.value


class RecursiveScan:
    """The 2026.9 scan of one root (see the module docstring), made of the scanner's parts."""

    __slots__ = ("containment", "layouts", "reader", "rules", "standalone")

    def __init__(
        self,
        reader: SkillReader,
        containment: Containment,
        layouts: Layouts,
        *,
        rules: DiscoveryRules,
        standalone: bool,
    ) -> None:
        self.reader = reader
        self.containment = containment
        self.layouts = layouts
        self.rules = rules
        #: skillbook's mixed/legacy modes also load standalone *.md files of the root.
        self.standalone = standalone

    def load_root(self, source: Source, root_dir: str, root_real: str) -> list[Skill]:
        """The skills of one existing root (see the module docstring)."""
        limits = self.reader.limits
        base_dir = nested_root(
            root_dir, max(0, limits.max_candidates_per_root), self.rules.grouped_depth
        )
        place = _Place(
            source, root_dir, root_real, base_dir, source.value in self.rules.uncontained_sources
        )
        base_real = self._resolve(place, base_dir, root_real)
        if base_real is None:
            return []
        if has_skill_file(base_dir):
            one = self._load_one(place, base_dir, base_real)
            return [one] if one is not None else []
        listing = scan_fs.list_child_dirs(base_dir)
        found = self._search(place, base_real, self._first_level(place, listing.dirs))
        if base_dir != root_dir and has_skill_file(root_dir):
            one = self._load_one(place, root_dir, root_real)
            if one is not None:
                return [one]
        loaded = self._load_found(place, found)
        if self.standalone:
            # skillbook's mixed/legacy modes: standalone *.md files of the root, after the folders.
            self.layouts.standalone(base_dir, base_real, listing.md_files, loaded, place.label)
        return loaded

    def _resolve(self, place: _Place, candidate: str, within: str) -> str | None:
        """The candidate's real path, when it is contained (or need not be)."""
        if place.uncontained:
            return self.reader.memo.realpath(candidate)
        return self.containment.contained(
            candidate, source=place.label, root_dir=place.root_dir, root_real=within
        )

    def _first_level(self, place: _Place, dirs: tuple[str, ...]) -> list[tuple[str, str, int]]:
        """The base folder's children to search from: (path, name, level), cut at
        ``maxCandidatesPerRoot`` (a ``skills`` child always kept)."""
        limits = self.reader.limits
        max_candidates = max(0, limits.max_candidates_per_root)
        max_loaded = max(0, limits.max_skills_loaded_per_source)
        base_dir = place.base_dir
        children = js_sorted(dirs)
        limited = [] if max_loaded == 0 else children[:max_candidates]
        if max_loaded > 0 and NESTED_ROOT_NAME in children and NESTED_ROOT_NAME not in limited:
            limited.append(NESTED_ROOT_NAME)
        if len(children) > max_candidates:
            self.reader.add(
                warning,
                "discover.over-limit",
                f"{len(children)} candidate folders, over `skills.limits.maxCandidatesPerRoot` = "
                f"{max_candidates}; not scanned: {limit_list(children[max_candidates:])}",
                base_dir,
            )
        queue: list[tuple[str, str, int]] = []
        for name in limited:
            path = os.path.join(base_dir, name)
            if is_learned_subdir(place.source, place.root_dir, path) and not has_skill_file(path):
                # A candidate as in OpenClaw, but the skills below skills/auto are the learned
                # skills' own source (skillbook.pipeline.discovery.learned): searching it here loads them twice.
                continue
            top = name == NESTED_ROOT_NAME and not has_skill_file(path)
            queue.append((path, name, 0 if top else 1))
        return queue

    def _search(
        self, place: _Place, base_real: str, queue: list[tuple[str, str, int]]
    ) -> list[tuple[str, str, str]]:
        """Every folder holding a SKILL.md, breadth first from ``queue``, within the
        depth limits: (path, real path, relative name), in ``localeCompare`` order."""
        max_candidates = max(0, self.reader.limits.max_candidates_per_root)
        found: list[tuple[str, str, str]] = []
        for path, name, level in queue:
            real = self._resolve(place, path, base_real)
            if real is None:
                continue
            if has_skill_file(path):
                found.append((path, real, name))
                continue
            if level >= self._depth(place, path):
                continue
            listing = scan_fs.list_child_dirs(path)
            # 2026.4's scan reports a `skill.md` in a candidate folder; this search
            # passed such a folder by without a word. The listing is already read.
            self.layouts.report_case(path, (*listing.md_files, *listing.dirs))
            below = js_sorted(listing.dirs)
            queue.extend(
                (os.path.join(path, n), f"{name}/{n}", level + 1) for n in below[:max_candidates]
            )
        found.sort(key=lambda item: locale_compare_key(item[2]))
        return found

    def _depth(self, place: _Place, path: str) -> int:
        """How deep below the base folder ``path``'s branch is searched: an extra dir
        that is not a ``skills`` folder only two levels."""
        base_dir = place.base_dir
        nested_path = os.path.join(base_dir, NESTED_ROOT_NAME)
        base_is_skills = base_dir == os.path.join(place.root_dir, NESTED_ROOT_NAME) or (
            os.path.basename(base_dir) == NESTED_ROOT_NAME
        )
        shallow = (
            place.label == Source.EXTRA.value
            and not base_is_skills
            and path != nested_path
            and not _fs.is_path_inside(nested_path, path)
        )
        return self.rules.grouped_depth_extra if shallow else self.rules.grouped_depth

    def _load_found(self, place: _Place, found: list[tuple[str, str, str]]) -> list[Skill]:
        """The found folders loaded in order, up to ``maxSkillsLoadedPerSource``."""
        max_loaded = max(0, self.reader.limits.max_skills_loaded_per_source)
        loaded: list[Skill] = []
        for index, (path, real, _name) in enumerate(found):
            if len(loaded) >= max_loaded:
                self.reader.add(
                    warning,
                    "discover.over-limit",
                    f"{len(loaded)} skills loaded, the `{_MAX_KEY}` limit of {max_loaded}; "
                    f"folders not loaded: {limit_list([n for _, _, n in found[index:]])}",
                    place.base_dir,
                )
                break
            one = self._load_one(place, path, real)
            if one is not None:
                loaded.append(one)
        return loaded

    def _load_one(self, place: _Place, skill_dir: str, real: str) -> Skill | None:
        """``loadSingleSkillDirectory``: the folder's own SKILL.md, never its children."""
        skill = self.reader.load_single(skill_dir, real, place.label)
        if skill is None:
            return None
        if self.rules.source_origin_key:
            skill = with_origin_key(skill, real, self.reader.memo.realpath)
        if not place.uncontained or real == skill_dir:
            return skill
        # `canonicalizeLoadedSkillRecord`: a linked managed or personal skill is its real folder.
        base = Path(real)
        return dataclasses.replace(skill, base_dir=base, file_path=base / SKILL_FILE, real_dir=base)


#: ``.openclaw/source-origin.json``, written by OpenClaw 2026.9's source installs.
SOURCE_ORIGIN = os.path.join(".openclaw", "source-origin.json")
MAX_SOURCE_ORIGIN_BYTES = 16_384


def with_origin_key(skill: Skill, real: str, realpath: Callable[[str], str | None]) -> Skill:
    """``resolveSkillEntryMetadata``: without a manifest ``skillKey``, the ``slug`` of the
    skill's ``.openclaw/source-origin.json`` (a JSON object inside the folder) is its key.
    ``realpath`` resolves the file (the scan's memo, which records it)."""
    meta = skill.metadata
    if meta is not None and meta.skill_key:
        return skill
    path = os.path.join(real, SOURCE_ORIGIN)
    if not scan_fs.lexists(path):
        return skill
    data = _verified_read.read_contained(
        path, root_real=real, max_bytes=MAX_SOURCE_ORIGIN_BYTES, realpath=realpath
    )
    if isinstance(data, _verified_read.ReadFailure):
        return skill
    try:
        obj = json.loads(data)
    except ValueError:
        return skill
    slug = obj.get("slug") if isinstance(obj, dict) else None
    key = js_trim(slug) if isinstance(slug, str) else ""
    if not key:
        return skill
    base = meta if meta is not None else SkillMetadata()
    parsed = dataclasses.replace(skill.parsed, metadata=dataclasses.replace(base, skill_key=key))
    return dataclasses.replace(skill, parsed=parsed)
