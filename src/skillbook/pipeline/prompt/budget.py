"""The bounded catalog of OpenClaw 2026.9 (``prepareSkillsForPrompt``, ``skill-prompt-limits.ts``).

Input: the prompt-visible skills (already sorted as the profile says, paths already
shortened), the count and size limits, the remote note and the catalog wording of a
:class:`~skillbook.config.profile.CatalogRules`. Output: the prompt text and how many skills
it shows. Pure: no disk, no clock.

Unlike 2026.4 (:func:`skillbook.pipeline.prompt.skills_section.build_prompt`), everything counts toward the
size budget: the truncation note and the remote note too. When the full catalog does
not fit, the compact one keeps as many skills as fit and then gives each description
the longest length (4 to 220 UTF-16 units, binary-searched) that still fits: the note
then says ``descriptions shortened`` instead of ``descriptions omitted``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from skillbook.base.js import JS_WHITESPACE, js_trim, utf16_len, utf16_slice

__all__ = [
    "HEADER_INTRO",
    "HEADER_PATHS",
    "BoundedCatalog",
    "bounded_catalog",
    "escape_xml",
    "largest_fitting_prefix",
    "shorten_description",
]

#: ``COMPACT_DESCRIPTION_MIN_CHARS`` and the upper end of the description search.
MIN_DESCRIPTION_CHARS = 4
MAX_DESCRIPTION_CHARS = 220
_WARNING_SIGN = "\u26a0\ufe0f"
#: The catalog's first and third header lines (the same in every release).
HEADER_INTRO = "\n\nThe following skills provide specialized instructions for specific tasks."
HEADER_PATHS = (
    "When a skill file references a relative path, resolve it against the skill directory "
    "(parent of SKILL.md / dirname of the path) and use that absolute path in tool commands."
)
_JS_SPACE_RUN = re.compile(f"[{JS_WHITESPACE}]+")
_TRAILING_SPACE = re.compile(f"[{JS_WHITESPACE}]+\\Z")


class Entry:
    """What one catalog entry shows (name, description, location)."""

    __slots__ = ("description", "location", "name")

    def __init__(self, name: str, description: str, location: str) -> None:
        self.name, self.description, self.location = name, description, location


@dataclass(frozen=True, slots=True)
class BoundedCatalog:
    text: str
    #: How many of the given skills (a prefix) the text shows.
    kept: int
    compact: bool
    #: The description length of a compact catalog (0: descriptions omitted).
    description_chars: int


def escape_xml(s: str) -> str:
    """Escape the five XML specials, ``&`` first; nothing else is touched."""
    return (
        s.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def _utf16_safe_cut(s: str, limit: int) -> str:
    """``truncateUtf16Safe``: at most ``limit`` units, never half a surrogate pair."""
    if utf16_len(s) <= limit:
        return s
    head = utf16_slice(s, limit)
    if head and 0xD800 <= ord(head[-1]) <= 0xDBFF:
        head = head[:-1]
    return head


def shorten_description(description: str, max_chars: int) -> str:
    """``truncateSkillDescription``: whitespace runs become one space; a longer text is
    cut to ``max_chars - 3`` units (never inside a pair), trailing spaces dropped, ``...``."""
    normalized = js_trim(_JS_SPACE_RUN.sub(" ", description))
    if utf16_len(normalized) <= max_chars:
        return normalized
    if max_chars <= 3:
        return _utf16_safe_cut(normalized, max_chars)
    return _TRAILING_SPACE.sub("", _utf16_safe_cut(normalized, max_chars - 3)) + "..."


def _render_catalog(
    entries: Sequence[Entry], read_line: str, describe: Callable[[Entry], str | None]
) -> str:
    if not entries:
        return ""
    lines = [HEADER_INTRO, read_line, HEADER_PATHS, "", "<available_skills>"]
    for e in entries:
        lines.append("  <skill>")
        lines.append(f"    <name>{escape_xml(e.name)}</name>")
        text = describe(e)
        if text is not None:
            lines.append(f"    <description>{escape_xml(text)}</description>")
        lines.append(f"    <location>{escape_xml(e.location)}</location>")
        lines.append("  </skill>")
    lines.append("</available_skills>")
    return "\n".join(lines)


def bounded_catalog(
    entries: Sequence[Entry],
    *,
    max_skills: int,
    max_chars: int,
    remote_note: str | None,
    read_full: str,
    read_compact: str,
    read_shortened: str,
    check_command: str,
) -> BoundedCatalog:
    """``prepareSkillsForPrompt`` (see the module docstring); ``entries`` in catalog order."""
    total = len(entries)
    by_count = list(entries[: max(0, max_skills)])
    audit = f"Run `{check_command}` to audit."

    def note(count: int, desc_chars: int | None) -> str:
        # desc_chars None: the full format.
        how = "descriptions shortened" if desc_chars else "descriptions omitted"
        if count < total:
            details = f" (compact format, {how})" if desc_chars is not None else ""
            return (
                f"{_WARNING_SIGN} Skills truncated: included {count} of {total}{details}. {audit}"
            )
        if desc_chars is not None:
            return f"{_WARNING_SIGN} Skills catalog using compact format ({how}). {audit}"
        return ""

    def catalog(skills: Sequence[Entry], desc_chars: int | None) -> str:
        if desc_chars is None:
            return _render_catalog(skills, read_full, lambda e: e.description)
        if desc_chars <= 0:
            return _render_catalog(skills, read_compact, lambda e: None)
        return _render_catalog(
            skills,
            read_shortened,
            lambda e: shorten_description(e.description, desc_chars) or None,
        )

    def render(
        skills: Sequence[Entry], desc_chars: int | None, with_note: bool = True
    ) -> str | None:
        parts = [note(len(skills), desc_chars) if with_note else "", catalog(skills, desc_chars)]
        prompt = "\n".join(p for p in parts if p)
        size = utf16_len(prompt)
        if remote_note:
            extra = utf16_len(remote_note) + (1 if prompt else 0)
            if extra + size <= max_chars:
                return f"{remote_note}\n{prompt}" if prompt else remote_note
        return prompt if size <= max_chars else None

    def fits(skills: Sequence[Entry], desc_chars: int, with_note: bool = True) -> bool:
        return render(skills, desc_chars, with_note) is not None

    full = render(by_count, None)
    if full is not None:
        return BoundedCatalog(full, len(by_count), False, 0)
    shown = by_count
    if not fits(shown, 0):
        shown = by_count[: largest_fitting_prefix(len(by_count), lambda m: fits(by_count[:m], 0))]
    if not shown and by_count:
        quiet = render(by_count, None, False)
        if quiet is not None:
            return BoundedCatalog(quiet, len(by_count), False, 0)
        keep = largest_fitting_prefix(len(by_count), lambda m: fits(by_count[:m], 0, False))
        if keep > 0:
            shown = by_count[:keep]
    with_note = fits(shown, 0)
    desc_chars = 0
    if shown and fits(shown, MIN_DESCRIPTION_CHARS, with_note):
        lo, hi = MIN_DESCRIPTION_CHARS, MAX_DESCRIPTION_CHARS
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if fits(shown, mid, with_note):
                lo = mid
            else:
                hi = mid - 1
        desc_chars = lo
    text = render(shown, desc_chars, with_note) or ""
    return BoundedCatalog(text, len(shown) if text else 0, True, desc_chars)


def largest_fitting_prefix(n: int, fits: Callable[[int], bool]) -> int:
    """The largest prefix length in ``0..n`` that fits: OpenClaw's binary search
    exactly (``mid`` rounds up, ``hi`` drops below a miss)."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo
