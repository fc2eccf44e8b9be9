"""Which programs a shell command runs (what a learned skill says its run touched)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillbook.experience.programs import program_of, programs_of


@pytest.mark.parametrize(
    ("command", "programs"),
    [
        ("tail -n +2 f.csv | cut -d, -f 2 | paste -sd+ - | bc", ["tail", "cut", "paste", "bc"]),
        ("cd /tmp && /usr/bin/git status; ls -la", ["cd", "git", "ls"]),
        ("sort a.txt > out.txt 2> err.log", ["sort"]),  # redirection targets are files
        ("LANG=C sudo env grep -c x f | wc -l", ["grep", "wc"]),
        ("echo 'a | b' && echo \"c; d\"", ["echo"]),  # separators inside quotes
        ("(cd src && make) || make -C src", ["cd", "make"]),
        ("echo 'unclosed | wc", ["echo", "wc"]),  # no tokens: split on white space
        ("", []),
    ],
)
def test_every_simple_command_names_its_program(command: str, programs: list[str]) -> None:
    assert programs_of(command) == programs


def test_the_program_of_a_simple_command_skips_assignments_and_wrappers() -> None:
    assert program_of(["A=1", "nohup", "time", "./run.sh", "x"]) == "run.sh"
    assert program_of(["A=1"]) is None


@given(st.text(max_size=80))
def test_any_text_gives_a_list_of_names_without_separators(command: str) -> None:
    found = programs_of(command)
    assert len(found) == len(set(found))
    assert all(p and p not in {"|", "&&", ";", "||"} for p in found)
