"""Near-duplicates: a new draft that resembles a draft or skill already there.

Input: a draft, the other drafts and the loaded skills. Output: :class:`NearDuplicate`
values, best first. Two kinds, with documented thresholds:

``steps``        the normalised steps (:mod:`skillbook.experience.behaviour`), read
                 as one sequence of words, match for at least :data:`STEP_SIMILARITY`
                 of their length (``difflib`` ratio), though the fingerprints differ;
``description``  the request's content words (words of three letters or more, its
                 parameter values and common words left out) and a skill's
                 description share at least
                 :data:`MIN_SHARED_WORDS` words and :data:`DESCRIPTION_SIMILARITY` of the
                 shorter set (the overlap coefficient).

A draft with the same fingerprint is not a near-duplicate: it is the same draft (it
is updated instead). Nothing here does I/O.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from typing import Final

from skillbook.experience._words import STOPWORDS
from skillbook.experience.draft import Draft, NearDuplicate

__all__ = [
    "DESCRIPTION_SIMILARITY",
    "MIN_SHARED_WORDS",
    "STEP_SIMILARITY",
    "find_near_duplicates",
    "step_similarity",
    "word_overlap",
]

STEP_SIMILARITY: Final = 0.8
DESCRIPTION_SIMILARITY: Final = 0.5
MIN_SHARED_WORDS: Final = 2
_WORD: Final = re.compile(r"[a-z][a-z0-9]{2,}")


def step_similarity(a: Sequence[str], b: Sequence[str]) -> float:
    """How much two normalised step lists agree, word by word (0 to 1)."""
    words_a = [w for step in a for w in (*step.split(), "\n")]
    words_b = [w for step in b for w in (*step.split(), "\n")]
    if not a or not b:
        return 0.0
    return difflib.SequenceMatcher(None, words_a, words_b, autojunk=False).ratio()


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in STOPWORDS}


def word_overlap(a: str, b: str) -> tuple[float, int]:
    """The overlap coefficient of the content words, and how many are shared."""
    wa, wb = content_words(a), content_words(b)
    if not wa or not wb:
        return 0.0, 0
    shared = len(wa & wb)
    return shared / min(len(wa), len(wb)), shared


def find_near_duplicates(
    draft: Draft,
    drafts: Iterable[Draft],
    skills: Iterable[tuple[str, str, str]] = (),
) -> tuple[NearDuplicate, ...]:
    """``skills`` are ``(name, description, path)`` of the loaded skills."""
    found: list[NearDuplicate] = []
    for other in drafts:
        if other.id == draft.id or other.fingerprint == draft.fingerprint:
            continue
        ratio = step_similarity(draft.normalised, other.normalised)
        if ratio >= STEP_SIMILARITY:
            found.append(NearDuplicate("steps", other.id, round(ratio, 2)))
    task = draft.request
    for param in draft.params:
        task = task.replace(param.value, " ")
    for name, description, path in skills:
        if name == draft.id:
            continue
        ratio, shared = word_overlap(task, description)
        if shared >= MIN_SHARED_WORDS and ratio >= DESCRIPTION_SIMILARITY:
            found.append(NearDuplicate("description", name, round(ratio, 2), path))
    return tuple(sorted(found, key=lambda d: -d.similarity))
