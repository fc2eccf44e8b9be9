"""Optional refinement of a draft by a model: a better name, description and wording.

Input: a :class:`~skillbook.experience.draft.Draft` and a
:class:`~skillbook.runtime.providers.ChatModel` (``--refine`` uses the configured
provider). Output: a :class:`Refinement` with the refined draft, or the unrefined one
and the reason when the model failed or answered something unusable.

The model sees the request, the steps and the current texts, and answers JSON with
``slug``, ``title``, ``description`` and one ``notes`` sentence per step. Only those
texts change: the commands, parameters, checks, fingerprint and files read are the
draft's own, whatever the model says. A slug that breaks the name rules, a description
over 1024 characters or one that does not say when to use the skill is refused.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any, Final

from skillbook.experience.draft import Draft
from skillbook.runtime.providers.base import ChatModel, Message, TextDelta

__all__ = ["REFINE_INSTRUCTIONS", "Refinement", "refine_draft"]

REFINE_INSTRUCTIONS: Final = (
    "You improve the wording of a skill that was learned from a successful agent run. "
    "Reply with one JSON object and nothing else: "
    '{"slug": "kebab-case-name-of-at-most-5-words", "title": "short imperative title", '
    '"description": "what the skill does and, starting with \'Use when\', when to use it '
    '(at most 300 characters)", "notes": ["one sentence per step, in order"]}. '
    "Never change, add or remove commands: they are kept exactly as they ran."
)
_SLUG: Final = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_WHEN: Final = re.compile(r"\buse (?:it |this )?(?:when|for|to|if)\b", re.I)
MAX_SLUG_CHARS: Final = 40


@dataclass(frozen=True, slots=True)
class Refinement:
    draft: Draft
    #: Why the draft was kept unrefined, or None when it was refined.
    error: str | None = None


async def refine_draft(draft: Draft, model: ChatModel) -> Refinement:
    """Ask ``model`` for better texts; never raises for a failing or confused model."""
    prompt = json.dumps(
        {
            "request": draft.request,
            "title": draft.title,
            "description": draft.description,
            "parameters": [p.name for p in draft.params],
            "steps": [s.command or s.path or s.tool for s in draft.steps],
        },
        ensure_ascii=False,
        indent=2,
    )
    try:
        parts: list[str] = []
        async for event in model.stream((Message.user(prompt),), (), REFINE_INSTRUCTIONS):
            if isinstance(event, TextDelta):
                parts.append(event.text)
    except Exception as exc:  # a model failure keeps the unrefined draft
        return Refinement(draft, f"the model request failed: {type(exc).__name__}: {exc}")
    try:
        return Refinement(_apply(draft, _parse("".join(parts))))
    except ValueError as exc:
        return Refinement(draft, str(exc))


def _parse(text: str) -> dict[str, Any]:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("the model did not answer with a JSON object")
    try:
        value = json.loads(text[start : end + 1])
    except json.JSONDecodeError as exc:
        raise ValueError(f"the model's answer is not valid JSON ({exc.msg})") from None
    if not isinstance(value, dict):
        raise ValueError("the model's answer is not a JSON object")
    return value


def _apply(draft: Draft, answer: dict[str, Any]) -> Draft:
    slug = str(answer.get("slug") or "").strip().lower()
    if not _SLUG.match(slug) or len(slug) > MAX_SLUG_CHARS:
        raise ValueError(f"the model's slug {slug!r} breaks the name rules")
    title = " ".join(str(answer.get("title") or "").split())
    description = " ".join(str(answer.get("description") or "").split()).replace("---", "—")
    if not title or len(title) > 120:
        raise ValueError("the model's title is empty or too long")
    if not description or len(description) > 1024 or not _WHEN.search(description):
        raise ValueError(
            "the model's description is empty, too long or does not say when to use it"
        )
    notes = answer.get("notes")
    steps = draft.steps
    if isinstance(notes, list) and len(notes) == len(steps):
        steps = tuple(
            replace(step, note=" ".join(str(n).split())[:300])
            for step, n in zip(steps, notes, strict=True)
        )
    stamp = draft.id[:15]
    return replace(
        draft,
        id=f"{stamp}-{slug}",
        slug=slug,
        title=title,
        description=description,
        steps=steps,
        refined=True,
        refine_error=None,
    )
