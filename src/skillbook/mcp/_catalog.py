"""What ``skillbook serve`` publishes at one moment: skills, files, entries, commands.

Input: a :class:`~skillbook.runtime.session.SkillSession` (its book's ``eligible``
skills: gates, agent filter and config applied, as in the catalog). Output: a
:class:`ServedState` — per skill its captured files (:mod:`._skillfiles`), its Skills
extension entry or the reason it has none, the slash commands and the catalog text —
from which the MCP handlers answer. No ``mcp`` import; :mod:`.server` does the wire.
"""

from __future__ import annotations

import base64
import binascii
import logging
import math
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillbook import diagnostics as dg
from skillbook.config.profile import DEFAULT_PROFILE
from skillbook.mcp import _skillfiles as sf
from skillbook.mcp import _skillformat as fmt
from skillbook.pipeline.commands.specs import CommandSet

if TYPE_CHECKING:
    from skillbook.diagnostics import Diagnostic
    from skillbook.model import ParsedSkillFile, Skill
    from skillbook.pipeline.book import SkillBook
    from skillbook.runtime.session import SkillSession

_log = logging.getLogger("skillbook.mcp")

#: The name of the fallback tool, also written into the catalog's instructions.
READ_TOOL = "read_skill"
#: How long a walk of the skill folders is reused before stat-checking them again.
DEFAULT_RESCAN_INTERVAL_S = 1.0
_DEFAULT_RULES = DEFAULT_PROFILE.frontmatter


@dataclass(frozen=True, slots=True)
class ServedSkill:
    """One eligible skill and its captured files; ``problem`` says why it has no entry."""

    skill: Skill
    files: sf.SkillFiles
    frontmatter: Mapping[str, Any] | None
    problem: str | None

    def entry(self) -> dict[str, Any]:
        """The extension's ``Skill`` entry (§1.4): uri, verbatim frontmatter, manifest."""
        return {
            "uri": self.files.uri,
            "frontmatter": dict(self.frontmatter or {}),
            "resources": self.files.manifest(),
        }


