"""Reading one skill folder or file into a :class:`~skillbook.model.Skill`.

Input: a folder (or, in mixed/legacy mode, a standalone ``.md`` file) and the real
path it must stay inside. Output: the skill, or ``None`` with a diagnostic saying
why (spec §2.1: ``loadSkillsFromDirSafe`` and its safe reader). Parsed files and
built skills are reused from the caller's
:class:`~skillbook.pipeline.cache.parse_cache.ParseCache` while the file's identity
(device, inode, size, mtime, ctime) is unchanged. Which folders to read is
the root scanner's business (:mod:`skillbook.pipeline.discovery.root_scanner`), not this module's.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from skillbook.base import fs as _fs
from skillbook.base import listing as _listing
from skillbook.base import verified_read as _verified_read
from skillbook.base.js import js_trim
from skillbook.base.known_path import known_parent, known_path
from skillbook.config.limits import Limits
from skillbook.config.profile import DEFAULT_PROFILE, Profile
from skillbook.diagnostics import Diagnostic, error, warning
from skillbook.model import ParsedSkillFile, Skill
from skillbook.pipeline.cache.realpath_memo import RealpathMemo
from skillbook.pipeline.cache.scan_reads import checked as checked_read
from skillbook.pipeline.cache.scan_reads import touch
from skillbook.pipeline.parse.skill_file import parse_skill_text

if TYPE_CHECKING:
    from skillbook.base.pinned_root import PinnedRoot
    from skillbook.pipeline.cache.parse_cache import ParseCache

SKILL_FILE = "SKILL.md"


class SkillReader:
    """Safe reads, parsing and skill building; diagnostics go to :attr:`diagnostics`.

    ``memo`` caches real paths for the discovery it serves; the root scanner that
    owns this reader shares it, so a folder is resolved once.
    """

    def __init__(
        self, *, limits: Limits, cache: ParseCache | None, profile: Profile = DEFAULT_PROFILE
    ) -> None:
        self.limits = limits
        self.cache = cache
        #: Which OpenClaw release's file rules apply (frontmatter, children of invalid files).
        self.profile = profile
        # Parsed files depend on the profile's frontmatter rules: one cache key space each.
        self._key_suffix = "" if profile is DEFAULT_PROFILE else f"\0{profile}"
        self.memo = RealpathMemo()
        self.diagnostics: list[Diagnostic] = []
        #: The root being scanned, held open by the scanner (see skillbook.base.pinned_root).
        self.pinned: PinnedRoot | None = None

    # -- diagnostics -------------------------------------------------------------------

    def add(
        self,
        make: Callable[..., Diagnostic],
        code: str,
        message: str,
        path: str | Path,
        skill: str | None = None,
    ) -> None:
        self.diagnostics.append(make(code, message, path=Path(path), skill=skill))

    # -- loadSkillsFromDirSafe -------------------------------------------------------

    def load_dir(
        self, directory: str, label: str, known: os.stat_result | None = None
    ) -> list[Skill]:
        """``loadSkillsFromDirSafe``: the folder as a skill, else its direct children."""
        # The scanner passes absolute paths: the POSIX test in short (hot path).
        absolute = directory[:1] == "/" if os.sep == "/" else os.path.isabs(directory)
        root = directory if absolute else _fs.abspath(directory)
        root_real = self.memo.realpath(root)
        if root_real is None:
            return []
        skill = self._load_single(
            root, root_real, root_real, label, report_missing=True, known=known
        )
        if skill is not None:
            return [skill]
        if not self.profile.discovery.invalid_falls_back_to_children:
            return []
        out: list[Skill] = []
        touch(root)  # its listing: the children tried in its place
        for child in _listing.list_real_subdirs_locale(root):
            child_real = os.path.join(root_real, os.path.basename(child))
            self.memo.note(child, child_real)
            found = self._load_single(child, root_real, child_real, label, report_missing=False)
            if found is not None:
                out.append(found)
        return out

    def load_single(self, skill_dir: str, dir_real: str, label: str) -> Skill | None:
        """``loadSingleSkillDirectory`` (2026.9): the folder's SKILL.md, inside its real path."""
        return self._load_single(skill_dir, dir_real, dir_real, label, report_missing=True)

    def _load_single(
        self,
        skill_dir: str,
        root_real: str,
        dir_real: str,
        label: str,
        *,
        report_missing: bool,
        known: os.stat_result | None = None,
    ) -> Skill | None:
        file_path = _fs.join(skill_dir, SKILL_FILE)
        if (
            self.profile.discovery.reject_hardlinks
            and label != "openclaw-bundled"
            and self._hardlinked(file_path)
        ):
            return None
        got = self._read_parsed(
            file_path, root_real, dir_real, skill=None, report_missing=report_missing, known=known
        )
        if got is None:
            return None
        parsed, identity, path = got
        cache = self.cache
        if cache is None:
            return self._build(parsed, file_path, skill_dir, dir_real, label, path)
        # The built skill and its diagnostics depend only on these and the file identity.
        key = (file_path + self._key_suffix, skill_dir, label, dir_real)
        built = cache.lookup_built(key, identity)
        if built is not None:
            cached_skill: Skill | None = built[0]
            self.diagnostics.extend(built[1])
            return cached_skill
        start = len(self.diagnostics)
        skill = self._build(parsed, file_path, skill_dir, dir_real, label, path)
        cache.store_built(key, identity, (skill, tuple(self.diagnostics[start:])))
        return skill

    def _hardlinked(self, file_path: str) -> bool:
        """2026.9 refuses a SKILL.md that is also reachable under another name."""
        touch(file_path)
        try:
            links = os.stat(file_path).st_nlink
        except OSError:
            return False  # the read reports what is wrong with it
        if links <= 1:
            return False
        self.add(
            error,
            "discover.hardlink",
            f"{file_path} has {links} hard links; OpenClaw 2026.9 refuses hard-linked "
            "SKILL.md files outside bundled skills (copy the file instead)",
            file_path,
        )
        return True

    def _build(
        self,
        parsed: ParsedSkillFile,
        file_path: str,
        skill_dir: str,
        dir_real: str,
        label: str,
        path: Path | None = None,
    ) -> Skill | None:
        fm = parsed.frontmatter
        name = js_trim(fm.get("name") or "") or js_trim(os.path.basename(skill_dir))
        description = js_trim(fm.get("description") or "")
        if parsed.diagnostics:
            self._pass_parse_diags(parsed, file_path, name or None, standalone=False)
        if parsed.invalid:
            return None  # the parse diagnostic (parse.frontmatter-invalid) says why
        if not name or not description:
            if not any(d.code == "parse.missing-description" for d in parsed.diagnostics):
                self.add(
                    error,
                    "parse.missing-description",
                    f"{file_path} has no description; the skill is not loaded",
                    file_path,
                    skill=name or None,
                )
            return None
        # `file_path` is `skill_dir` joined with one name, so Path(skill_dir) is its
        # parent; with no symlinks the real folder is the same object.
        file_obj = path if path is not None else known_path(file_path)
        base_dir = known_parent(file_obj, skill_dir) if skill_dir else Path(skill_dir)
        return Skill(
            name=name,
            description=description,
            file_path=file_obj,
            base_dir=base_dir,
            source=label,
            parsed=parsed,
            real_dir=base_dir if dir_real == skill_dir else known_path(dir_real),
        )

    def _read_parsed(
        self,
        file_path: str,
        root_real: str,
        dir_real: str | None,
        *,
        skill: str | None,
        report_missing: bool = True,
        known: os.stat_result | None = None,
    ) -> tuple[ParsedSkillFile, tuple[int, ...], Path | None] | None:
        """The parsed file, its identity, and the Path made for parsing it (None on a hit)."""
        max_bytes = self.limits.max_skill_file_bytes
        checked = _verified_read.verify_file(
            file_path,
            root_real=root_real,
            max_bytes=max_bytes,
            realpath=self.memo.realpath,
            dir_real=dir_real,
            known=known,
        )
        checked_read(file_path, checked)
        if (
            isinstance(checked, _verified_read.ReadFailure)
            and checked.kind == _verified_read.SYMLINK
            and self.profile.discovery.symlinked_skill_md
            and checked.real is not None
            and dir_real is not None
            and _fs.is_path_inside(dir_real, checked.real)
        ):
            # 2026.9 reads a linked SKILL.md whose target stays inside the skill folder.
            target = checked.real
            checked = _verified_read.verify_file(
                target, root_real=root_real, max_bytes=max_bytes, realpath=self.memo.realpath
            )
            checked_read(target, checked)
        if isinstance(checked, _verified_read.ReadFailure):
            if checked.kind != _verified_read.MISSING or report_missing:
                self.report_read_failure(checked, file_path, skill)
            return None
        cache = self.cache
        key = file_path + self._key_suffix
        if cache is not None:
            hit = cache.lookup(key, checked.identity)
            if isinstance(hit, ParsedSkillFile):
                return hit, checked.identity, None
        pinned = self.pinned
        got = _verified_read.read_verified(
            checked, max_bytes=max_bytes, open_below=pinned.open_file if pinned else None
        )
        if isinstance(got, _verified_read.ReadFailure):
            self.report_read_failure(got, file_path, skill)
            return None
        data, identity = got
        path = known_path(file_path)
        parsed = parse_skill_text(data, path=path, rules=self.profile.frontmatter)
        if cache is not None:
            cache.store(key, identity, parsed)
        return parsed, identity, path

    def _pass_parse_diags(
        self, parsed: ParsedSkillFile, file_path: str, skill: str | None, *, standalone: bool
    ) -> None:
        for d in parsed.diagnostics:
            if standalone and d.code in {"parse.no-frontmatter", "parse.missing-description"}:
                continue
            if d.path is None or d.skill is None:
                d = Diagnostic(
                    d.code,
                    d.severity,
                    d.message,
                    d.path or Path(file_path),
                    d.line,
                    d.skill or skill,
                )
            self.diagnostics.append(d)

    def report_read_failure(
        self, failure: _verified_read.ReadFailure, file_path: str, skill: str | None
    ) -> None:
        if failure.kind == _verified_read.TOO_LARGE and failure.size is not None:
            self.report_too_large(file_path, failure.size, root_level=False)
            return
        code, severity, message = _verified_read.describe_failure(failure, file_path)
        make = {"error": error, "warning": warning}.get(severity, error)
        self.add(make, code, message, file_path, skill)

    def report_too_large(self, file_path: str, size: int, *, root_level: bool) -> None:
        lim = self.limits.max_skill_file_bytes
        what = (
            "Skipping skills root due to oversized SKILL.md"
            if root_level
            else ("Skipping skill due to oversized SKILL.md")
        )
        self.add(
            error,
            "discover.file-too-large",
            f"{what}: {size} bytes, over the limit of {lim} bytes; raise "
            "`skills.limits.maxSkillFileBytes` to load it",
            file_path,
        )

    def load_standalone(self, path: str, base_dir: str, base_real: str, label: str) -> Skill | None:
        """A standalone Markdown file of a root (mixed/legacy mode)."""
        got = self._read_parsed(path, base_real, base_real, skill=None)
        if got is None:
            return None
        parsed = got[0]
        name, desc = standalone_fields(parsed, os.path.splitext(os.path.basename(path))[0])
        self._pass_parse_diags(parsed, path, name, standalone=bool(desc))
        if not desc:
            return None
        real = self.memo.realpath(path)
        return Skill(
            name=name,
            description=desc,
            file_path=Path(path),
            base_dir=Path(base_dir),
            source=label,
            parsed=parsed,
            real_dir=Path(real) if real else None,
        )


