"""``skillbook.base.shell_words``: allowlist entries match simple commands only."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillbook.base.shell_words import command_words, entry_problem, starts_with


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("curl -s wttr.in/Lisbon", ["curl", "-s", "wttr.in/Lisbon"]),
        ('curl -s "wttr.in/Lisbon?format=3"', ["curl", "-s", "wttr.in/Lisbon?format=3"]),
        ("./x.sh 'a b' c\\ d", ["./x.sh", "a b", "c d"]),
        ("echo a#b", ["echo", "a#b"]),
    ],
)
def test_simple_commands_are_split_into_words(command: str, words: list[str]) -> None:
    assert command_words(command) == words


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("a; b", "operator ';'"),
        ("a && b", "operator '&&'"),
        ("a | b", "operator '|'"),
        ("a > f", "operator '>'"),
        ("a &", "operator '&'"),
        ("(a)", "operator '('"),
        ("a $(b)", "substitutes a command ($()"),
        ("a `b`", "substitutes a command (`)"),
        ("diff <(a) b", "substitutes a command (<()"),
        ("a\nb", "more than one line"),
        ("a 'b", "cannot be split"),
        ("   ", "empty"),
    ],
)
def test_other_commands_say_why_they_are_not_simple(command: str, why: str) -> None:
    got = command_words(command)
    assert isinstance(got, str) and why in got


def test_prefix_matching_is_word_by_word() -> None:
    words = command_words("git status -s")
    assert isinstance(words, list)
    assert starts_with(words, "git status")
    assert starts_with(words, "git")
    assert not starts_with(words, "git stat")  # a word, not a text prefix
    assert starts_with(words, "git stat*")
    assert not starts_with(words, "git status -s --porcelain")
    assert not starts_with(words, "git | x")  # an entry that is not simple matches nothing


def test_entry_problems() -> None:
    assert entry_problem("curl -s wttr.in/*") is None
    assert entry_problem("curl * x") == "'curl * x': `*` may only end the last word"
    assert entry_problem("a;b") is not None


WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-./=_", min_size=1, max_size=8)


@given(
    st.lists(WORD, min_size=1, max_size=4),
    st.sampled_from([";", "&&", "||", "|", "&", ">", "<", ">>", "\n", "$(", "`"]),
    st.lists(WORD, min_size=1, max_size=3),
)
def test_no_operator_or_substitution_ever_passes(
    head: list[str], operator: str, tail: list[str]
) -> None:
    """Whatever the words: a command joined by an operator is never simple, so an
    allowlist entry equal to its first command never matches it."""
    command = " ".join(head) + operator + " ".join(tail)
    assert isinstance(command_words(command), str)
