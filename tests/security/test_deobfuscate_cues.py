"""The cheaper cue tests of the deobfuscation rewrite the same lines as the patterns
they replaced (issue 22): random texts dense in quotes, ``+``, escapes and ``$IFS``
give the same view and the same tricks through the old path and the new one."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillbook.security import deobfuscate as d

#: The cues as they were before: one pattern each, searched over the whole text.
_OLD_CONCAT_CUE = re.compile(r"['\"][ \t]*\+[ \t]*['\"]")


def _old_join_literals(text: str, tricks: list[d.Trick]) -> str:
    if "+" not in text:
        return text
    return d._by_line(text, _OLD_CONCAT_CUE, d._concat_line, tricks)


def _old_unescape(text: str, tricks: list[d.Trick]) -> str:
    if "\\" not in text:
        return text
    return d._by_line(text, d._ESCAPE_CUE, d._unescape_line, tricks)


def _old_replace_ifs(text: str, tricks: list[d.Trick]) -> str:
    if "IFS" not in text:
        return text
    return d._by_line(text, d._IFS, d._ifs_line, tricks)


_PIECES = st.sampled_from(
    ("'", '"', "+", " ", "\t", "\n", "cu", "rl", "sh", "$", "IFS", "${IFS}", "$IFS", "{", "}",
     "\\", "\\x63", "\\x75", "\\x72", "\\x6c", "\\143", "\\u0063", "$'", "x", "=", ";", "a1")
)  # fmt: skip
_TEXT = st.lists(st.one_of(_PIECES, st.text(max_size=3)), max_size=40).map("".join)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_TEXT)
def test_the_new_cues_rewrite_what_the_old_ones_did(text: str) -> None:
    for new, old in ((d.join_literals, _old_join_literals), (d.unescape, _old_unescape),
                     (d.replace_ifs, _old_replace_ifs)):  # fmt: skip
        new_tricks: list[d.Trick] = []
        old_tricks: list[d.Trick] = []
        assert new(text, new_tricks) == old(text, old_tricks)
        assert new_tricks == old_tricks


def test_examples_of_each_cue() -> None:
    for text in ("x = 'cu' +  'rl'", "'cu'\t+\t\"rl\"", "a + 'b'", "'a' +\n'b'", "+ 'x'"):
        new: list[d.Trick] = []
        old: list[d.Trick] = []
        assert d.join_literals(text, new) == _old_join_literals(text, old)
        assert new == old
    tricks: list[d.Trick] = []
    assert d.join_literals("x = 'cu' + 'rl'", tricks) == "x = 'curl'"
    assert [t.kind for t in tricks] == ["string split into pieces"]
    assert d.unescape("$'\\x63\\x75\\x72\\x6c' -s x", []) == "'curl' -s x"
    assert d.unescape('run "\\x63\\x75\\x72\\x6c"', []) == 'run "curl"'
    assert d.replace_ifs("cat${IFS}/etc/passwd", []) == "cat /etc/passwd"
    assert d.replace_ifs("IFS=: read a b", []) == "IFS=: read a b"
