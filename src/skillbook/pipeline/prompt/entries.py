"""The per-skill pieces of the full catalog, kept between builds: :class:`CatalogParts`.

Input: the prompt-visible skills of one build, the home prefixes and kept paths.
Output: each skill's shown entry (:class:`PromptSkill`, location shortened) and the
full catalog text, the same as :func:`~skillbook.pipeline.prompt.home_paths.compact_skill_paths` and
``format_skills_for_prompt`` give. Pieces are keyed by value (name, description,
location), so an entry is formatted again only when what it shows changed: a rebuild
after one edit formats one entry, not ten thousand. Only the pieces of the last build
are kept. When the skills come in the same order as last time (an edit, not an
addition), the pieces are matched by position and object identity first, which
costs one comparison per skill instead of building and hashing a key.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from skillbook.model import Skill
from skillbook.pipeline.cache.skill_memo import PATCH_LIMIT, PositionalMap, moved
from skillbook.pipeline.prompt.budget import escape_xml
from skillbook.pipeline.prompt.home_paths import KeptPaths, PromptSkill, compact_skill_paths

__all__ = ["CatalogParts", "full_entry"]


def full_entry(s: PromptSkill) -> str:
    """One ``<skill>`` element of the full catalog (§5.1), five lines."""
    return (
        "  <skill>\n"
        f"    <name>{escape_xml(s.name)}</name>\n"
        f"    <description>{escape_xml(s.description)}</description>\n"
        f"    <location>{escape_xml(s.location)}</location>\n"
        "  </skill>"
    )


class CatalogParts:
    """Shown entries and formatted elements of the last build (see the module)."""

    __slots__ = (
        "_entries",
        "_key",
        "_last_elements",
        "_last_shown",
        "_last_skills",
        "_shown",
        "visible",
    )

    def __init__(self) -> None:
        self._key: tuple[object, ...] | None = None
        #: (name, description, absolute location) -> the entry shown for it.
        self._shown: dict[tuple[str, str, str], PromptSkill] = {}
        #: shown entry -> its full-format element.
        self._entries: dict[PromptSkill, str] = {}
        #: The last call's skills and results, for the positional fast path.
        self._last_skills: Sequence[Skill] = ()
        self._last_shown: list[PromptSkill] = []
        self._last_elements: tuple[Sequence[PromptSkill], list[str]] = ((), [])
        #: Which skills the catalog may show (a flag per skill, patched after an edit).
        self.visible = PositionalMap[Skill, bool]()

    def shown(
        self, skills: Sequence[Skill], homes: Sequence[Path | str], keep: KeptPaths | None
    ) -> list[PromptSkill]:
        """``compact_skill_paths(skills, homes, keep=keep)``, unchanged entries reused."""
        key = (tuple(map(str, homes)), keep)
        if key != self._key:
            self._key, self._shown, self._last_skills = key, {}, ()
        last = self._last_skills
        if len(last) == len(skills):
            changed = moved(last, skills)
            if len(changed) <= PATCH_LIMIT:
                patched = list(self._last_shown)
                made = self._by_value([skills[i] for i in changed], homes, keep)
                for i, entry in zip(changed, made, strict=True):
                    patched[i] = entry
                self._last_skills, self._last_shown = skills, patched
                return patched
        whole = self._by_value(skills, homes, keep)
        self._last_skills, self._last_shown = skills, whole
        return whole

    def _by_value(
        self, skills: Sequence[Skill], homes: Sequence[Path | str], keep: KeptPaths | None
    ) -> list[PromptSkill]:
        old = self._shown
        found: dict[tuple[str, str, str], PromptSkill] = {}
        wanted = [(s.name, s.description, str(s.file_path)) for s in skills]
        missing = [k for k in wanted if k not in old]
        made = compact_skill_paths([PromptSkill(*k) for k in missing], homes, keep=keep)
        fresh = dict(zip(missing, made, strict=True))
        out: list[PromptSkill] = []
        for k in wanted:
            entry = old.get(k) or fresh[k]
            found[k] = entry
            out.append(entry)
        if len(skills) >= len(old) // 2:
            self._shown = found  # a whole build: only its entries are kept
        else:
            old.update(found)
        return out

    def elements(self, shown: Sequence[PromptSkill]) -> list[str]:
        """The full-format element of every entry, in order."""
        last_shown, last_out = self._last_elements
        if len(last_shown) == len(shown):
            changed = moved(last_shown, shown)
            if len(changed) <= PATCH_LIMIT:
                patched = list(last_out)
                for i in changed:
                    patched[i] = self._entries.get(shown[i]) or full_entry(shown[i])
                    self._entries[shown[i]] = patched[i]
                self._last_elements = (shown, patched)
                return patched
        old = self._entries
        kept: dict[PromptSkill, str] = {}
        out: list[str] = []
        for entry in shown:
            text = old.get(entry)
            if text is None:
                text = full_entry(entry)
            kept[entry] = text
            out.append(text)
        self._entries = kept
        self._last_elements = (shown, out)
        return out
