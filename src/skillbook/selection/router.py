"""The skill router: per request, one skill, a few, or none.

Input: a request and a :class:`~skillbook.selection.selector.Selector` (or the
:class:`~skillbook.selection.selector.Selection` it already made). Output: a
:class:`Route` with one of three outcomes:

- ``direct``: one skill fits clearly — the first selected skill leads every other
  selected skill by at least the margin (or is the only one selected);
- ``ambiguous``: a few fit about equally — the selected skills whose score is within
  the margin of the first's, or above it (two or more, at most ``topK``; the learned
  ranker orders by its own model, so a later skill can have the higher fused score);
- ``nomatch``: no skill reaches the threshold (``minScore`` and the null-skill floor):
  the catalog is suppressed for that request.

"Selected" is what :meth:`Selector.select` selects: among the ``topK`` best and at
least the threshold. The margin is ``skills.selection.routeMargin``
(:data:`DEFAULT_ROUTE_MARGIN` when not set), on the same fused score.

For ``direct`` and ``ambiguous``, :attr:`Route.block` is the ``<available_skills>``
catalog of those skills as OpenClaw formats a catalog of exactly those skills (its
prompt with a skill filter naming them): skillbook's own prompt formatter, in load
order, under the book's compat profile (:func:`catalog_formatter`). ``nomatch`` has
no block.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from skillbook.model import Skill
from skillbook.pipeline.prompt.home_paths import compact_skill_paths
from skillbook.pipeline.prompt.skills_section import build_prompt, format_skills_for_prompt
from skillbook.selection.selector import Candidate, Selection, Selector

if TYPE_CHECKING:
    from skillbook.pipeline.book import SkillBook

__all__ = [
    "DEFAULT_ROUTE_MARGIN",
    "OUTCOMES",
    "Outcome",
    "Route",
    "catalog_formatter",
    "route",
    "route_selection",
]

Outcome = Literal["direct", "ambiguous", "nomatch"]
OUTCOMES: Final[tuple[Outcome, ...]] = ("direct", "ambiguous", "nomatch")
#: Skills scoring less than this below the best selected one are "ambiguous". Chosen
#: on the tuning parts of both labelled sets (hybrid default): at 0.1 the routed
#: skills hold an expected one nearly as often as every selected skill does (0.808 vs
#: 0.819 and 0.731 vs 0.737) while most matches stay ``direct`` (88 % and 72 %);
#: docs/selection.md, Routing, has the held-out figures.
DEFAULT_ROUTE_MARGIN: Final = 0.1

#: Renders the catalog of the given skills (in the order given).
Formatter = Callable[[Sequence[Skill]], str]


@dataclass(frozen=True, slots=True)
class Route:
    """What the router decided for one request."""

    outcome: Outcome
    #: The routed skills, best first: one for ``direct``, two or more for
    #: ``ambiguous``, none for ``nomatch``.
    candidates: tuple[Candidate, ...]
    #: The ``<available_skills>`` catalog of those skills; ``""`` for ``nomatch``.
    block: str
    selection: Selection
    margin: float

    @property
    def skills(self) -> tuple[Skill, ...]:
        return tuple(c.skill for c in self.candidates)

    def names(self) -> list[str]:
        return [c.name for c in self.candidates]

    def to_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "skills": self.names(),
            "scores": [round(c.score, 4) for c in self.candidates],
            "threshold": round(self.selection.threshold, 4),
            "margin": self.margin,
        }


def _default_formatter(skills: Sequence[Skill]) -> str:
    return format_skills_for_prompt(compact_skill_paths(skills, ()))


def catalog_formatter(book: SkillBook) -> Formatter:
    """The book's catalog formatting for a subset of its eligible skills.

    What OpenClaw renders when a skill filter names exactly those skills: the book's
    compat profile (2026.9 sorts by name and words the header its way), its prompt
    limits and home prefixes, the skills in load order.
    """
    from skillbook.config.limits import Limits
    from skillbook.pipeline.book import agent_prompt_chars
    from skillbook.pipeline.prompt.home_paths import home_prefixes
    from skillbook.pipeline.prompt.skills_section import PromptLimits

    profile = book.profile
    limits = Limits.from_config(book.config.skills.limits, profile)
    max_chars = limits.max_skills_prompt_chars
    if profile.catalog.agent_limits:
        max_chars = agent_prompt_chars(book.config, book.agent, max_chars)
    prompt_limits = PromptLimits(max_skills=limits.max_skills_in_prompt, max_chars=max_chars)
    homes = home_prefixes(
        book.paths.home if profile.catalog.compact_effective_home else None, book.paths.os_home
    )
    order = {id(s): i for i, s in enumerate(book.eligible)}

    def render(skills: Sequence[Skill]) -> str:
        in_order = sorted(skills, key=lambda s: order.get(id(s), len(order)))
        return build_prompt(in_order, limits=prompt_limits, homes=homes, profile=profile).text

    return render


def route_selection(
    selection: Selection,
    *,
    margin: float | None = None,
    top_k: int | None = None,
    formatter: Formatter | None = None,
) -> Route:
    """The route for a selection already made (no second ranking)."""
    gap = DEFAULT_ROUTE_MARGIN if margin is None else margin
    selected = selection.selected if top_k is None else selection.selected[:top_k]
    if not selected:
        return Route("nomatch", (), "", selection, gap)
    best = selected[0].score
    close = (selected[0], *(c for c in selected[1:] if best - c.score < gap))
    outcome: Outcome = "direct" if len(close) == 1 else "ambiguous"
    render = formatter or _default_formatter
    return Route(outcome, close, render([c.skill for c in close]), selection, gap)


def route(
    query: str,
    selector: Selector,
    *,
    recent: Sequence[str] = (),
    margin: float | None = None,
    top_k: int | None = None,
    formatter: Formatter | None = None,
) -> Route:
    """Route ``query``: ``direct`` (one skill), ``ambiguous`` (a few) or ``nomatch``.

    ``selector`` ranks (``recent`` turns count as context, as in
    :meth:`Selector.select`); ``margin`` (default :data:`DEFAULT_ROUTE_MARGIN`) says
    how close to the best a skill must score to make the request ambiguous; ``top_k``
    caps the skills considered (default: the selector's ``topK``); ``formatter``
    renders the block (default: OpenClaw's full catalog format with absolute paths;
    :func:`catalog_formatter` gives a book's own).
    """
    selection = selector.select(query, recent=recent, top_k=top_k)
    return route_selection(selection, margin=margin, formatter=formatter)
