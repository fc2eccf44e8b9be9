"""Spec modes and validation: the Agent Skills (strict) rules and the lenient modes.

Input: a skill folder or a Markdown file (:func:`validate_path`), or an already parsed
skill (:func:`strict_problems`, :func:`passes_strict`). Output:
:class:`ValidationResult` or tuples of :class:`Diagnostic`. Nothing raises on a bad skill.

Strict mode is built so that *a skill that passes it also passes skills-ref*
(``skills_ref.validate``, which reads with strictyaml and splits on ``---``). Where
skills-ref is more lenient we are stricter, never the other way round:

* names are ASCII ``a-z0-9-``; skills-ref NFKC-normalises and accepts any Unicode
  lowercase alphanumeric, and an ASCII name is its own NFKC form, so ours implies theirs;
* a top-level ``version`` is an unknown field (skills-ref rejects it): use
  ``metadata.version``;
* YAML that strictyaml refuses (flow style, tags, anchors, aliases, merge keys, sibling
  mappings at different indents, non-printable characters, NEL/LS/PS) is an error, and
  so is any ``---`` inside the frontmatter, since skills-ref ends the block there;
* ``name``, ``description``, ``license``, ``compatibility`` and ``allowed-tools`` must
  be YAML strings (skills-ref stringifies any scalar); ``compatibility`` must not be empty;
* ``metadata`` must be a mapping; values that are not strings (nested maps, numbers)
  are only warnings: the spec says string to string, but skills-ref accepts them.

The lenient modes (``openclaw``, ``mixed``, ``legacy``) report what OpenClaw itself
finds: the parse diagnostics, a missing description being an error. ``mixed`` and
``legacy`` also accept standalone ``.md`` files and take their name and description
as OpenPocket does (:func:`legacy_name_description`), as discovery does.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from skillbook.base.js import utf16_slice
from skillbook.config.mode import Mode
from skillbook.diagnostics import Diagnostic, Severity, has_errors
from skillbook.pipeline.validation.strict_rules import (
    LOWERCASE_SKILL_FILE,
    SKILL_FILE,
    _Report,
    _version_problems,
    read_skill_file,
    strict_problems,
)

if TYPE_CHECKING:
    from skillbook.model import ParsedSkillFile, Skill

__all__ = [
    "DEFAULT_MODE",
    "LEGACY_DESCRIPTION_UNITS",
    "MODES",
    "SKIPPED_DIRS",
    "ValidationReport",
    "ValidationResult",
    "legacy_name_description",
    "legacy_triggers",
    "passes_strict",
    "validate_many",
    "validate_path",
    "validate_tree",
]

MODES: tuple[Mode, ...] = tuple(Mode)
DEFAULT_MODE: Mode = Mode.STRICT

#: OpenPocket cuts a description taken from the body to this many UTF-16 units.
LEGACY_DESCRIPTION_UNITS = 180
#: Folders never searched for child skills (besides dot-folders).
SKIPPED_DIRS: frozenset[str] = frozenset({"node_modules"})

_LENIENT_SEVERITY: Mapping[str, Severity] = MappingProxyType(
    {
        "parse.missing-description": Severity.ERROR,
        "parse.yaml-invalid": Severity.INFO,
        "parse.yaml-duplicate-key": Severity.INFO,
        "parse.yaml-alias-bomb": Severity.INFO,
        "parse.install-dropped": Severity.WARNING,
    }
)
# OpenPocket finds a name and description in the body, so these are no problem there.
_LEGACY_FORGIVEN = frozenset(
    {"parse.missing-name", "parse.missing-description", "parse.no-frontmatter"}
)


@dataclass(frozen=True, slots=True)
class ValidationResult:
    """What validating one skill found; ``ok`` means no error-level diagnostic."""

    path: Path
    name: str | None
    ok: bool
    diagnostics: tuple[Diagnostic, ...] = ()
    #: For a failing skill: the other modes it passes in (see :func:`validate_tree`).
    passes_in: tuple[Mode, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": str(self.path),
            "name": self.name,
            "ok": self.ok,
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }
        if not self.ok:
            out["passesIn"] = list(self.passes_in)
        return out


@dataclass(frozen=True, slots=True)
class ValidationReport:
    """:func:`validate_tree`'s answer: a result per skill, and the SKILL.md files no loader reads."""

    mode: Mode
    results: tuple[ValidationResult, ...]
    #: ``validate.not-discovered`` diagnostics: each SKILL.md the loader would not read.
    not_discovered: tuple[Diagnostic, ...] = ()

    @property
    def ok(self) -> bool:
        return bool(self.results) and all(r.ok for r in self.results)

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "ok": self.ok,
            "results": [r.to_json() for r in self.results],
            "notDiscovered": [d.to_dict() for d in self.not_discovered],
        }


