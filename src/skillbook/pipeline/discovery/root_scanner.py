"""The per-root loading algorithm behind the filesystem sources of discovery.

Input: one root folder and its source label. Output: the skills it yields, in
OpenClaw's order (spec §3.3 ``loadSkills``), plus diagnostics. The scanner decides
*which* folders are skills: its loop here lists a root, applies the limits, reads each
candidate and reuses a remembered root; containment is
:mod:`skillbook.pipeline.discovery.root_containment`'s and nested, grouped, hidden and standalone
layouts :mod:`skillbook.pipeline.discovery.root_layouts`'. Reading one folder into a skill (§2.1
``loadSkillsFromDirSafe``) is the job of the
:class:`~skillbook.pipeline.discovery.skill_reader.SkillReader` it holds. One scanner serves one
discovery: its real-path memo must not outlive the tree's state.
"""

from __future__ import annotations

import itertools
import os
import stat
import time
from dataclasses import replace

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
from skillbook.pipeline.discovery.root_layouts import MAX_LOADED_KEY as _MAX_KEY
from skillbook.pipeline.discovery.root_layouts import NESTED_ROOT_NAME, RootLayouts
from skillbook.pipeline.discovery.skill_reader import SKILL_FILE, SkillReader, limit_list

#: A remembered root with at most this many changed SKILL.md files is patched, not rescanned.
MAX_PATCHED = 64
_CANDIDATES_KEY = "skills.limits.maxCandidatesPerRoot"
#: From this many candidates a root is held open while they are read (it costs one
#: file's check to open it).
_PIN_FROM = 4


