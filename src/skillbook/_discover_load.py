"""The per-source loading algorithm behind :func:`skillbook.discover.discover`.

Input: one root folder and its source label. Output: the skills it yields, in
OpenClaw's order (spec §3.3 ``loadSkills`` with §2.1 ``loadSkillsFromDirSafe``), plus
diagnostics collected on the :class:`Loader`. One ``Loader`` serves one discovery.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from skillbook import _fs
from skillbook._js import js_sorted, locale_compare_key
from skillbook.diagnostics import Diagnostic, error, info, warning
from skillbook.manifest import js_trim
from skillbook.model import ParsedSkillFile, Skill, Source

if TYPE_CHECKING:
    from skillbook.discover import Limits, ParseCache

SKILL_FILE = "SKILL.md"
NESTED_ROOT_NAME = "skills"
_MAX_KEY = "skills.limits.maxSkillsLoadedPerSource"
_CANDIDATES_KEY = "skills.limits.maxCandidatesPerRoot"


class Loader:
    """Loads roots one by one; collects diagnostics in :attr:`diagnostics`."""

    def __init__(
        self,
        *,
        limits: Limits,
        allow_symlink_targets: Iterable[Path],
        grouped: bool,
        standalone: bool,
        cache: ParseCache | None,
    ) -> None:
        self.limits = limits
        self.grouped = grouped
        self.standalone = standalone
        self.cache = cache
        self.memo = _fs.RealpathMemo()
        self.diagnostics: list[Diagnostic] = []
        allowed: list[str] = []
        for target in allow_symlink_targets:
            real = _fs.try_realpath(_fs.abspath(target))
            if real is None:
                self._diag(
                    warning,
                    "discover.root-missing",
                    f"`skills.load.allowSymlinkTargets` entry {target} does not exist",
                    Path(_fs.abspath(target)),
                )
            else:
                allowed.append(real)
        self.allowed = tuple(allowed)

    # -- diagnostics -------------------------------------------------------------------

    def _diag(
        self,
        make: Callable[..., Diagnostic],
        code: str,
        message: str,
        path: str | Path,
        skill: str | None = None,
    ) -> None:
        self.diagnostics.append(make(code, message, path=Path(path), skill=skill))

    def _escape(self, source: str, root_dir: str, root_real: str, cand: str, real: str) -> None:
        link = _fs.is_symlink(cand)
        bundled = source == Source.BUNDLED.value
        stray = " hint=likely-stray-local-symlink-or-checkout-mutation"
        if link:
            hint = "reason=bundled-symlink-escape" + stray if bundled else "reason=symlink-escape"
        else:
            hint = "reason=bundled-root-escape" + stray if bundled else "reason=path-escape"
        resolved = "" if _fs.abspath(root_dir) == root_real else f" rootResolved={root_real}"
        advice = (
            "; to allow it, add its target folder (or a parent) to "
            "`skills.load.allowSymlinkTargets`"
            if link
            else ""
        )
        self._diag(
            warning,
            "discover.symlink-escape" if link else "discover.path-escape",
            "Skipping escaped skill path outside its configured root: "
            f"source={source} root={root_dir}{resolved} {hint} requested={cand} "
            f"resolved={real}{advice}",
            cand,
        )

    # -- containment -----------------------------------------------------------------

    def _inside(self, root_real: str, real: str) -> bool:
        return _fs.is_path_inside(root_real, real) or any(
            _fs.is_path_inside(a, real) for a in self.allowed
        )

    def contained(
        self, cand: str, *, source: str, root_dir: str, root_real: str, real: str | None = None
    ) -> str | None:
        """``resolveContainedSkillPath``: the real path if inside the root, else None."""
        if real is None:
            real = self.memo.realpath(cand)
        if real is None:
            return None
        if self._inside(root_real, real):
            return real
        self._escape(source, root_dir, root_real, cand, real)
        return None

    def _filter_inside(
        self, skills: list[Skill], *, source: str, root_dir: str, root_real: str
    ) -> list[Skill]:
        """``filterLoadedSkillsInsideRoot``: each folder (and so its SKILL.md) inside the root.

        ``real_dir`` is the folder's real path, and its SKILL.md passed the reader's
        no-symlink check, so the file's real path is inside whenever the folder's is.
        """
        kept = []
        for skill in skills:
            real = os.fspath(skill.real_dir) if skill.real_dir is not None else None
            base = os.fspath(skill.base_dir)
            if self.contained(base, source=source, root_dir=root_dir, root_real=root_real, real=real):
                kept.append(skill)
        return kept

    # -- one root --------------------------------------------------------------------

    def load_root(self, source: Source, path: str) -> list[Skill]:
        label = source.value
        root_dir = _fs.abspath(path)
        if not os.path.isdir(root_dir):
            if source is Source.EXTRA:
                what = "is not a folder" if os.path.lexists(root_dir) else "does not exist"
                self._diag(
                    warning,
                    "discover.root-missing",
                    f"the skills folder {root_dir} from `skills.load.extraDirs` {what}",
                    root_dir,
                )
            return []
        root_real = self.memo.realpath(root_dir) or root_dir
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
            try:
                size = os.stat(real_md).st_size
            except OSError as exc:
                self._diag(error, "discover.unreadable", f"cannot stat SKILL.md: {exc}", root_md)
                return []
            if size > self.limits.max_skill_file_bytes:
                self._too_large(root_md, size, root_level=True)
                return []
            return self._filter_inside(self._load_dir_safe(base_dir, label), **where)
        if os.path.lexists(root_md):
            self._read_failure(_fs.ReadFailure(_fs.SYMLINK), root_md, None)

        listing = _fs.list_child_dirs(base_dir)
        if listing.error is not None:
            self._diag(error, "discover.unreadable", f"cannot list: {listing.error}", base_dir)
            return []
        self._report_listing(base_dir, listing)
        lim = self.limits
        max_loaded = lim.max_skills_loaded_per_source
        ordered = js_sorted(listing.dirs)
        candidates = ordered[: max(0, max_loaded)]
        if len(ordered) > len(candidates):
            over = len(ordered) > lim.max_candidates_per_root
            note = f" (also over `{_CANDIDATES_KEY}` = {lim.max_candidates_per_root})" if over else ""
            self._diag(
                warning,
                "discover.over-limit",
                f"{len(ordered)} candidate folders, over `{_MAX_KEY}` = {max_loaded}{note}; "
                f"not scanned: {limit_list(ordered[len(candidates) :])}",
                base_dir,
            )

        loaded: list[Skill] = []
        groups: list[tuple[str, list[str]]] = []
        for index, name in enumerate(candidates):
            skill_dir = _fs.join(base_dir, name)
            if name in listing.linked:
                real = self.memo.realpath(skill_dir)
            else:
                # A real parent plus a non-link entry is already canonical: no syscall.
                real = _fs.join(base_real, name)
                self.memo.note(skill_dir, real)
            if self.contained(skill_dir, real=real, **where) is None:
                continue
            result = self._load_candidate(skill_dir, label, where)
            if result is None:
                leaves = self._group_leaves(skill_dir)
                if leaves:
                    groups.append((skill_dir, leaves))
                continue
            loaded.extend(result)
            if len(loaded) >= max_loaded:
                rest = candidates[index + 1 :]
                if rest:
                    self._diag(
                        warning,
                        "discover.over-limit",
                        f"{len(loaded)} skills loaded, the `{_MAX_KEY}` limit of {max_loaded}; "
                        f"folders not scanned: {limit_list(rest)}",
                        base_dir,
                    )
                break

        self._groups(groups, loaded, label, where)
        if self.standalone:
            self._standalone(base_dir, base_real, listing.md_files, loaded, label)
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

    def _nested_root(self, root_dir: str) -> str:
        """``resolveNestedSkillsRoot``: use ``<root>/skills`` if a child of it is a skill."""
        nested = os.path.join(root_dir, NESTED_ROOT_NAME)
        if not os.path.isdir(nested):
            return root_dir
        scan = max(0, self.limits.max_candidates_per_root)
        for name in _fs.list_child_dirs(nested).dirs[:scan]:
            if _fs.has_file(os.path.join(nested, name, SKILL_FILE)):
                break
        else:
            return root_dir
        hidden = [
            n
            for n in _fs.list_child_dirs(root_dir).dirs
            if n != NESTED_ROOT_NAME and _fs.has_file(os.path.join(root_dir, n, SKILL_FILE))
        ]
        if hidden:
            self._diag(
                warning,
                "discover.nested-root",
                f"Detected nested skills root at {nested}; it is used instead of {root_dir}, "
                f"so these skill folders directly in {root_dir} are not loaded: "
                f"{limit_list(hidden)}",
                nested,
            )
        else:
            self._diag(info, "discover.nested-root", f"Detected nested skills root at {nested}", nested)
        return nested

    def _report_listing(self, base_dir: str, listing: _fs.Listing) -> None:
        for name in listing.broken_links:
            self._diag(
                warning,
                "discover.unreadable",
                f"{name} is a broken symbolic link; skipped",
                os.path.join(base_dir, name),
            )
        for name in listing.hidden_dirs:
            hidden_dir = os.path.join(base_dir, name)
            if _fs.has_file(os.path.join(hidden_dir, SKILL_FILE)):
                found = [name]
            else:
                found = [
                    f"{name}/{leaf}"
                    for leaf in js_sorted(_fs.list_child_dirs(hidden_dir).dirs)
                    if _fs.has_file(os.path.join(hidden_dir, leaf, SKILL_FILE))
                ]
            if found:
                self._diag(
                    warning,
                    "discover.hidden-dir",
                    f"skill folders under the hidden folder {name}/ are not discovered "
                    f"({limit_list(found)}); move them out, or add {hidden_dir} to "
                    "`skills.load.extraDirs`",
                    hidden_dir,
                )

    def _load_candidate(
        self, skill_dir: str, label: str, where: dict[str, str]
    ) -> list[Skill] | None:
        """One child folder; None when it has no SKILL.md at all."""
        md = _fs.join(skill_dir, SKILL_FILE)
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
                    self._read_failure(_fs.ReadFailure(_fs.SYMLINK), md, None)
                return []
            try:
                size = os.stat(real_md).st_size
            except OSError as exc:
                self._diag(error, "discover.unreadable", f"cannot stat SKILL.md: {exc}", md)
                return []
        else:
            # Not a link: its real path is inside the (already checked) real skill folder.
            size, known = md_stat.st_size, md_stat
        if size > self.limits.max_skill_file_bytes:
            self._too_large(md, size, root_level=False)
            return []
        return self._filter_inside(self._load_dir_safe(skill_dir, label, known), **where)

    def _check_case(self, skill_dir: str) -> None:
        try:
            names = os.listdir(skill_dir)
        except OSError:
            return
        for name in names:
            if name.lower() == "skill.md" and name != SKILL_FILE:
                self._diag(
                    warning,
                    "discover.skill-md-case",
                    f"found {name}, but only a file named exactly SKILL.md is a skill; rename it",
                    os.path.join(skill_dir, name),
                )

    def _group_leaves(self, group_dir: str) -> list[str]:
        return [
            leaf
            for leaf in js_sorted(_fs.list_child_dirs(group_dir).dirs)
            if _fs.has_file(os.path.join(group_dir, leaf, SKILL_FILE))
        ]

    def _groups(
        self,
        groups: list[tuple[str, list[str]]],
        loaded: list[Skill],
        label: str,
        where: dict[str, str],
    ) -> None:
        max_loaded = self.limits.max_skills_loaded_per_source
        for group_dir, leaves in groups:
            group = os.path.basename(group_dir)
            if not self.grouped:
                self._diag(
                    warning,
                    "discover.grouped-layout",
                    f"{group}/ has no SKILL.md but holds skill folders one level down "
                    f"({limit_list([f'{group}/{leaf}' for leaf in leaves])}); they are not "
                    "loaded: set `skills.load.grouped: true` to load them",
                    group_dir,
                )
                continue
            for index, leaf in enumerate(leaves):
                if len(loaded) >= max_loaded:
                    self._diag(
                        warning,
                        "discover.over-limit",
                        f"the `{_MAX_KEY}` limit of {max_loaded} is reached; grouped skill "
                        f"folders not loaded: {limit_list(leaves[index:])}",
                        group_dir,
                    )
                    return
                leaf_dir = os.path.join(group_dir, leaf)
                if self.contained(leaf_dir, **where) is None:
                    continue
                loaded.extend(self._load_candidate(leaf_dir, label, where) or [])

    def _standalone(
        self, base_dir: str, base_real: str, files: Iterable[str], loaded: list[Skill], label: str
    ) -> None:
        max_loaded = self.limits.max_skills_loaded_per_source
        for name in js_sorted(files):
            if not is_standalone_candidate(name) or len(loaded) >= max_loaded:
                continue
            path = os.path.join(base_dir, name)
            got = self._read_parsed(path, base_real, base_real, skill=None)
            if got is None:
                continue
            parsed = got[0]
            name_, desc = standalone_fields(parsed, os.path.splitext(name)[0])
            self._pass_parse_diags(parsed, path, name_, standalone=bool(desc))
            if not desc:
                continue
            self._diag(
                info,
                "discover.standalone-md",
                f"loaded the standalone Markdown file {name} as skill {name_!r} ({label})",
                path,
                skill=name_,
            )
            real = self.memo.realpath(path)
            loaded.append(
                Skill(
                    name=name_,
                    description=desc,
                    file_path=Path(path),
                    base_dir=Path(base_dir),
                    source=label,
                    parsed=parsed,
                    real_dir=Path(real) if real else None,
                )
            )

    # -- loadSkillsFromDirSafe -------------------------------------------------------

    def _load_dir_safe(
        self, directory: str, label: str, known: os.stat_result | None = None
    ) -> list[Skill]:
        root = directory if os.path.isabs(directory) else _fs.abspath(directory)
        root_real = self.memo.realpath(root)
        if root_real is None:
            return []
        skill = self._load_single(
            root, root_real, root_real, label, report_missing=True, known=known
        )
        if skill is not None:
            return [skill]
        out: list[Skill] = []
        for child in _fs.list_real_subdirs_locale(root):
            child_real = os.path.join(root_real, os.path.basename(child))
            self.memo.note(child, child_real)
            found = self._load_single(child, root_real, child_real, label, report_missing=False)
            if found is not None:
                out.append(found)
        return out

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
        got = self._read_parsed(
            file_path, root_real, dir_real, skill=None, report_missing=report_missing, known=known
        )
        if got is None:
            return None
        parsed, identity = got
        # The built skill and its diagnostics depend only on these and the file identity.
        key = (file_path, skill_dir, label, dir_real)
        cache = self.cache
        if cache is not None:
            built = cache.lookup_built(key, identity)
            if built is not None:
                cached_skill: Skill | None = built[0]
                self.diagnostics.extend(built[1])
                return cached_skill
        start = len(self.diagnostics)
        skill = self._build(parsed, file_path, skill_dir, dir_real, label)
        if cache is not None:
            cache.store_built(key, identity, (skill, tuple(self.diagnostics[start:])))
        return skill

    def _build(
        self, parsed: ParsedSkillFile, file_path: str, skill_dir: str, dir_real: str, label: str
    ) -> Skill | None:
        fm = parsed.frontmatter
        name = js_trim(fm.get("name") or "") or js_trim(os.path.basename(skill_dir))
        description = js_trim(fm.get("description") or "")
        self._pass_parse_diags(parsed, file_path, name or None, standalone=False)
        if not name or not description:
            if not any(d.code == "parse.missing-description" for d in parsed.diagnostics):
                self._diag(
                    error,
                    "parse.missing-description",
                    f"{file_path} has no description; the skill is not loaded",
                    file_path,
                    skill=name or None,
                )
            return None
        return Skill(
            name=name,
            description=description,
            file_path=Path(file_path),
            base_dir=Path(skill_dir),
            source=label,
            parsed=parsed,
            real_dir=Path(dir_real),
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
    ) -> tuple[ParsedSkillFile, tuple[int, ...]] | None:
        max_bytes = self.limits.max_skill_file_bytes
        checked = _fs.verify_file(
            file_path,
            root_real=root_real,
            max_bytes=max_bytes,
            memo=self.memo,
            dir_real=dir_real,
            known=known,
        )
        if isinstance(checked, _fs.ReadFailure):
            if checked.kind != _fs.MISSING or report_missing:
                self._read_failure(checked, file_path, skill)
            return None
        cache = self.cache
        if cache is not None:
            hit = cache.lookup(file_path, checked.identity)
            if isinstance(hit, ParsedSkillFile):
                return hit, checked.identity
        got = _fs.read_verified(checked, max_bytes=max_bytes)
        if isinstance(got, _fs.ReadFailure):
            self._read_failure(got, file_path, skill)
            return None
        data, identity = got
        from skillbook.parse import parse_skill_text

        parsed = parse_skill_text(data, path=Path(file_path))
        if cache is not None:
            cache.store(file_path, identity, parsed)
        return parsed, identity

    def _pass_parse_diags(
        self, parsed: ParsedSkillFile, file_path: str, skill: str | None, *, standalone: bool
    ) -> None:
        for d in parsed.diagnostics:
            if standalone and d.code in {"parse.no-frontmatter", "parse.missing-description"}:
                continue
            if d.path is None or d.skill is None:
                d = Diagnostic(
                    d.code, d.severity, d.message, d.path or Path(file_path), d.line, d.skill or skill
                )
            self.diagnostics.append(d)

    def _read_failure(self, failure: _fs.ReadFailure, file_path: str, skill: str | None) -> None:
        if failure.kind == _fs.TOO_LARGE and failure.size is not None:
            self._too_large(file_path, failure.size, root_level=False)
            return
        code, severity, message = _fs.describe_failure(failure, file_path)
        make = {"error": error, "warning": warning}.get(severity, error)
        self._diag(make, code, message, file_path, skill)

    def _too_large(self, file_path: str, size: int, *, root_level: bool) -> None:
        lim = self.limits.max_skill_file_bytes
        what = "Skipping skills root due to oversized SKILL.md" if root_level else (
            "Skipping skill due to oversized SKILL.md"
        )
        self._diag(
            error,
            "discover.file-too-large",
            f"{what}: {size} bytes, over the limit of {lim} bytes; raise "
            "`skills.limits.maxSkillFileBytes` to load it",
            file_path,
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