@dataclass(frozen=True, slots=True)
class ServedState:
    """Everything the handlers answer from, built from one book and one walk.

    The lookups a request makes (the listed skills and their entries, a file, a
    SKILL.md or a directory by URI) are indexed once, when the state is built, so a
    request costs a dictionary lookup, not a walk over every skill.
    """

    book: SkillBook
    skills: tuple[ServedSkill, ...]
    commands: CommandSet
    instructions: str
    diagnostics: tuple[Diagnostic, ...]
    #: The skills ``skills/list`` carries (those with a valid entry), and their entries.
    listed: tuple[ServedSkill, ...] = field(init=False, compare=False, repr=False)
    entries: tuple[dict[str, Any], ...] = field(init=False, compare=False, repr=False)
    _files: dict[str, sf.FileEntry] = field(init=False, compare=False, repr=False)
    _skill_mds: dict[str, ServedSkill] = field(init=False, compare=False, repr=False)
    _dirs: dict[str, tuple[ServedSkill, str]] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        listed = tuple(s for s in self.skills if s.problem is None)
        files: dict[str, sf.FileEntry] = {}
        mds: dict[str, ServedSkill] = {}
        dirs: dict[str, tuple[ServedSkill, str]] = {}
        for served in self.skills:
            captured = served.files
            for f in captured.files:
                # The first skill that serves a URI answers for it (as the scan did).
                if fmt.is_within_skill(captured.uri, f.uri):
                    files.setdefault(f.uri, f)
            if captured.skill_md is None:
                continue
            mds.setdefault(captured.uri, served)
            for rel in captured.directories:
                dirs.setdefault(fmt.file_uri(captured.skill_path, rel), (served, rel))
        setattr_ = object.__setattr__
        setattr_(self, "listed", listed)
        setattr_(self, "entries", tuple(s.entry() for s in listed))
        setattr_(self, "_files", files)
        setattr_(self, "_skill_mds", mds)
        setattr_(self, "_dirs", dirs)

    def by_md_uri(self, uri: str) -> ServedSkill | None:
        return self._skill_mds.get(uri)

    def file(self, uri: str) -> sf.FileEntry | None:
        return self._files.get(uri)

    def directory(self, uri: str) -> tuple[ServedSkill, str] | None:
        return self._dirs.get(uri)

    def find_skill(self, name: str) -> ServedSkill | None:
        exact = next((s for s in self.skills if s.skill.name == name), None)
        folded = name.strip().casefold()
        return exact or next((s for s in self.skills if s.skill.name.casefold() == folded), None)

    def resource_items(self) -> list[dict[str, Any]]:
        """``resources/list`` items: SKILL.md named and described as the skill (§3)."""
        out: list[dict[str, Any]] = []
        for served in self.skills:
            name = served.skill.name
            for f in served.files.files:
                is_md = f.rel == fmt.SKILL_FILE
                item = {"uri": f.uri, "name": name if is_md else f"{name}/{f.rel}"}
                if is_md:
                    item["description"] = served.skill.description
                priority = 1.0 if is_md else 0.2
                annotations = {"audience": ["assistant"], "priority": priority}
                out.append(item | {"mimeType": f.mime, "size": f.size, "annotations": annotations})
        return out

    def digests(self) -> dict[str, str]:
        return {f.uri: f.digest for s in self.skills for f in s.files.files}

    def read_skill(self, name: str, path: str | None) -> tuple[str, bool]:
        """The ``read_skill`` tool: ``(text, is_error)``; never leaves a skill folder."""
        served = self.find_skill(name)
        if served is None:
            names = ", ".join(s.skill.name for s in self.skills) or "none"
            return f"No skill named {name!r}. Available skills: {names}.", True
        rel = fmt.SKILL_FILE if not path else _relative_in_skill(served, path, self.book.paths.home)
        if rel is None:
            return f"Refused: {path!r} is not a path inside the folder of skill {name!r}.", True
        found = served.files.file(rel)
        if found is None:
            skipped = next((s for s in served.files.skipped if s.rel == rel), None)
            why = skipped.reason if skipped else served.files.over_limit or "no such file"
            return f"Cannot read {rel!r} of skill {served.skill.name!r}: {why}.", True
        if found.text is None:
            return (
                f"{rel!r} of skill {served.skill.name!r} is binary ({found.mime}, "
                f"{found.size} bytes); read the resource {found.uri} instead."
            ), True
        return found.text, False