# -- text helpers ------------------------------------------------------------------------

#: Standalone ``*.md`` files that are project documents, not skills (compared by
#: lower-cased stem). ``SKILL.md`` itself is the root-skill case.
STANDALONE_SKIPPED_STEMS = frozenset(
    {
        "readme",
        "license",
        "licence",
        "changelog",
        "contributing",
        "code_of_conduct",
        "security",
        "notice",
        "agents",
        "claude",
        "skill",
    }
)
STANDALONE_DESCRIPTION_MAX_CHARS = 180
LIST_PREVIEW = 20


def limit_list(names: list[str]) -> str:
    """``a, b, c`` — at most :data:`LIST_PREVIEW` names, then ``… and N more``."""
    shown = ", ".join(names[:LIST_PREVIEW])
    more = len(names) - LIST_PREVIEW
    return f"{shown} … and {more} more" if more > 0 else shown


def is_standalone_candidate(filename: str) -> bool:
    stem, ext = os.path.splitext(filename)
    return (
        ext.lower() == ".md"
        and not filename.startswith(".")
        and stem.lower() not in STANDALONE_SKIPPED_STEMS
    )


def standalone_fields(parsed: ParsedSkillFile, stem: str) -> tuple[str, str]:
    """Name and description of a standalone Markdown skill.

    Name: frontmatter ``name``, else the first ``# `` heading, else the file stem.
    Description: frontmatter ``description``, else the first non-empty line that is
    not a heading, cut to :data:`STANDALONE_DESCRIPTION_MAX_CHARS` characters.
    """
    fm = parsed.frontmatter
    name = js_trim(fm.get("name") or "")
    description = js_trim(fm.get("description") or "")
    for line in parsed.body.splitlines():
        text = js_trim(line)
        if not name and text.startswith("# "):
            name = js_trim(text[2:])
        elif not description and text and not text.startswith("#"):
            description = text[:STANDALONE_DESCRIPTION_MAX_CHARS].rstrip()
        if name and description:
            break
    return name or js_trim(stem), description
