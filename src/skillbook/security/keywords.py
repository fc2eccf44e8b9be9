"""Where the rules' keywords occur in a text, found in one pass.

Input: the keywords of every rule family (lower case) and a lower-cased text.
Output: for each keyword present, the offsets where it starts. One Aho-Corasick
automaton over every keyword (``ahocorasick-rs``, compiled to a DFA) finds all of
them in a single scan, which is what keeps a corpus scan fast: most lines hold no
keyword, so most regexes never run. The DFA scans four to seven times faster than
the ``pyahocorasick`` trie used before (0.06-0.09 against 0.3-0.4 s of CPU over the
9 MB corpus), with the same matches.
"""

from __future__ import annotations

from collections.abc import Iterable

import ahocorasick_rs


class KeywordIndex:
    """An immutable automaton over a fixed set of keywords."""

    def __init__(self, words: Iterable[str]) -> None:
        self.words = frozenset(w.lower() for w in words if w)
        self._patterns = sorted(self.words)
        #: Keywords led by a newline (a command at the start of a line), without it.
        self._line_led = tuple((w, w[1:]) for w in self._patterns if w.startswith("\n"))
        self._automaton = (
            ahocorasick_rs.AhoCorasick(
                self._patterns,
                matchkind=ahocorasick_rs.MatchKind.Standard,
                implementation=ahocorasick_rs.Implementation.DFA,
            )
            if self._patterns
            else None
        )

    def occurrences(self, lower: str) -> dict[str, list[int]]:
        """Keyword -> start offsets in ``lower``, ascending (only keywords that occur).

        The text is searched as if a newline preceded it, so a keyword written as
        ``"\\nnc "`` (a command at the start of a line) also matches on the first line;
        such a match reports offset 0.
        """
        found: dict[str, list[int]] = {}
        if self._automaton is None:
            return found
        # A keyword led by a newline at the very start: what a newline before the text
        # would find (prepending one cost a copy of every file).
        for word, rest in self._line_led:
            if lower.startswith(rest):
                found[word] = [0]
        patterns = self._patterns
        # Overlapping: every occurrence of every keyword, also inside a longer one.
        for index, start, _end in self._automaton.find_matches_as_indexes(lower, overlapping=True):
            found.setdefault(patterns[index], []).append(start)
        return found