class RootScanner(RootLayouts):
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
        #: Real paths that symlinked skills may point into, beside their root.
        self.allowed = allowed
        self.grouped = grouped
        self.standalone = standalone
        #: The compat profile's discovery rules (2026.9 scans roots recursively).
        self.rules = rules
        # Findings go where the reader's go, so one root's diagnostics stay in order.
        self._diag = reader.add
        #: What a remembered root's result also depends on (see _root_memo).
        self._options = (
            self.limits,
            grouped,
            standalone,
            allowed,
            rules,
            reader.profile,
        )

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
        label = source.value
        root_dir = _fs.abspath(path)
        touch(root_dir)
        if not os.path.isdir(root_dir):
            footprint.absent(root_dir)
            if source is Source.EXTRA:
                what = "is not a folder" if os.path.lexists(root_dir) else "does not exist"
                if _fs.is_symlink_loop(root_dir):
                    what = "is a symbolic link that loops back to itself"
                self._diag(
                    warning,
                    "discover.root-missing",
                    f"the skills folder {root_dir} from `skills.load.extraDirs` {what}",
                    root_dir,
                )
            return []
        root_real = self.memo.realpath(root_dir) or root_dir
        if self.rules.slice_by_candidates:
            from skillbook.pipeline.discovery.recursive_scan import load_root

            return load_root(self, source, root_dir, root_real)
        base_dir = self._nested_root(root_dir)
        base_real = self.contained(base_dir, source=label, root_dir=root_dir, root_real=root_real)
        if base_real is None:
            return []
        where = {"source": label, "root_dir": root_dir, "root_real": base_real}
        root_md = os.path.join(base_dir, SKILL_FILE)
        if _fs.has_file(root_md):
            real_md = self.contained(root_md, **where)
            if real_md is None:
                return []
            touch(real_md)
            try:
                size = os.stat(real_md).st_size
            except OSError as exc:
                self._diag(error, "discover.unreadable", f"cannot stat SKILL.md: {exc}", root_md)
                return []
            if size > self.limits.max_skill_file_bytes:
                self.reader.report_too_large(root_md, size, root_level=True)
                return []
            return self._filter_inside(self.reader.load_dir(base_dir, label), **where)
        touch(root_md)
        if os.path.lexists(root_md):
            self.reader.report_read_failure(
                _verified_read.ReadFailure(_verified_read.SYMLINK), root_md, None
            )

        cache = self.reader.cache
        memo_key = (label, base_dir, base_real, self._options)
        record = cache.roots.get((label, base_dir)) if cache is not None else None
        folder = folder_state(base_dir) if cache is not None else None
        scanned_at = time.time_ns()
        hint = cache.hint if cache is not None else None
        if (
            record is not None
            and hint is not None
            and hint.covers(base_dir)
            and hint.blind.isdisjoint(record.listing.dirs)
        ):
            # A watcher listed every change in this root: only those files are looked at.
            changed = record.hinted(memo_key, base_dir, hint.below(base_dir))
            slot = (label, base_dir)
            reused = self._reuse(record, changed, slot, where, record.folder, record.scanned_at)
            if reused is not None:
                return reused
        if record is not None and record.listing_unchanged(memo_key, folder):
            changed = record.changed(memo_key, None)
            reused = self._reuse(record, changed, (label, base_dir), where, folder, scanned_at)
            if reused is not None:
                return reused
        listing = _listing.list_child_dirs(base_dir)
        if listing.error is not None:
            self._diag(error, "discover.unreadable", f"cannot list: {listing.error}", base_dir)
            return []
        self._report_listing(base_dir, listing)
        if record is not None:
            changed = record.changed(memo_key, listing)
            reused = self._reuse(record, changed, (label, base_dir), where, folder, scanned_at)
            if reused is not None:
                return reused
        per_file: list[tuple[Diagnostic, ...]] = []
        first_diag = len(self.reader.diagnostics)
        # Plain roots (see _root_memo) are remembered whole: (SKILL.md, lstat) per skill.
        seen: list[tuple[str, os.stat_result]] | None = (
            []
            if cache is not None
            and not (listing.linked or listing.hidden_dirs or listing.broken_links)
            and not listing.looped_links
            and NESTED_ROOT_NAME not in listing.dirs
            and not (self.standalone and listing.md_files)
            else None
        )
        lim = self.limits
        max_loaded = lim.max_skills_loaded_per_source
        ordered = js_sorted(listing.dirs)
        candidates = ordered[: max(0, max_loaded)]
        if len(ordered) > len(candidates):
            seen = None
            over = len(ordered) > lim.max_candidates_per_root
            note = (
                f" (also over `{_CANDIDATES_KEY}` = {lim.max_candidates_per_root})" if over else ""
            )
            self._diag(
                warning,
                "discover.over-limit",
                f"{len(ordered)} candidate folders, over `{_MAX_KEY}` = {max_loaded}{note}; "
                f"not scanned: {limit_list(ordered[len(candidates) :])}",
                base_dir,
            )

        loaded: list[Skill] = []
        groups: list[tuple[str, list[str]]] = []
        # Many skills: their files are opened below the root held open (one check for
        # the root instead of one per file); see skillbook.base.pinned_root.
        pinned = PinnedRoot.open(base_real) if len(candidates) >= _PIN_FROM else None
        self.reader.pinned = pinned
        # _fs.join(base_dir, name) and _fs.join(base_real, name), their prefix made once.
        dir_prefix = _fs.join(base_dir, "")
        real_prefix = _fs.join(base_real, "")
        linked = listing.linked
        for index, name in enumerate(candidates):
            skill_dir = dir_prefix + name
            if name in linked:
                real = self.memo.realpath(skill_dir)
                inside = real is not None and self._inside(base_real, real)
            else:
                # A real parent plus a non-link entry: canonical (no syscall), and inside.
                real = real_prefix + name
                self.memo.note(skill_dir, real)
                inside = True
            if not inside and self.contained(skill_dir, real=real, **where) is None:
                continue
            before = len(self.reader.diagnostics)
            result = self._load_candidate(skill_dir, label, where, seen)
            if seen is not None:
                per_file.append(tuple(self.reader.diagnostics[before:]))
            if seen is not None and (
                result is None
                or len(result) != 1
                or os.fspath(result[0].base_dir) != skill_dir
                or len(seen) != len(loaded) + 1
            ):
                seen = None
            if result is None:
                leaves = self._group_leaves(skill_dir)
                if leaves:
                    groups.append((skill_dir, leaves))
                else:
                    # e.g. a repository root whose skills/ holds only skills/.curated/…
                    self._report_hidden(skill_dir, _listing.list_child_dirs(skill_dir))
                continue
            loaded.extend(result)
            if len(loaded) >= max_loaded:
                rest = candidates[index + 1 :]
                if rest:
                    seen = None
                    self._diag(
                        warning,
                        "discover.over-limit",
                        f"{len(loaded)} skills loaded, the `{_MAX_KEY}` limit of {max_loaded}; "
                        f"folders not scanned: {limit_list(rest)}",
                        base_dir,
                    )
                break

        if pinned is not None:
            self.reader.pinned = None
            pinned.close()
        self._groups(groups, loaded, label, where)
        if self.standalone:
            self._standalone(base_dir, base_real, listing.md_files, loaded, label)
        if (
            seen is not None
            and cache is not None
            and not groups
            and len(seen) == len(loaded)
            and sum(map(len, per_file)) == len(self.reader.diagnostics) - first_diag
        ):
            record = cache.roots[label, base_dir] = RootRecord(
                memo_key,
                listing,
                tuple(path for path, _ in seen),
                tuple(file_identity(info) for _, info in seen),
                tuple(loaded),
                tuple(per_file),
                folder,
                scanned_at,
            )
            if base_dir == root_dir:
                footprint.root(base_dir, folder, record.files, record.identities)
        elif cache is not None:
            cache.roots.pop((label, base_dir), None)
        if len(loaded) > max_loaded:
            ranked = sorted(loaded, key=lambda s: locale_compare_key(s.name))
            dropped = ranked[max(0, max_loaded) :]
            self._diag(
                warning,
                "discover.over-limit",
                f"{len(loaded)} skills loaded, over `{_MAX_KEY}` = {max_loaded}; kept the first "
                f"by name, not loaded: {limit_list([s.name for s in dropped])}",
                base_dir,
            )
            return ranked[: max(0, max_loaded)]
        return loaded

    def _reuse(
        self,
        record: RootRecord,
        changed: list[int] | None,
        slot: tuple[str, str],
        where: dict[str, str],
        folder: FolderState,
        scanned_at: int,
    ) -> list[Skill] | None:
        """A remembered root's result, with the few changed files loaded again (they must
        still load as one skill each); None when the root has to be scanned in full.
        Files taken from the record count as parse-cache hits."""
        cache = self.reader.cache
        if changed is None or cache is None or len(changed) > MAX_PATCHED:
            return None
        diags = self.reader.diagnostics
        start = len(diags)
        skills, identities = list(record.skills), list(record.identities)
        per_file = list(record.diagnostics)
        label = slot[0]
        for index in changed:
            md = record.files[index]
            skill_dir = os.path.dirname(md)
            seen: list[tuple[str, os.stat_result]] = []
            before = len(diags)
            result = self._load_candidate(skill_dir, label, where, seen)
            if (
                result is None
                or len(result) != 1
                or os.fspath(result[0].base_dir) != skill_dir
                or len(seen) != 1
            ):
                del diags[start:]  # not plain any more: the full scan reports it
                return None
            skills[index], identities[index] = result[0], file_identity(seen[0][1])
            per_file[index] = tuple(diags[before:])
        del diags[start:]
        diags.extend(itertools.chain.from_iterable(per_file))
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
        if where["root_dir"] == slot[1]:
            footprint.root(slot[1], folder, record.files, tuple(identities))
        else:  # a nested root: what the record stands for, for the scan's footprint
            touch(slot[1])
            for md in record.files:
                touch(md)
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
            self._check_case(skill_dir)
            return None
        except OSError as exc:
            self._diag(error, "discover.unreadable", f"cannot stat SKILL.md: {exc}", md)
            return []
        known: os.stat_result | None = None
        if stat.S_ISLNK(md_stat.st_mode):
            real_md = self.contained(md, **where) if _fs.has_file(md) else None
            if real_md is None:
                if not _fs.has_file(md):
                    self.reader.report_read_failure(
                        _verified_read.ReadFailure(_verified_read.SYMLINK), md, None
                    )
                return []
            touch(real_md)
            try:
                size = os.stat(real_md).st_size
            except OSError as exc:
                self._diag(error, "discover.unreadable", f"cannot stat SKILL.md: {exc}", md)
                return []
        else:
            # Not a link: its real path is inside the (already checked) real skill folder.
            size, known = md_stat.st_size, md_stat
        if size > self.limits.max_skill_file_bytes:
            self.reader.report_too_large(md, size, root_level=False)
            return []
        if seen is not None and known is not None:
            seen.append((md, known))
        return self._filter_inside(self.reader.load_dir(skill_dir, label, known), **where)
