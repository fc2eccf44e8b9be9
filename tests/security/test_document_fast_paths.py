"""The cheaper ways the document and the keyword pass compute their indexes give what
the ways they replaced gave (issue 22): line starts, the distinct non-ASCII characters
and the keyword occurrences, on random texts dense in keywords, newlines and non-ASCII."""

from __future__ import annotations

import re
from itertools import accumulate

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillbook.security.document import Document
from skillbook.security.scanner import INDEX

_KEYWORDS = sorted(INDEX.words)
_TEXT = st.lists(
    st.one_of(
        st.sampled_from(_KEYWORDS),
        st.sampled_from(("\n", "\r\n", " ", "\u00e9", "\u0441", "\u200b", "\U0001f600", "nc ")),
        st.text(max_size=4),
    ),
    max_size=30,
).map("".join)


def _old_line_starts(text: str) -> list[int]:
    starts = list(accumulate(map((1).__add__, map(len, text.split("\n"))), initial=0))
    starts.pop()
    return starts


def _old_occurrences(lower: str) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    patterns = INDEX._patterns
    assert INDEX._automaton is not None
    for index, start, _end in INDEX._automaton.find_matches_as_indexes(
        "\n" + lower, overlapping=True
    ):
        found.setdefault(patterns[index], []).append(max(start - 1, 0))
    return found


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_TEXT)
def test_the_indexes_match_the_ways_they_replaced(text: str) -> None:
    doc = Document(text, "notes.md", index=INDEX)
    assert doc._line_starts == _old_line_starts(text)
    assert doc.non_ascii == frozenset(re.findall(r"[^\x00-\x7f]", text))
    assert INDEX.occurrences(doc.lower) == _old_occurrences(doc.lower)


def test_a_keyword_led_by_a_newline_on_the_first_line() -> None:
    assert INDEX.occurrences("nc 10.0.0.1 4444\nnc x")["\nnc "] == [0, 16]
    assert "\nnc " not in INDEX.occurrences("xnc 10.0.0.1")
