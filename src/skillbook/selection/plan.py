"""How selection shapes what the model sees, designed around prompt caching.

Input: a :class:`~skillbook.pipeline.book.SkillBook` whose ``skills.selection.mode`` is not
``off``, and a :class:`~skillbook.selection.selector.Selector` over its eligible
skills. Output: a :class:`SelectionPlan` with

- :meth:`~SelectionPlan.system_section`: the ``## Skills (mandatory)`` section with
  the *standing* catalog only — ``always: true`` and pinned skills, in OpenClaw's
  format — and a note naming ``find_skills``. It depends on the skill set, never on
  the request, so the system prompt is byte-identical turn after turn and the
  provider's prompt cache keeps hitting;
- :meth:`~SelectionPlan.turn_block`: the skills that fit this request, in the same
  ``<available_skills>`` format, to put in front of the user's message. It becomes
  part of the conversation, so earlier turns (and their cache) never change; a
  request no skill fits gets no block at all;
- :attr:`~SelectionPlan.selector`: the ranking over every eligible skill, which the
  runtime's ``find_skills`` tool (:func:`skillbook.runtime.find_skills.find_tool`) searches.

The skills a turn lists are the router's (:func:`~skillbook.selection.router.route`):
one skill for ``direct``, the close ones for ``ambiguous``, none for ``nomatch``. With
``skills.selection.placement: system`` they are the system prompt's catalog for that
turn instead (:meth:`~SelectionPlan.turn_section`; ``nomatch``: no catalog).

Every eligible skill that a turn does not list is reported: the block says how many
more ``find_skills`` reaches and ``selection.unlisted`` names them. ``auto`` mode is
active only when OpenClaw's catalog would not fit the prompt budget whole (it is
compacted or truncated); otherwise the book's own catalog is used unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from skillbook import diagnostics as diag
from skillbook.diagnostics import Diagnostic
from skillbook.model import Skill
from skillbook.pipeline.prompt.home_paths import compact_skill_paths, home_prefixes
from skillbook.pipeline.prompt.skills_section import (
    format_skills_for_prompt,
    is_prompt_visible,
    skills_section,
)
from skillbook.selection.router import Route, catalog_formatter, route_selection
from skillbook.selection.selector import Selection, Selector

if TYPE_CHECKING:
    from skillbook.pipeline.book import SkillBook

__all__ = ["MAX_NAMED_UNLISTED", "SelectionPlan", "TurnBlock", "plan_for", "selection_active"]

#: How many unlisted skills a ``selection.unlisted`` message names before "and N more".
MAX_NAMED_UNLISTED: Final = 20
BLOCK_INTRO: Final = "Skills that fit this request (chosen from {total} available skills):"
BLOCK_FIND_NOTE: Final = "{count} other skills are reachable with `find_skills`."
BLOCK_FIND_NOTE_END: Final = "reachable with `find_skills`.\n\n"


def selection_active(book: SkillBook) -> bool:
    """True when ``skills.selection.mode`` applies to this book's catalog."""
    mode = book.config.skills.selection.mode
    if mode == "always":
        return True
    return mode == "auto" and (book.catalog.truncated or book.catalog.compact)


def _is_always(skill: Skill) -> bool:
    meta = skill.metadata
    return bool(meta is not None and meta.always)


@dataclass(frozen=True, slots=True)
class TurnBlock:
    """The per-request skills block and what it left out."""

    text: str
    selection: Selection
    listed: tuple[str, ...]
    unlisted: tuple[str, ...]
    diagnostics: tuple[Diagnostic, ...] = ()
    #: The router's decision for this request (``direct``, ``ambiguous``, ``nomatch``).
    route: Route | None = None

    @staticmethod
    def strip(message: str) -> str:
        """A user message without the block :meth:`apply` put in front of it."""
        if not message.startswith(BLOCK_INTRO.split("{", 1)[0]):
            return message
        for end in (BLOCK_FIND_NOTE_END, "</available_skills>\n\n"):
            at = message.find(end)
            if at >= 0:
                return message[at + len(end) :]
        return message

    def apply(self, user_text: str) -> str:
        """The user's message with the block in front of it (unchanged when empty)."""
        return f"{self.text}\n\n{user_text}" if self.text else user_text


