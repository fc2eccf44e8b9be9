"""The per-root loading algorithm behind the filesystem sources of discovery.

Input: one root folder and its source label. Output: the skills it yields, in
OpenClaw's order (spec §3.3 ``loadSkills``), plus diagnostics. The scanner decides
*which* folders are skills: its steps here list a root, apply the limits, read each
candidate and reuse a remembered root. It is made of parts it holds: the
:class:`~skillbook.pipeline.discovery.skill_reader.SkillReader` that reads one folder
into a skill (§2.1 ``loadSkillsFromDirSafe``), the
:class:`~skillbook.pipeline.discovery.root_containment.Containment` of candidates, the
:class:`~skillbook.pipeline.discovery.root_layouts.Layouts` (nested, grouped, hidden
and standalone) and, for profiles that scan roots recursively, the
:class:`~skillbook.pipeline.discovery.recursive_scan.RecursiveScan`. One scanner serves
one discovery: its real-path memo must not outlive the tree's state.

While the result cache records a build, each root is scanned inside
:class:`skillbook.pipeline.cache.scan_reads.scanning`: the scanner and its parts record
every path they ask about (:mod:`skillbook.pipeline.discovery.scan_fs`), every file
they check and every real path they take, unless the root is recorded plain
(:func:`skillbook.pipeline.cache.footprint.root`).
"""

from __future__ import annotations

import itertools
import os
import stat
import time
from dataclasses import dataclass, field, replace

from skillbook.base import fs as _fs
from skillbook.base import listing as _listing
from skillbook.base import verified_read as _verified_read
from skillbook.base.js import js_sorted, locale_compare_key
from skillbook.base.pinned_root import PinnedRoot
from skillbook.config.profile import DEFAULT_PROFILE, DiscoveryRules
from skillbook.diagnostics import Diagnostic, error, warning
from skillbook.model import Skill, Source
from skillbook.pipeline.cache import footprint
from skillbook.pipeline.cache.root_memo import FolderState, RootRecord, file_identity, folder_state
from skillbook.pipeline.cache.scan_reads import scanning, touch
from skillbook.pipeline.discovery import scan_fs
from skillbook.pipeline.discovery.recursive_scan import RecursiveScan
from skillbook.pipeline.discovery.root_containment import Containment
from skillbook.pipeline.discovery.root_layouts import MAX_LOADED_KEY as _MAX_KEY
from skillbook.pipeline.discovery.root_layouts import NESTED_ROOT_NAME, Layouts
from skillbook.pipeline.discovery.skill_reader import SKILL_FILE, SkillReader, limit_list

#: A remembered root with at most this many changed SKILL.md files is patched, not rescanned.
MAX_PATCHED = 64
_CANDIDATES_KEY = "skills.limits.maxCandidatesPerRoot"
#: From this many candidates a root is held open while they are read (it costs one
#: file's check to open it).
_PIN_FROM = 4


@dataclass(slots=True)
class _Root:
    """One root being scanned: where it is, and what the root memo knows of it."""

    label: str
    root_dir: str
    base_dir: str
    #: ``source``, ``root_dir`` and ``root_real`` (the base's real path), for containment.
    where: dict[str, str]
    memo_key: tuple[object, ...]
    record: RootRecord | None
    folder: FolderState
    scanned_at: int


@dataclass(slots=True)
class _Pass:
    """What one full pass over a root's candidates has gathered."""

    #: Plain roots (see root_memo) are remembered whole: (SKILL.md, lstat) per skill;
    #: None once the root is not plain.
    seen: list[tuple[str, os.stat_result]] | None
    first_diag: int
    loaded: list[Skill] = field(default_factory=list)
    groups: list[tuple[str, list[str]]] = field(default_factory=list)
    per_file: list[tuple[Diagnostic, ...]] = field(default_factory=list)