def passes_strict(skill: Skill) -> tuple[bool, tuple[Diagnostic, ...]]:
    """For discovery in strict mode: ``(ok, diagnostics)``; a skill with errors is excluded."""
    found = strict_problems(skill.base_dir, skill.parsed, file_path=skill.file_path)
    return not has_errors(found), found


def split_strict(
    skills: Iterable[Skill],
) -> tuple[list[Skill], list[Skill], list[Diagnostic]]:
    """Strict mode's filter: ``(kept, excluded, diagnostics)`` in the order given."""
    kept: list[Skill] = []
    excluded: list[Skill] = []
    diags: list[Diagnostic] = []
    for skill in skills:
        ok, problems = passes_strict(skill)
        diags.extend(problems)
        (kept if ok else excluded).append(skill)
    return kept, excluded, diags


# ---------------------------------------------------------------- paths and modes


def validate_path(path: Path, *, mode: Mode | str = DEFAULT_MODE) -> ValidationResult:
    """Validate one skill: a skill folder, a ``SKILL.md``, or (mixed/legacy) a ``.md`` file."""
    path, mode = Path(path), Mode.of(mode)
    rep = _Report(path, None)
    located = _skill_file(path, mode, rep)
    if located is None:
        return _result(path, None, rep.found)
    skill_dir, file_path = located
    rep.path = file_path
    raw = read_skill_file(file_path, rep)
    if raw is None:
        return _result(path, None, rep.found)
    from skillbook.pipeline.parse.skill_file import parse_skill_text

    parsed = parse_skill_text(raw, path=file_path)
    if mode == "strict":
        found = strict_problems(skill_dir, parsed, file_path=file_path, raw=raw)
        # What OpenClaw would silently lose is worth a warning in every mode.
        lost = [
            dataclasses.replace(d, severity=Severity.WARNING)
            for d in parsed.diagnostics
            if d.code in _OPENCLAW_LOSSES
        ]
        return _result(path, parsed.name or None, [*rep.found, *found, *lost])
    # The same rules as discovery: in mixed and legacy modes a standalone Markdown file
    # takes its name and description from the body when the frontmatter lacks them;
    # a SKILL.md in a folder always needs a frontmatter description.
    standalone = file_path.name not in (SKILL_FILE, LOWERCASE_SKILL_FILE)
    body_fallback = standalone and mode in ("mixed", "legacy")
    if body_fallback:
        name, description = _legacy(parsed, file_path.stem)
    else:
        fallback = file_path.stem if standalone else Path(os.path.abspath(skill_dir)).name
        name, description = parsed.name or fallback, parsed.description
    rep.skill = name
    _lenient_problems(parsed, description, rep, legacy=body_fallback)
    return _result(path, name, rep.found)


def _skill_file(path: Path, mode: Mode, rep: _Report) -> tuple[Path, Path] | None:
    """``(skill folder, skill file)`` for a folder or a file; None (reported) when
    ``path`` is neither, or holds no skill file, or is not Markdown."""
    if path.is_dir():
        return _skill_file_in(path, mode, rep)
    if path.is_file():
        if path.suffix.lower() != ".md":
            rep.add("path", "not-md")
            return None
        if path.name != SKILL_FILE and mode == "openclaw":
            rep.add("skill-file", "standalone", file=path.name)
        return path.parent, path
    rep.add("path", "no-path")
    return None


def _skill_file_in(path: Path, mode: Mode, rep: _Report) -> tuple[Path, Path] | None:
    try:
        listing = set(os.listdir(path))
    except OSError as exc:
        rep.add("discover.unreadable", "unreadable", exc=exc)
        return None
    if SKILL_FILE in listing:  # exact: case-insensitive file systems would match skill.md
        return path, path / SKILL_FILE
    if LOWERCASE_SKILL_FILE not in listing:
        rep.add("skill-file", "missing-file")
        return None
    file_path = rep.path = path / LOWERCASE_SKILL_FILE
    if mode != "strict":  # strict_problems reports it itself
        level = Severity.WARNING if mode in ("mixed", "legacy") else Severity.ERROR
        rep.add("skill-file", "lower-skill-md", level=level)
    return path, file_path


#: Parse findings that mean OpenClaw drops part of a skill (a gate, an installer, a dispatch).
_OPENCLAW_LOSSES = frozenset(
    {
        "parse.install-dropped",
        "parse.metadata-invalid",
        "parse.dispatch-no-tool",
        "parse.arg-mode",
        "parse.field-type",
    }
)