class SelectionPlan:
    """Stable system section, per-request block and ``find_skills`` for one book."""

    def __init__(
        self,
        book: SkillBook,
        selector: Selector | None = None,
        *,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.book = book
        self.env = env
        self._selector = selector
        self.visible: tuple[Skill, ...] = tuple(s for s in book.eligible if is_prompt_visible(s))
        pinned = set(book.config.skills.selection.pinned)
        self.standing: tuple[Skill, ...] = tuple(
            s for s in self.visible if _is_always(s) or s.name in pinned
        )
        self.homes = home_prefixes(book.paths.home, book.paths.os_home)
        cfg = book.config.skills.selection
        #: ``message`` (the routed skills go in front of the user's message) or ``system``.
        self.placement: str = cfg.placement or "message"
        self.route_margin: float | None = cfg.route_margin
        #: The book's own catalog formatting, for any subset of its skills.
        self.format_catalog = catalog_formatter(book)
        known = {s.name for s in book.eligible}
        self.diagnostics: tuple[Diagnostic, ...] = tuple(
            diag.warning(
                "selection.pinned-unknown",
                f"skills.selection.pinned names {name!r}, which is not an eligible skill; "
                "check the name with `skillbook list`.",
            )
            for name in book.config.skills.selection.pinned
            if name not in known
        )

    @property
    def selector(self) -> Selector:
        """Built on first use: the system section needs no model, only turns and the tool do."""
        if self._selector is None:
            from skillbook.selection.options import selector_for

            self._selector, problems = selector_for(self.book, env=self.env)
            self.diagnostics += problems
        return self._selector

    @property
    def built(self) -> bool:
        return self._selector is not None

    def _catalog(self, skills: Sequence[Skill]) -> str:
        return format_skills_for_prompt(compact_skill_paths(skills, self.homes))

    def system_section(self, *, read_tool: str = "read") -> str:
        others = len(self.visible) - len(self.standing)
        note = (
            f"Skills are chosen per request: a user message may start with the skills that fit "
            f"it. {others} more skills are available: call `find_skills` with what you need "
            "when no listed skill fits."
        )
        return skills_section(self._catalog(self.standing) + "\n" + note, read_tool=read_tool)

    def turn_block(self, text: str, *, recent: Sequence[str] = ()) -> TurnBlock:
        selection = self.selector.select(text, recent=recent)
        routed = route_selection(selection, margin=self.route_margin, formatter=self.format_catalog)
        standing = {s.name for s in self.standing}
        listed = [s for s in routed.skills if s.name not in standing]
        visible = [s for s in self.visible if s.name not in standing]
        shown = {s.name for s in listed}
        unlisted = tuple(s.name for s in visible if s.name not in shown)
        block = ""
        if listed:
            intro = BLOCK_INTRO.format(total=len(self.visible))
            block = intro + self.format_catalog(listed)
            if unlisted:
                block += "\n" + BLOCK_FIND_NOTE.format(count=len(unlisted))
        found: tuple[Diagnostic, ...] = ()
        if unlisted:
            named = ", ".join(unlisted[:MAX_NAMED_UNLISTED])
            more = len(unlisted) - MAX_NAMED_UNLISTED
            found = (
                diag.info(
                    "selection.unlisted",
                    f"{len(unlisted)} eligible skills were not listed for this request "
                    f"(find_skills reaches them): {named}"
                    + (f" and {more} more" if more > 0 else ""),
                ),
            )
        return TurnBlock(block, selection, tuple(s.name for s in listed), unlisted, found, routed)

    def turn_section(self, block: TurnBlock, *, read_tool: str = "read") -> str:
        """The ``## Skills (mandatory)`` section for one turn (``placement: system``).

        ``direct``/``ambiguous``: the routed skills' catalog (with the standing ones,
        if any: it is then byte for byte OpenClaw's section for a skill filter naming
        those skills); ``nomatch``: the standing skills only, and with none of them
        no section at all — the catalog is suppressed for that request.
        """
        routed = block.route.skills if block.route is not None else ()
        names = {s.name for s in routed}
        skills = [*routed, *(s for s in self.standing if s.name not in names)]
        if not skills:
            return ""
        return skills_section(self.format_catalog(skills), read_tool=read_tool)


def plan_for(
    book: SkillBook,
    *,
    previous: SelectionPlan | None = None,
    env: Mapping[str, str] | None = None,
) -> SelectionPlan | None:
    """The plan for ``book``, or None when selection does not apply to it.

    A ``previous`` plan's selector is carried over and updated incrementally, so a
    reload after one changed skill re-embeds that skill only.
    """
    if not selection_active(book):
        return None
    same = (
        previous is not None
        and previous.book.config.skills.selection == book.config.skills.selection
    )
    if previous is not None and previous.built and same:
        selector = previous.selector
        selector.update(book.eligible)
        return SelectionPlan(book, selector, env=env if env is not None else previous.env)
    return SelectionPlan(book, env=env)