def page(items: Sequence[Any], cursor: str | None, size: int) -> tuple[list[Any], str | None]:
    """One page and the opaque cursor of the next (the base64 offset); ValueError if bad."""
    start = 0
    if cursor is not None:
        try:
            start = int(base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii"))
        except (ValueError, binascii.Error, UnicodeError) as exc:
            raise ValueError(f"invalid cursor {cursor!r}") from exc
        if not 0 <= start <= len(items):
            raise ValueError(f"invalid cursor {cursor!r}")
    end = start + size
    after = base64.urlsafe_b64encode(str(end).encode()).decode() if end < len(items) else None
    return list(items[start:end]), after


def _relative_in_skill(served: ServedSkill, path: str, home: Path) -> str | None:
    """``path`` relative to the skill folder; absolute and ``~`` paths must lie inside it."""
    from skillbook.base.fs import is_path_inside, try_realpath

    if not (path.startswith("~") or os.path.isabs(path)):
        return fmt.normalize_relative(path)
    full = os.fspath(home) + path[1:] if path.startswith("~") else path
    real, root = try_realpath(full), try_realpath(os.fspath(served.skill.base_dir))
    if real is None or root is None:
        return None
    if real == try_realpath(os.fspath(served.skill.file_path)):
        return fmt.SKILL_FILE
    if real == root or not is_path_inside(root, real):
        return None
    return fmt.normalize_relative(os.path.relpath(real, root).replace(os.sep, "/"))


#: Integers this long may pass Python's limit on digits printed (4,300 by default):
#: those are printed once to find out (JSON carries numbers as digits).
_LONG_INT_BITS = 14_000


def _jsonable(value: Any) -> Any:
    """``value`` with string keys and lists, as JSON carries it; ValueError for a
    number JSON cannot carry: NaN, Infinity, an integer past the digit limit (one pass:
    no ``json.dumps`` of every entry to find them)."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is int:
        if value.bit_length() > _LONG_INT_BITS:
            str(value)  # ValueError past sys.get_int_max_str_digits()
        return value
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value} has no JSON form")
    return value


def entry_frontmatter(
    skill: Skill, files: sf.SkillFiles, parsed: ParsedSkillFile | None = None
) -> tuple[dict[str, Any] | None, str]:
    """The frontmatter of the captured SKILL.md bytes as JSON, or why it cannot be an entry.

    Parsed with skillbook's YAML 1.2 core loader, keys in JavaScript order: the same
    mapping a JS host (``yaml`` package, core schema) gets when it verifies the file.
    ``parsed``: those very bytes already parsed under the default frontmatter rules.
    """
    from skillbook.pipeline.parse.skill_file import parse_skill_text

    md = files.skill_md
    if md is None:
        return None, files.unreadable or "no SKILL.md"
    if parsed is None:
        parsed = parse_skill_text(md.data)
    if not parsed.has_frontmatter or not parsed.frontmatter.yaml_ok:
        return None, "its frontmatter is not a YAML mapping"
    try:
        data = _jsonable(parsed.frontmatter.data)
    except ValueError:
        return None, (
            "its frontmatter holds a number JSON cannot carry "
            "(NaN, Infinity, or an integer too long to print)"
        )
    name, description = data.get("name"), data.get("description")
    if not fmt.is_valid_skill_name(name):
        return None, f"name {name!r} breaks the Agent Skills name rules"
    if name != skill.name:
        return None, f"frontmatter name {name!r} differs from the skill name {skill.name!r}"
    if not isinstance(description, str) or not 0 < len(description) <= fmt.MAX_DESCRIPTION_LENGTH:
        return None, f"the description must have 1-{fmt.MAX_DESCRIPTION_LENGTH} characters"
    return data, ""


class SkillCatalog:
    """The served state, rebuilt when the book changes or a rescan finds changed files.

    Thread-safe: the server calls :meth:`current` from worker threads.
    """

    def __init__(
        self,
        session: SkillSession,
        *,
        limits: sf.FileLimits = sf.DEFAULT_LIMITS,
        rescan_interval_s: float = DEFAULT_RESCAN_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.session = session
        self.files = sf.SkillFilesCache(limits=limits)
        self.rescan_interval_s = rescan_interval_s
        self._clock = clock
        self._lock = threading.Lock()
        self._state: ServedState | None = None
        self._scanned_at = 0.0
        #: Skill entries by (name, SKILL.md digest): a file is parsed once, not per build.
        self._entry_memo: dict[tuple[str, str], tuple[dict[str, Any] | None, str]] = {}

    def current(self, *, max_age_s: float | None = None) -> ServedState:
        """The served state, rebuilt when the book changed or the last walk of the skill
        folders is ``max_age_s`` old (default: the rescan interval)."""
        with self._lock:
            book = self.session.current()
            now = self._clock()
            state = self._state
            limit = self.rescan_interval_s if max_age_s is None else max_age_s
            if state is None or state.book is not book or now - self._scanned_at >= limit:
                state = self._build(book, state)
                self._state, self._scanned_at = state, now
            return state

    def fresh(self, max_age_s: float) -> ServedState | None:
        """The held state when nothing says it is out of date (no newer skill version,
        walked less than ``max_age_s`` ago), else None; never builds, never blocks
        on a build in progress."""
        state = self._state
        if state is None or self._clock() - self._scanned_at >= max_age_s:
            return None
        if self.session.is_stale() or self.session.loader.config is not state.book.config:
            return None
        return state

    def _build(self, book: SkillBook, old: ServedState | None) -> ServedState:
        served: list[ServedSkill] = []
        diags: list[Diagnostic] = []
        keys: set[tuple[str, str, str]] = set()
        for skill in book.eligible:
            path = fmt.encode_skill_path(skill.name)
            keys.add((path, os.fspath(skill.base_dir), os.fspath(skill.file_path)))
            files = self.files.get(path, skill.base_dir, skill.file_path, skill.real_dir)
            frontmatter, why = self._entry(skill, files)
            problem = files.over_limit or (None if frontmatter is not None else why)
            served.append(ServedSkill(skill, files, frontmatter, problem))
            diags.extend(_diagnostics(skill, files, problem))
        self.files.retain(keys)
        if (
            old is not None
            and old.book is book
            and len(old.skills) == len(served)
            and all(a.files is b.files for a, b in zip(old.skills, served, strict=True))
        ):
            return old  # the walk found every folder as it was: same state, nothing to say
        live = {(s.skill.name, s.files.skill_md.digest) for s in served if s.files.skill_md}
        for key in [k for k in self._entry_memo if k not in live]:
            del self._entry_memo[key]
        state = ServedState(
            book=book,
            skills=tuple(served),
            # The CLI's commands: the profile's reserved names, then the bundles'.
            commands=book.commands(),
            instructions=_instructions(book),
            diagnostics=tuple(diags),
        )
        if old is None or old.diagnostics != state.diagnostics:
            for d in state.diagnostics:
                _log.warning("%s", d.format())
        return state

    def _entry(self, skill: Skill, files: sf.SkillFiles) -> tuple[dict[str, Any] | None, str]:
        md = files.skill_md
        if md is None:
            return entry_frontmatter(skill, files)
        key = (skill.name, md.digest)
        held = self._entry_memo.get(key)
        if held is None:
            held = entry_frontmatter(skill, files, self._parsed(skill, files))
            self._entry_memo[key] = held
        return held

    def _parsed(self, skill: Skill, files: sf.SkillFiles) -> ParsedSkillFile | None:
        """The captured SKILL.md as discovery parsed it, when discovery read exactly these
        bytes (same identity) under the default frontmatter rules."""
        identity = files.md_identity
        loader = self.session.loader
        if identity is None or loader.profile.frontmatter != _DEFAULT_RULES:
            return None
        return loader.cache.peek(os.fspath(skill.file_path), identity)


def _diagnostics(skill: Skill, files: sf.SkillFiles, problem: str | None) -> list[Diagnostic]:
    where: dict[str, Any] = {"path": skill.base_dir, "skill": skill.name}
    out = [
        dg.warning("mcp.not-served", f"{s.rel}: not served ({s.reason})", **where)
        for s in files.skipped
    ]
    if files.skill_md is None:
        why = files.unreadable or "no SKILL.md"
        out.append(dg.warning("mcp.not-served", f"skill not served over MCP: {why}", **where))
    elif problem is not None:
        out.append(
            dg.warning(
                "mcp.not-served",
                f"not listed by skills/list (still readable as resources): {problem}",
                **where,
            )
        )
    return out


def _instructions(book: SkillBook) -> str:
    """The skills section for hosts without the extension; with ``skills.selection``
    active, the stable section that points at the ``find_skills`` tool."""
    if book.config.skills.selection.mode != "off":
        from skillbook.selection.plan import SelectionPlan, selection_active

        if selection_active(book):
            return SelectionPlan(book).system_section(read_tool=READ_TOOL)
    return book.system_prompt_section(read_tool=READ_TOOL)
