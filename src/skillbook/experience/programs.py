"""Which programs a shell command runs: ``tail``, ``cut``, ``paste`` and ``bc`` for
``tail -n +2 f | cut -d, -f 2 | paste -sd+ - | bc``.

Used where a learned skill says what its run touched and where a run's command is
matched with the one a skill states (same program first). A reading, not a parser:
commands that do not tokenize (an unclosed quote) fall back to splitting on white space.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from typing import Final

__all__ = ["program_of", "programs_of"]

_ASSIGNMENT: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
#: Words that run the program after them rather than being it.
_WRAPPERS: Final = frozenset({"sudo", "env", "command", "exec", "time", "nohup"})
#: Tokens that end one simple command and start the next.
_SEPARATORS: Final = frozenset({"|", "||", "&&", ";", "&", "|&", "(", ")", ";;"})
_REDIRECT: Final = re.compile(r"^\d*[<>]+&?$")


def program_of(words: Sequence[str]) -> str | None:
    """The program a simple command's words run (its base name), or ``None``."""
    for word in words:
        if _ASSIGNMENT.match(word) or word in _WRAPPERS:
            continue
        return word.rsplit("/", 1)[-1]
    return None


def programs_of(command: str) -> list[str]:
    """The programs of every simple command in ``command``, in order, once each."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        tokens = command.split()
    found: dict[str, None] = {}
    words: list[str] = []
    skip_next = False
    for token in [*tokens, ";"]:
        if skip_next:  # the file of a redirection (`> out.txt`) is not a program
            skip_next = False
            continue
        if token in _SEPARATORS:
            program = program_of(words)
            if program:
                found.setdefault(program)
            words = []
        elif _REDIRECT.match(token):
            skip_next = True
        else:
            words.append(token)
    return list(found)
