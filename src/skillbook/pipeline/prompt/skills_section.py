"""The skills catalog a model sees: ``<available_skills>`` and its budget (spec §5).

Input: loaded (already gated and filtered) :class:`~skillbook.model.Skill` values,
the prompt limits and the home prefixes to shorten paths with. Output: a
:class:`PromptCatalog` whose ``text`` is byte-identical to OpenClaw's
``buildWorkspaceSkillsPrompt`` for the same skills, plus what was kept, what was
left out and why. Everything here is pure except :func:`home_prefixes`, which
resolves symbolic links and is meant to be called once at the edge.

All lengths are JavaScript string lengths (UTF-16 code units): that is what
OpenClaw's budget counts, and a budget that counts code points instead would
keep skills OpenClaw drops whenever a description holds an emoji.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress
from operator import is_not
from pathlib import Path
from typing import TypedDict, Unpack

from skillbook import diagnostics as diag
from skillbook.base.js import js_trim, locale_compare_key, utf16_len
from skillbook.config.profile import DEFAULT_PROFILE, CatalogRules, Profile
from skillbook.diagnostics import Diagnostic
from skillbook.model import USER_SOURCES, Skill
from skillbook.pipeline.prompt.budget import (
    HEADER_INTRO,
    HEADER_PATHS,
    Entry,
    bounded_catalog,
    escape_xml,
    largest_fitting_prefix,
)
from skillbook.pipeline.prompt.entries import CatalogParts, full_entry
from skillbook.pipeline.prompt.home_paths import (
    KeptPaths,
    PromptSkill,
    compact_skill_paths,
)

DEFAULT_MAX_SKILLS_IN_PROMPT = 150
DEFAULT_MAX_SKILLS_PROMPT_CHARS = 30_000
#: Room kept free in the budget for the truncation note when the compact format is used.
COMPACT_WARNING_OVERHEAD = 150
#: The audit command named in truncation notes.
DEFAULT_CHECK_COMMAND = "skillbook check"
#: What OpenClaw writes instead; pass it as ``check_command`` for byte-identical output.
OPENCLAW_CHECK_COMMAND = "openclaw skills check"
DEFAULT_READ_TOOL = "read"

_WARNING_SIGN = "\u26a0\ufe0f"  # "⚠️": the emoji plus its presentation selector
_HEADER_INTRO = HEADER_INTRO
_HEADER_READ_FULL = (
    "Use the read tool to load a skill's file when the task matches its description."
)
_HEADER_READ_COMPACT = "Use the read tool to load a skill's file when the task matches its name."
_HEADER_PATHS = HEADER_PATHS


# JavaScript's String.prototype.trim set (WhiteSpace + LineTerminator). Python's
# str.strip() differs: it strips U+001C..U+001F and keeps U+FEFF.
@dataclass(frozen=True, slots=True)
class PromptLimits:
    """``skills.limits.maxSkillsInPrompt`` and ``skills.limits.maxSkillsPromptChars``."""

    max_skills: int = DEFAULT_MAX_SKILLS_IN_PROMPT
    max_chars: int = DEFAULT_MAX_SKILLS_PROMPT_CHARS


DEFAULT_LIMITS = PromptLimits()


@dataclass(frozen=True, slots=True)
class PromptCatalog:
    """The rendered catalog and an account of every visible skill.

    ``resolved`` are the prompt-visible skills (absolute paths, before any budget);
    ``kept`` and ``omitted`` partition them; ``kept`` is in rendering order.
    """

    text: str
    kept: tuple[Skill, ...]
    omitted: tuple[Skill, ...]
    compact: bool
    truncated: bool
    resolved: tuple[Skill, ...]
    diagnostics: tuple[Diagnostic, ...] = ()


def format_skills_for_prompt(
    skills: Sequence[PromptSkill | Skill], *, parts: CatalogParts | None = None
) -> str:
    """The full catalog (§5.1): name, description and location of every given skill.

    ``parts`` reuses the elements of entries it formatted before."""
    if not skills:
        return ""
    shown = [item if type(item) is PromptSkill else PromptSkill.of(item) for item in skills]
    elements = parts.elements(shown) if parts is not None else [full_entry(s) for s in shown]
    head = [_HEADER_INTRO, _HEADER_READ_FULL, _HEADER_PATHS, "", "<available_skills>"]
    return "\n".join([*head, *elements, "</available_skills>"])


def format_skills_compact(skills: Sequence[PromptSkill | Skill]) -> str:
    """The compact catalog (§5.2): names and locations only."""
    if not skills:
        return ""
    lines = [_HEADER_INTRO, _HEADER_READ_COMPACT, _HEADER_PATHS, "", "<available_skills>"]
    for item in skills:
        s = PromptSkill.of(item)
        lines.append("  <skill>")
        lines.append(f"    <name>{escape_xml(s.name)}</name>")
        lines.append(f"    <location>{escape_xml(s.location)}</location>")
        lines.append("  </skill>")
    lines.append("</available_skills>")
    return "\n".join(lines)


def is_prompt_visible(skill: Skill) -> bool:
    """Skills with ``disable-model-invocation: true`` stay out of the catalog (§5.3 step 2)."""
    return not skill.disable_model_invocation


def _priority_order(skills: Sequence[Skill]) -> list[int]:
    """Indices with user-placed skills first, stable within each tier."""
    return sorted(range(len(skills)), key=lambda i: 0 if skills[i].source in USER_SOURCES else 1)


def build_prompt(
    skills: Sequence[Skill],
    *,
    limits: PromptLimits = DEFAULT_LIMITS,
    homes: Sequence[Path | str] = (),
    remote_note: str | None = None,
    priority: bool = False,
    check_command: str = DEFAULT_CHECK_COMMAND,
    profile: Profile = DEFAULT_PROFILE,
    keep: KeptPaths | None = None,
    parts: CatalogParts | None = None,
) -> PromptCatalog:
    """Render the catalog under the count and size budget (§5.3).

    ``skills`` are the eligible skills in load order. The full format is used when
    it fits ``limits.max_chars``; otherwise the compact one, and if even that does
    not fit in ``max_chars - 150`` the longest fitting prefix is kept and a note says
    how many were included. ``priority=True`` (not in OpenClaw) decides which
    skills survive a cut by source tier first; the survivors still render in load
    order. ``profile`` says the wording, the order and the budget algorithm (2026.9:
    sorted by name, notes counted, shortened descriptions:
    :mod:`skillbook.pipeline.prompt.budget`); ``keep`` the locations that stay absolute when
    the profile says so. ``parts`` (kept by the caller between builds) reuses the
    entries of skills whose name, description and location did not change.
    """
    rules = profile.catalog
    resolved = _visible(skills, parts, rules)
    kept_paths = keep if rules.keep_state_paths else None
    shown = (
        parts.shown(resolved, homes, kept_paths)
        if parts is not None
        else compact_skill_paths(resolved, homes, keep=kept_paths)
    )
    if rules.bounded:
        return _build_bounded(resolved, shown, limits, remote_note, priority, check_command, rules)
    return _build_legacy(resolved, shown, limits, remote_note, priority, check_command, parts)


def _visible(
    skills: Sequence[Skill], parts: CatalogParts | None, rules: CatalogRules
) -> tuple[Skill, ...]:
    """The prompt-visible skills, in load order (2026.9: by name)."""
    if parts is not None:
        resolved = tuple(compress(skills, parts.visible(skills, is_prompt_visible)))
    else:
        resolved = tuple(s for s in skills if is_prompt_visible(s))
    if rules.sort_by_name:
        resolved = tuple(sorted(resolved, key=lambda s: locale_compare_key(s.name)))
    return resolved


def _build_legacy(
    resolved: tuple[Skill, ...],
    shown: list[PromptSkill],
    limits: PromptLimits,
    remote_note: str | None,
    priority: bool,
    check_command: str,
    parts: CatalogParts | None,
) -> PromptCatalog:
    """OpenClaw 2026.4's budget: the full format when it fits, else the compact one,
    cut to its longest fitting prefix when even that does not fit."""
    total = len(resolved)
    order = _priority_order(resolved) if priority else list(range(total))
    by_count = order[: max(0, limits.max_skills)]
    # Rendered once: when it fits, this is the catalog (load order, as below).
    whole = len(by_count) == total and not priority  # by_count is range(total)
    in_order = shown if whole else [shown[i] for i in sorted(by_count)]
    full_text = format_skills_for_prompt(in_order, parts=parts)
    full_len = utf16_len(full_text)
    compact = full_len > limits.max_chars
    kept_idx, cut_by_budget = (
        _compact_cut(by_count, shown, limits) if compact else (by_count, False)
    )
    truncated = total > len(by_count) or cut_by_budget

    kept: tuple[Skill, ...]
    omitted: tuple[Skill, ...]
    if whole and not compact:
        # Everything fits (the usual case): no index bookkeeping over every skill.
        catalog, kept, omitted = full_text, resolved, ()
    else:
        catalog, kept, omitted = _partition(resolved, shown, kept_idx, full_text, compact)
    note = _note(len(kept), total, truncated, compact, check_command)
    pieces = [js_trim(remote_note) if remote_note else "", note, catalog]
    found: list[Diagnostic] = []
    if truncated:
        found.append(
            _truncated_diagnostic(
                omitted, total, total > len(by_count), cut_by_budget, limits, check_command
            )
        )
    if compact:
        found.append(_compact_diagnostic(full_len, limits))
    return PromptCatalog(
        text="\n".join(p for p in pieces if p),
        kept=kept,
        omitted=omitted,
        compact=compact,
        truncated=truncated,
        resolved=resolved,
        diagnostics=tuple(found),
    )


def _partition(
    resolved: tuple[Skill, ...],
    shown: list[PromptSkill],
    kept_idx: list[int],
    full_text: str,
    compact: bool,
) -> tuple[str, tuple[Skill, ...], tuple[Skill, ...]]:
    """``(catalog, kept, omitted)`` when not every skill is rendered in full."""
    kept_set = set(kept_idx)
    kept_sorted = sorted(kept_set)  # back to load order for rendering
    kept_shown = [shown[i] for i in kept_sorted]
    catalog = format_skills_compact(kept_shown) if compact else full_text
    kept = tuple(resolved[i] for i in kept_sorted)
    omitted = tuple(s for i, s in enumerate(resolved) if i not in kept_set)
    return catalog, kept, omitted


def _compact_cut(
    by_count: list[int], shown: list[PromptSkill], limits: PromptLimits
) -> tuple[list[int], bool]:
    """The skills the compact format keeps (a prefix of ``by_count``), and whether the
    budget cut any. Lengths do not depend on order, so measuring a prefix of the
    priority order is the same as measuring those skills in load order."""

    def length(idx: Sequence[int]) -> int:
        return utf16_len(format_skills_compact([shown[i] for i in idx]))

    compact_budget = limits.max_chars - COMPACT_WARNING_OVERHEAD
    if length(by_count) <= compact_budget:
        return by_count, False
    fitting = largest_fitting_prefix(
        len(by_count), lambda m: length(by_count[:m]) <= compact_budget
    )
    return by_count[:fitting], True


def _compact_diagnostic(full_len: int, limits: PromptLimits) -> Diagnostic:
    return diag.info(
        "prompt.compact",
        f"The full skills catalog ({full_len} characters) is over the budget of "
        f"{limits.max_chars}; the compact format (names and locations, no "
        "descriptions) is used. Shorten descriptions or raise "
        "skills.limits.maxSkillsPromptChars to show them.",
    )


def _build_bounded(
    resolved: tuple[Skill, ...],
    shown: list[PromptSkill],
    limits: PromptLimits,
    remote_note: str | None,
    priority: bool,
    check_command: str,
    rules: CatalogRules,
) -> PromptCatalog:
    order = _priority_order(resolved) if priority else list(range(len(resolved)))
    entries = [Entry(shown[i].name, shown[i].description, shown[i].location) for i in order]
    note = js_trim(remote_note) if remote_note else None
    got = bounded_catalog(
        entries,
        max_skills=limits.max_skills,
        max_chars=limits.max_chars,
        remote_note=note or None,
        read_full=rules.read_full,
        read_compact=rules.read_compact,
        read_shortened=rules.read_shortened or rules.read_compact,
        check_command=check_command,
    )
    kept_idx = order[: got.kept]
    kept_set = set(kept_idx)
    kept = tuple(resolved[i] for i in kept_idx)
    omitted = tuple(s for i, s in enumerate(resolved) if i not in kept_set)
    found: list[Diagnostic] = []
    total = len(resolved)
    if omitted:
        by_count = total > max(0, limits.max_skills)
        by_budget = got.kept < min(total, max(0, limits.max_skills))
        found.append(
            _truncated_diagnostic(omitted, total, by_count, by_budget, limits, check_command)
        )
    if got.compact:
        how = (
            f"descriptions shortened to {got.description_chars} characters"
            if got.description_chars
            else "no descriptions"
        )
        found.append(
            diag.info(
                "prompt.compact",
                f"The full skills catalog is over the budget of {limits.max_chars} characters; "
                f"the compact format ({how}) is used. Shorten descriptions or raise "
                "skills.limits.maxSkillsPromptChars to show them in full.",
            )
        )
    return PromptCatalog(
        text=got.text,
        kept=kept,
        omitted=omitted,
        compact=got.compact,
        truncated=bool(omitted),
        resolved=resolved,
        diagnostics=tuple(found),
    )


class PromptOptions(TypedDict, total=False):
    """The keyword arguments of :func:`build_prompt`."""

    limits: PromptLimits
    homes: Sequence[Path | str]
    remote_note: str | None
    priority: bool
    check_command: str
    profile: Profile
    keep: KeptPaths | None


class CatalogMemo:
    """The last catalog built, reused when the same skill objects meet the same settings.

    Owned by the caller (a :class:`~skillbook.pipeline.book.Loader` keeps one): the parse cache
    hands back the very same :class:`~skillbook.model.Skill` objects for unchanged
    files, so an unchanged workspace renders its catalog once.
    """

    __slots__ = ("_last", "_parts")

    def __init__(self) -> None:
        self._last: tuple[tuple[Skill, ...], tuple[object, ...], PromptCatalog] | None = None
        # A rebuild after an edit formats only the entries that changed.
        self._parts = CatalogParts()

    def build(self, skills: Sequence[Skill], **options: Unpack[PromptOptions]) -> PromptCatalog:
        """:func:`build_prompt`, or the previous result for identical inputs."""
        eligible = tuple(skills)
        params = tuple(sorted(options.items()))  # keys are unique: values never compared
        last = self._last
        if (
            last is not None
            and last[1] == params
            and len(last[0]) == len(eligible)
            and not any(map(is_not, last[0], eligible))
        ):
            return last[2]
        catalog = build_prompt(eligible, parts=self._parts, **options)
        self._last = (eligible, params, catalog)
        return catalog


def _note(kept: int, total: int, truncated: bool, compact: bool, check_command: str) -> str:
    audit = f"Run `{check_command}` to audit."
    if truncated:
        how = " (compact format, descriptions omitted)" if compact else ""
        return f"{_WARNING_SIGN} Skills truncated: included {kept} of {total}{how}. {audit}"
    if compact:
        return (
            f"{_WARNING_SIGN} Skills catalog using compact format (descriptions omitted). {audit}"
        )
    return ""


def _truncated_diagnostic(
    omitted: Sequence[Skill],
    total: int,
    cut_by_count: bool,
    cut_by_budget: bool,
    limits: PromptLimits,
    check_command: str,
) -> Diagnostic:
    reasons: list[str] = []
    if cut_by_count:
        reasons.append(f"the limit of {limits.max_skills} skills (skills.limits.maxSkillsInPrompt)")
    if cut_by_budget:
        reasons.append(
            f"the size budget of {limits.max_chars} characters (skills.limits.maxSkillsPromptChars)"
        )
    names = ", ".join(s.name for s in omitted) or "none"
    return diag.warning(
        "prompt.truncated",
        f"{len(omitted)} of {total} skills left out of the prompt catalog by "
        f"{' and '.join(reasons)}: {names}. Raise the limit, shorten descriptions, or "
        f"disable skills you do not need (`{check_command}` lists them).",
    )


def skills_section(skills_prompt: str, *, read_tool: str = DEFAULT_READ_TOOL) -> str:
    """The ``## Skills (mandatory)`` block of the system prompt (§5.5); ``""`` if no skills.

    ``read_tool`` is the read tool's name as the run's tool list spells it.
    """
    trimmed = js_trim(skills_prompt)
    if not trimmed:
        return ""
    lines = [
        "## Skills (mandatory)",
        "Before replying: scan <available_skills> <description> entries.",
        f"- If exactly one skill clearly applies: read its SKILL.md at <location> with "
        f"`{read_tool}`, then follow it.",
        "- If multiple could apply: choose the most specific one, then read/follow it.",
        "- If none clearly apply: do not read any SKILL.md.",
        "Constraints: never read more than one skill up front; only read after selecting.",
        "- When a skill drives external API writes, assume rate limits: prefer fewer larger "
        "writes, avoid tight one-item loops, serialize bursts when possible, and respect "
        "429/Retry-After.",
        trimmed,
    ]
    # The system prompt is joined with filter(Boolean): empty lines vanish.
    return "\n".join(line for line in lines if line)
