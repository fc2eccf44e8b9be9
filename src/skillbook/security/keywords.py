"""Where the rules' keywords occur in a text, found in one pass.

Input: the keywords of every rule family (lower case) and a lower-cased text.
Output: for each keyword present, the offsets where it starts. An Aho-Corasick
automaton (``pyahocorasick``) finds all of them in a single scan, which is what
keeps a corpus scan fast: most lines hold no keyword, so most regexes never run.
"""

from __future__ import annotations

from collections.abc import Iterable

import ahocorasick


class KeywordIndex:
    """An immutable automaton over a fixed set of keywords."""

    def __init__(self, words: Iterable[str]) -> None:
        self.words = frozenset(w.lower() for w in words if w)
        self._automaton = ahocorasick.Automaton()
        for word in sorted(self.words):
            self._automaton.add_word(word, word)
        if self.words:
            self._automaton.make_automaton()

    def occurrences(self, lower: str) -> dict[str, list[int]]:
        """Keyword -> start offsets in ``lower`` (only keywords that occur).

        The text is searched as if a newline preceded it, so a keyword written as
        ``"\\nnc "`` (a command at the start of a line) also matches on the first line;
        such a match reports offset 0.
        """
        found: dict[str, list[int]] = {}
        if not self.words:
            return found
        for end, word in self._automaton.iter("\n" + lower):
            found.setdefault(word, []).append(max(end - len(word), 0))
        return found
