"""Parameters: which values of a request vary, their names, and shell-correct substitution."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillbook.experience.params import Parameter, candidate_values, extract_parameters, substitute


def test_values_of_a_request() -> None:
    found = candidate_values(
        'Count "hello world" in ~/notes/a.txt, report.md and https://x.org/p?q=1 for Lisbon 3 times'
    )
    assert [(v, k) for v, k, _ in found] == [
        ("hello world", "text"),
        ("~/notes/a.txt", "file"),
        ("report.md", "file"),
        ("https://x.org/p?q=1", "url"),
        ("Lisbon", "name"),
        ("3", "number"),
    ]


def test_only_values_the_commands_use_become_parameters_named_by_context() -> None:
    params = extract_parameters(
        "Count the words in file /tmp/x/notes.txt and show the top 3 for Lisbon",
        ["wc -w /tmp/x/notes.txt", "sort | head -n 3"],
    )
    assert params == (
        Parameter("file", "/tmp/x/notes.txt", "file"),
        Parameter("top", "3", "number"),
    )
    # A sentence's first word is not a name; repeats of a kind are numbered.
    assert extract_parameters("Paris or Rome?", ["echo Paris"]) == ()
    assert [
        p.name for p in extract_parameters("compare a.txt with b.txt", ["diff a.txt b.txt"])
    ] == [
        "file",
        "file_2",
    ]
    named = extract_parameters("weather for city Lisbon, top 3", ["curl wttr.in/Lisbon | head -3"])
    assert [p.name for p in named] == ["city", "top"]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cat /tmp/a b", 'cat "${file}" b'),
        ('echo "in /tmp/a now"', 'echo "in ${file} now"'),
        ("echo 'x /tmp/a'", "echo 'x '\"${file}\"''"),
        ("cat '/tmp/a'", 'cat "${file}"'),
        ("cat /tmp/ab", "cat /tmp/ab"),  # not the whole word
        ("echo \\/tmp/a", "echo \\/tmp/a"),  # escaped: left alone
    ],
)
def test_substitution_quotes_for_its_place(command: str, expected: str) -> None:
    assert substitute(command, [Parameter("file", "/tmp/a", "file")]) == expected


def test_a_signed_number_that_shares_the_digits_is_not_the_parameter() -> None:
    column = Parameter("column", "2", "number")
    # The header skip (+2) is a different quantity from the column asked for (2).
    assert (
        substitute("tail -n +2 data.csv | cut -d, -f 2 | paste -sd+ - | bc", [column])
        == 'tail -n +2 data.csv | cut -d, -f "${column}" | paste -sd+ - | bc'
    )
    # Written only signed, the signed form is the value the request gave.
    assert substitute("head -3 notes.txt", [Parameter("first", "3", "number")]) == (
        'head -"${first}" notes.txt'
    )
    # Every plain occurrence is still the parameter.
    assert substitute("seq 5 | head -n 5 | tail -n +5", [Parameter("n", "5", "number")]) == (
        'seq "${n}" | head -n "${n}" | tail -n +5'
    )


SAFE = st.text(
    alphabet=st.characters(codec="ascii", categories=("L", "N"), include_characters=" ./-_:,"),
    min_size=1,
    max_size=12,
).filter(lambda v: v.strip() == v and v[0].isalnum() and v[-1].isalnum())
CONTEXTS = st.sampled_from(["echo {v}", 'echo "<{v}>"', "echo '<{v}>'", "echo a{v}", "echo '{v}'"])


@settings(max_examples=40, deadline=None)
@given(value=SAFE, context=CONTEXTS)
def test_a_substituted_command_prints_what_the_original_printed(value: str, context: str) -> None:
    command = context.format(v=value)
    param = Parameter("p", value, "text")
    replaced = substitute(command, [param])

    def run(script: str) -> str:
        done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
        return done.stdout

    assert run(f"p={value!r}\n{replaced}") == run(command)
