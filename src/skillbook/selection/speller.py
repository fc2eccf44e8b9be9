"""One-edit corrections of request words against the catalog's words.

The one home of the speller: the selector's lexical channels, a selector restored
from its saved file and the numpy-free fast path all use :class:`Speller`. It imports
only ``re``, so a fresh ``select`` process reads it without the selection modules.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Final

__all__ = ["SPELL_LONGEST", "SPELL_LOOKUPS", "SPELL_MAX", "SPELL_MIN", "Speller"]

#: Words shorter than this are never corrected (four-letter words have too many
#: neighbours one edit away: "loud" would become "load") nor offered.
SPELL_MIN: Final = 5
#: Corrections added to one request at most (a pasted log is not a typed request).
SPELL_MAX: Final = 8
#: Longer words are no typos (and their delete forms would cost their length squared).
SPELL_LONGEST: Final = 30
#: Distinct unknown words looked up per request: a pasted document is no typed request.
SPELL_LOOKUPS: Final = 64
_SPELL_RE: Final = re.compile(r"\b[^\W\d_]{5,30}\b")


def _deletes(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


def offered(word: str) -> bool:
    """Whether a catalog word can be offered as a correction."""
    return SPELL_MIN <= len(word) <= SPELL_LONGEST and word.isalpha()


class Speller:
    """One-edit corrections of request words against the catalog's words.

    A symmetric-delete index (each catalog word under every form with one letter
    removed) finds, for a word the catalog never uses, the catalog words one
    insertion, deletion, substitution or transposition away without comparing it
    with every word. A correction keeps the first letter (typos rarely change it, and
    that halves the false friends) and prefers the word more skills use.

    ``lazy``: build the index on the first word that needs it. A selector restored
    from its file answers most requests without one (no word both the catalog and
    the lexicon miss), and building it for a thousand skills' words cost more CPU
    than ranking them; a built selector builds it with its other indexes.
    """

    def __init__(self, counts: dict[str, int], *, lazy: bool = False) -> None:
        self.counts = counts
        self._built: dict[str, list[str]] | None = None
        if not lazy:
            self._index()

    @classmethod
    def of(cls, word_sets: Sequence[frozenset[str]]) -> Speller:
        """From each skill's distinct words (any words: those that cannot be offered,
        too short, too long or not letters only, are dropped here, once per word)."""
        from collections import Counter
        from itertools import chain

        counts = Counter(chain.from_iterable(word_sets))
        return cls({w: n for w, n in counts.items() if offered(w)})

    def _index(self) -> dict[str, list[str]]:
        if self._built is None:
            index: dict[str, list[str]] = {}
            for word in self.counts:
                for d in _deletes(word):
                    index.setdefault(d, []).append(word)
            self._built = index
        return self._built

    def correct(self, word: str, is_word: Callable[[str], bool] | None = None) -> str | None:
        """The catalog word one edit from ``word``, or None (known, short or no match).

        ``is_word``: a lexicon of real words, which are never corrected ("milk" is
        not a typo of "mail" even when the catalog only says "mail").
        """
        if not SPELL_MIN <= len(word) <= SPELL_LONGEST or word in self.counts:
            return None
        if is_word is not None and is_word(word):
            return None
        index = self._index()
        found: set[str] = set(index.get(word, ()))
        for d in _deletes(word):
            found.update(index.get(d, ()))
            if d in self.counts:
                found.add(d)
        found = {w for w in found if w[0] == word[0] and len(w) >= SPELL_MIN}
        if not found:
            return None
        return max(sorted(found), key=lambda w: self.counts[w])

    def corrections(
        self,
        text: str,
        is_word: Callable[[str], bool] | None = None,
        known_stem: Callable[[str], bool] | None = None,
    ) -> list[str]:
        """Corrections for the words of ``text``, in order, each once.

        ``known_stem``: whether a word's stem is indexed already ("months" when the
        catalog says "month"): such a word is no typo.
        """
        out: dict[str, None] = {}
        looked: set[str] = set()
        for word in _SPELL_RE.findall(text.casefold()):
            if word in looked or word in self.counts:
                continue
            looked.add(word)
            if len(looked) > SPELL_LOOKUPS:
                break
            if known_stem is not None and known_stem(word):
                continue
            fix = self.correct(word, is_word)
            if fix is not None:
                out[fix] = None
                if len(out) >= SPELL_MAX:
                    break
        return list(out)