class RootScanner:
    """Loads roots one by one (spec §3.3 ``loadSkills``) with a :class:`SkillReader`."""

    def __init__(
        self,
        reader: SkillReader,
        *,
        allowed: tuple[str, ...] = (),
        grouped: bool = False,
        standalone: bool = False,
        rules: DiscoveryRules = DEFAULT_PROFILE.discovery,
    ) -> None:
        self.reader = reader
        self.limits = reader.limits
        # The reader's memo, shared: a folder the scanner resolved is not resolved again.
        self.memo = reader.memo
        self.standalone = standalone
        #: The compat profile's discovery rules (2026.9 scans roots recursively).
        self.rules = rules
        # Findings go where the reader's go, so one root's diagnostics stay in order.
        self.containment = Containment(reader.memo, allowed, reader.add)
        self.layouts = Layouts(reader, self.containment, grouped=grouped)
        self.recursive = RecursiveScan(
            reader, self.containment, self.layouts, rules=rules, standalone=standalone
        )
        #: What a remembered root's result also depends on (see root_memo).
        self._options = (self.limits, grouped, standalone, allowed, rules, reader.profile)

    def scan(
        self, source: Source, path: str | os.PathLike[str]
    ) -> tuple[list[Skill], list[Diagnostic]]:
        """One root: its skills and the diagnostics found while loading it."""
        reader = self.reader
        saved, reader.diagnostics = reader.diagnostics, []
        try:
            skills = self.load_root(source, os.fspath(path))
            return skills, reader.diagnostics
        finally:
            reader.diagnostics = saved

    # -- one root --------------------------------------------------------------------

    def load_root(self, source: Source, path: str) -> list[Skill]:
        fp = footprint.current()
        if fp is None:
            return self._load_root(source, path)
        before = fp.covered
        with scanning() as scan:
            loaded = self._load_root(source, path)
        if fp.covered == before:
            # Not plain: every path the scan read and every real path it took.
            fp.scanned(scan)
        return loaded

    def _load_root(self, source: Source, path: str) -> list[Skill]:
        root_dir = _fs.abspath(path)
        if not scan_fs.is_dir(root_dir):
            footprint.absent(root_dir)
            # A default root that does not exist is normal; one that is there but is no
            # folder (a broken or looping link, a file) hid all its skills without a word.
            if source is Source.EXTRA or os.path.lexists(root_dir):
                self._report_missing(source, root_dir)
            return []
        root_real = self.memo.realpath(root_dir) or root_dir
        if self.rules.slice_by_candidates:
            return self.recursive.load_root(source, root_dir, root_real)
        label = source.value
        base_dir = self.layouts.nested_root(root_dir)
        base_real = self.containment.contained(
            base_dir, source=label, root_dir=root_dir, root_real=root_real
        )
        if base_real is None:
            return []
        where = {"source": label, "root_dir": root_dir, "root_real": base_real}
        root_md = os.path.join(base_dir, SKILL_FILE)
        if scan_fs.has_file(root_md):
            return self._root_skill(base_dir, root_md, label, where)
        if scan_fs.lexists(root_md):
            self.reader.report_read_failure(
                _verified_read.ReadFailure(_verified_read.SYMLINK), root_md, None
            )
        return self._load_folders(self._root(label, root_dir, base_dir, where))

    def _report_missing(self, source: Source, root_dir: str) -> None:
        what = "is not a folder" if os.path.lexists(root_dir) else "does not exist"
        if scan_fs.is_symlink_loop(root_dir):
            what = "is a symbolic link that loops back to itself"
        elif os.path.islink(root_dir) and not os.path.exists(root_dir):
            what = "is a symbolic link to a folder that does not exist"
        origin = "from `skills.load.extraDirs`" if source is Source.EXTRA else f"({source.value})"
        self.reader.add(
            warning,
            "discover.root-missing",
            f"the skills folder {root_dir} {origin} {what}; no skill is loaded from it",
            root_dir,
        )

    def _root_skill(
        self, base_dir: str, root_md: str, label: str, where: dict[str, str]
    ) -> list[Skill]:
        """A root that is itself a skill (its own SKILL.md)."""
        real_md = self.containment.contained(root_md, **where)
        if real_md is None:
            return []
        touch(real_md)
        try:
            size = os.stat(real_md).st_size
        except OSError as exc:
            self.reader.add(error, "discover.unreadable", f"cannot stat SKILL.md: {exc}", root_md)
            return []
        if size > self.limits.max_skill_file_bytes:
            self.reader.report_too_large(root_md, size, root_level=True)
            return []
        return self.containment.filter_inside(self.reader.load_dir(base_dir, label), **where)

    def _root(self, label: str, root_dir: str, base_dir: str, where: dict[str, str]) -> _Root:
        cache = self.reader.cache
        return _Root(
            label=label,
            root_dir=root_dir,
            base_dir=base_dir,
            where=where,
            memo_key=(label, base_dir, where["root_real"], self._options),
            record=cache.roots.get((label, base_dir)) if cache is not None else None,
            folder=folder_state(base_dir) if cache is not None else None,
            scanned_at=time.time_ns(),
        )

    def _load_folders(self, root: _Root) -> list[Skill]:
        """A root of skill folders: remembered, patched, or listed and scanned in full."""
        reused = self._remembered(root)
        if reused is not None:
            return reused
        listing = scan_fs.list_child_dirs(root.base_dir)
        if listing.error is not None:
            self.reader.add(
                error, "discover.unreadable", f"cannot list: {listing.error}", root.base_dir
            )
            return []
        self.layouts.report_listing(root.base_dir, listing)
        record = root.record
        if record is not None:
            changed = record.changed(root.memo_key, listing)
            reused = self._reuse(root, changed, root.folder, root.scanned_at)
            if reused is not None:
                return reused
        return self._scan_listing(root, listing)

    def _remembered(self, root: _Root) -> list[Skill] | None:
        """The remembered root's result, without listing it, when a watcher's hint or
        the folder's unchanged state vouches for its entries; else None."""
        record = root.record
        if record is None:
            return None
        cache = self.reader.cache
        hint = cache.hint if cache is not None else None
        base_dir = root.base_dir
        if (
            hint is not None
            and hint.covers(base_dir)
            and hint.blind.isdisjoint(record.listing.dirs)
        ):
            # A watcher listed every change in this root: only those files are looked at.
            changed = record.hinted(root.memo_key, base_dir, hint.below(base_dir))
            reused = self._reuse(root, changed, record.folder, record.scanned_at)
            if reused is not None:
                return reused
        if record.listing_unchanged(root.memo_key, root.folder):
            changed = record.changed(root.memo_key, None)
            return self._reuse(root, changed, root.folder, root.scanned_at)
        return None

    def _scan_listing(self, root: _Root, listing: _listing.Listing) -> list[Skill]:
        """Every candidate folder of the listing read, then groups and standalone files."""
        plain = self.reader.cache is not None and self._plain(listing)
        run = _Pass(seen=[] if plain else None, first_diag=len(self.reader.diagnostics))
        candidates = self._candidates(root.base_dir, listing, run)
        self._read_candidates(root, listing.linked, candidates, run)
        self.layouts.groups(run.groups, run.loaded, root.label, root.where, self._load_candidate)
        if self.standalone:
            self.layouts.standalone(
                root.base_dir, root.where["root_real"], listing.md_files, run.loaded, root.label
            )
        self._remember(root, listing, run)
        return self._ranked(root.base_dir, run.loaded)

    def _plain(self, listing: _listing.Listing) -> bool:
        """A root the root memo may remember whole: no links, hidden or nested folders."""
        return (
            not (listing.linked or listing.hidden_dirs or listing.broken_links)
            and not listing.looped_links
            and NESTED_ROOT_NAME not in listing.dirs
            and not (self.standalone and listing.md_files)
        )

    def _candidates(self, base_dir: str, listing: _listing.Listing, run: _Pass) -> list[str]:
        """The folders to read, in order, cut at ``maxSkillsLoadedPerSource``."""
        lim = self.limits
        max_loaded = lim.max_skills_loaded_per_source
        ordered = js_sorted(listing.dirs)
        candidates = ordered[: max(0, max_loaded)]
        if len(ordered) > len(candidates):
            run.seen = None
            over = len(ordered) > lim.max_candidates_per_root
            note = (
                f" (also over `{_CANDIDATES_KEY}` = {lim.max_candidates_per_root})" if over else ""
            )
            self.reader.add(
                warning,
                "discover.over-limit",
                f"{len(ordered)} candidate folders, over `{_MAX_KEY}` = {max_loaded}{note}; "
                f"not scanned: {limit_list(ordered[len(candidates) :])}",
                base_dir,
            )
        return candidates

    def _read_candidates(
        self, root: _Root, linked: frozenset[str], candidates: list[str], run: _Pass
    ) -> None:
        # Many skills: their files are opened below the root held open (one check for
        # the root instead of one per file); see skillbook.base.pinned_root.
        base_real = root.where["root_real"]
        pinned = PinnedRoot.open(base_real) if len(candidates) >= _PIN_FROM else None
        self.reader.pinned = pinned
        try:
            self._read_each(root, linked, candidates, run)
        finally:
            if pinned is not None:
                self.reader.pinned = None
                pinned.close()

    def _read_each(
        self, root: _Root, linked: frozenset[str], candidates: list[str], run: _Pass
    ) -> None:
        max_loaded = self.limits.max_skills_loaded_per_source
        where = root.where
        # _fs.join(base_dir, name) and _fs.join(base_real, name), their prefix made once.
        dir_prefix = _fs.join(root.base_dir, "")
        real_prefix = _fs.join(where["root_real"], "")
        for index, name in enumerate(candidates):
            skill_dir = dir_prefix + name
            if name in linked:
                real = self.memo.realpath(skill_dir)
                inside = real is not None and self.containment.inside(where["root_real"], real)
            else:
                # A real parent plus a non-link entry: canonical (no syscall), and inside.
                real = real_prefix + name
                self.memo.note(skill_dir, real)
                inside = True
            if not inside and self.containment.contained(skill_dir, real=real, **where) is None:
                continue
            self._read_one(skill_dir, root.label, where, run)
            if len(run.loaded) >= max_loaded:
                self._stop(root.base_dir, candidates[index + 1 :], run)
                return

    def _read_one(self, skill_dir: str, label: str, where: dict[str, str], run: _Pass) -> None:
        """One candidate folder: its skills, or a group of skill folders, or nothing."""
        diags = self.reader.diagnostics
        before = len(diags)
        seen = run.seen
        result = self._load_candidate(skill_dir, label, where, seen)
        if seen is not None:
            run.per_file.append(tuple(diags[before:]))
            if not _one_skill_of(result, skill_dir) or len(seen) != len(run.loaded) + 1:
                run.seen = None
        if result is not None:
            run.loaded.extend(result)
            return
        leaves = self.layouts.group_leaves(skill_dir)
        if leaves:
            run.groups.append((skill_dir, leaves))
        else:
            # e.g. a repository root whose skills/ holds only skills/.curated/…
            self.layouts.report_hidden(skill_dir, scan_fs.list_child_dirs(skill_dir))

    def _stop(self, base_dir: str, rest: list[str], run: _Pass) -> None:
        """``maxSkillsLoadedPerSource`` reached: the folders left are not read."""
        if not rest:
            return
        run.seen = None
        self.reader.add(
            warning,
            "discover.over-limit",
            f"{len(run.loaded)} skills loaded, the `{_MAX_KEY}` limit of "
            f"{self.limits.max_skills_loaded_per_source}; folders not scanned: {limit_list(rest)}",
            base_dir,
        )

    def _remember(self, root: _Root, listing: _listing.Listing, run: _Pass) -> None:
        """Keep a plain root whole in the root memo (and its reads in the footprint), or
        forget what was remembered of it."""
        cache = self.reader.cache
        if cache is None:
            return
        seen = run.seen
        slot = (root.label, root.base_dir)
        if (
            seen is None
            or run.groups
            or len(seen) != len(run.loaded)
            or sum(map(len, run.per_file)) != len(self.reader.diagnostics) - run.first_diag
        ):
            cache.roots.pop(slot, None)
            return
        record = cache.roots[slot] = RootRecord(
            root.memo_key,
            listing,
            tuple(path for path, _ in seen),
            tuple(file_identity(info) for _, info in seen),
            tuple(run.loaded),
            tuple(run.per_file),
            root.folder,
            root.scanned_at,
        )
        if root.base_dir == root.root_dir:
            footprint.root(root.base_dir, root.folder, record.files, record.identities)

    def _ranked(self, base_dir: str, loaded: list[Skill]) -> list[Skill]:
        """Grouped and standalone skills may pass the limit: the first by name are kept."""
        max_loaded = self.limits.max_skills_loaded_per_source
        if len(loaded) <= max_loaded:
            return loaded
        ranked = sorted(loaded, key=lambda s: locale_compare_key(s.name))
        dropped = ranked[max(0, max_loaded) :]
        self.reader.add(
            warning,
            "discover.over-limit",
            f"{len(loaded)} skills loaded, over `{_MAX_KEY}` = {max_loaded}; kept the first "
            f"by name, not loaded: {limit_list([s.name for s in dropped])}",
            base_dir,
        )
        return ranked[: max(0, max_loaded)]

    def _reuse(
        self,
        root: _Root,
        changed: list[int] | None,
        folder: FolderState,
        scanned_at: int,
    ) -> list[Skill] | None:
        """A remembered root's result, with the few changed files loaded again (they must
        still load as one skill each); None when the root has to be scanned in full.
        Files taken from the record count as parse-cache hits."""
        cache = self.reader.cache
        record = root.record
        if changed is None or cache is None or record is None or len(changed) > MAX_PATCHED:
            return None
        diags = self.reader.diagnostics
        start = len(diags)
        skills, identities = list(record.skills), list(record.identities)
        per_file = list(record.diagnostics)
        for index in changed:
            skill_dir = os.path.dirname(record.files[index])
            seen: list[tuple[str, os.stat_result]] = []
            before = len(diags)
            result = self._load_candidate(skill_dir, root.label, root.where, seen)
            if result is None or not _one_skill_of(result, skill_dir) or len(seen) != 1:
                del diags[start:]  # not plain any more: the full scan reports it
                return None
            skills[index], identities[index] = result[0], file_identity(seen[0][1])
            per_file[index] = tuple(diags[before:])
        del diags[start:]
        diags.extend(itertools.chain.from_iterable(per_file))
        slot = (root.label, root.base_dir)
        if changed:
            cache.roots[slot] = replace(
                record,
                identities=tuple(identities),
                skills=tuple(skills),
                diagnostics=tuple(per_file),
                folder=folder,
                scanned_at=scanned_at,
            )
        cache.hits += len(record.files) - len(changed)
        _record_reused(root, record.files, tuple(identities), folder)
        return skills

    def _load_candidate(
        self,
        skill_dir: str,
        label: str,
        where: dict[str, str],
        seen: list[tuple[str, os.stat_result]] | None = None,
    ) -> list[Skill] | None:
        """One child folder; None when it has no SKILL.md at all. A regular SKILL.md
        within the size limit is added to ``seen`` with its ``lstat``."""
        md = _fs.join(skill_dir, SKILL_FILE)
        touch(md)
        try:
            md_stat = os.lstat(md)
        except FileNotFoundError:
            self.layouts.check_case(skill_dir)
            return None
        except OSError as exc:
            self.reader.add(error, "discover.unreadable", f"cannot stat SKILL.md: {exc}", md)
            return []
        known: os.stat_result | None = None
        if stat.S_ISLNK(md_stat.st_mode):
            size = self._linked_md_size(md, where)
            if size is None:
                return []
        else:
            # Not a link: its real path is inside the (already checked) real skill folder.
            size, known = md_stat.st_size, md_stat
        if size > self.limits.max_skill_file_bytes:
            self.reader.report_too_large(md, size, root_level=False)
            return []
        if seen is not None and known is not None:
            seen.append((md, known))
        return self.containment.filter_inside(
            self.reader.load_dir(skill_dir, label, known), **where
        )

    def _linked_md_size(self, md: str, where: dict[str, str]) -> int | None:
        """The size of the file a symlinked SKILL.md points to inside the root, or None
        (reported) when it points nowhere, outside, or cannot be read."""
        exists = scan_fs.has_file(md)
        real_md = self.containment.contained(md, **where) if exists else None
        if real_md is None:
            if not exists:
                self.reader.report_read_failure(
                    _verified_read.ReadFailure(_verified_read.SYMLINK), md, None
                )
            return None
        touch(real_md)
        try:
            return os.stat(real_md).st_size
        except OSError as exc:
            self.reader.add(error, "discover.unreadable", f"cannot stat SKILL.md: {exc}", md)
            return None


def _one_skill_of(result: list[Skill] | None, skill_dir: str) -> bool:
    """The candidate loaded as exactly one skill of its own folder (a plain root's case)."""
    return result is not None and len(result) == 1 and os.fspath(result[0].base_dir) == skill_dir


def _record_reused(
    root: _Root, files: tuple[str, ...], identities: tuple[object, ...], folder: FolderState
) -> None:
    """What a reused record stands for, for the footprint: a plain root as such, a
    nested one as the paths the scan would have read."""
    if root.where["root_dir"] == root.base_dir:
        footprint.root(root.base_dir, folder, files, identities)
        return
    touch(root.base_dir)
    for md in files:
        touch(md)