def _lenient_problems(
    parsed: ParsedSkillFile, description: str, rep: _Report, *, legacy: bool
) -> None:
    """OpenClaw-level problems: the parse diagnostics with severities fixed per code."""
    for diag in parsed.diagnostics:
        if legacy and description and diag.code in _LEGACY_FORGIVEN:
            continue
        level = _LENIENT_SEVERITY.get(diag.code, diag.severity)
        path, skill = diag.path or rep.path, diag.skill or rep.skill
        rep.found.append(dataclasses.replace(diag, severity=level, path=path, skill=skill))
    if not description and not any(d.code == "parse.missing-description" for d in rep.found):
        rep.add("parse.missing-description", "no-description")
    fm = parsed.frontmatter
    if fm.yaml_ok:
        _version_problems(fm.data.get("version"), "version", rep, fm.line_of("version"))
        meta = fm.data.get("metadata")
        if isinstance(meta, Mapping):
            _version_problems(meta.get("version"), "metadata.version", rep, fm.line_of("metadata"))


def _result(path: Path, name: str | None, found: Sequence[Diagnostic]) -> ValidationResult:
    return ValidationResult(
        path=path, name=name, ok=not has_errors(found), diagnostics=tuple(found)
    )


def validate_many(
    paths: Iterable[Path], mode: Mode | str = DEFAULT_MODE
) -> tuple[ValidationResult, ...]:
    """Validate each path, and the skills the loader finds under each folder (see :func:`validate_tree`)."""
    return validate_tree(paths, mode).results


def validate_tree(
    paths: Iterable[Path], mode: Mode | str = DEFAULT_MODE, *, grouped: bool = False
) -> ValidationReport:
    """Validate what the loader would read under each path, and account for every SKILL.md.

    A file is validated as it is. A folder is read as the loader reads a root
    (:mod:`skillbook.pipeline.validation.layout`): a nested ``skills/`` root, a root that is a skill, its
    skill folders, grouped ones when ``grouped``, standalone ``.md`` files in
    ``mixed``/``legacy`` mode. Every other ``SKILL.md`` below it gets a
    ``validate.not-discovered`` warning saying why the loader skips it. A failing
    skill's :attr:`~ValidationResult.passes_in` names the other modes that accept it.
    """
    from skillbook.pipeline.validation.layout import layout

    mode = Mode.of(mode)
    results: list[ValidationResult] = []
    skipped: list[Diagnostic] = []
    for path in map(Path, paths):
        targets: Sequence[Path] = [path]
        if path.is_dir():
            found = layout(path, grouped=grouped, standalone=mode.loads_standalone)
            targets = found.skills or [path]
            skipped += [
                Diagnostic(
                    "validate.not-discovered",
                    Severity.WARNING,
                    f"not a skill for the loader: {why}",
                    path=file,
                )
                for file, why in found.skipped
            ]
        results += [_with_modes(validate_path(p, mode=mode), p, mode) for p in targets]
    return ValidationReport(mode, tuple(results), tuple(skipped))


def _with_modes(result: ValidationResult, path: Path, mode: Mode) -> ValidationResult:
    if result.ok:
        return result
    others = tuple(m for m in MODES if m != mode and validate_path(path, mode=m).ok)
    return dataclasses.replace(result, passes_in=others)


# ---------------------------------------------------------------- OpenPocket legacy


def legacy_name_description(text: str, stem: str) -> tuple[str, str]:
    """OpenPocket's name and description for a Markdown skill.

    Name: frontmatter ``name``, else the first ``# `` heading, else ``stem``.
    Description: frontmatter ``description``, else the first non-empty line that is
    not a heading, cut to 180 UTF-16 units.
    """
    from skillbook.pipeline.parse.skill_file import parse_skill_text

    return _legacy(parse_skill_text(text), stem)


def _legacy(parsed: ParsedSkillFile, stem: str) -> tuple[str, str]:
    name, description = parsed.name, parsed.description
    for line in parsed.body.split("\n"):
        stripped = line.strip()
        if not name and stripped.startswith("# "):
            name = stripped[2:].strip()
        if not description and stripped and not stripped.startswith("#"):
            description = utf16_slice(stripped, LEGACY_DESCRIPTION_UNITS)
        if name and description:
            break
    return name or stem, description


def legacy_triggers(parsed: ParsedSkillFile) -> tuple[str, ...]:
    """``metadata.openclaw.triggers`` as a string list (OpenPocket; legacy mode only)."""
    if parsed.metadata is None:
        return ()
    from skillbook.pipeline.parse.manifest import normalize_string_list

    return tuple(normalize_string_list(parsed.metadata.raw.get("triggers")))
