"""Shell commands as words, for the ``exec`` allowlists (``skills.exec.allow``).

Input: a command string as the model passes it to ``exec`` (run by ``/bin/sh -c``),
and allowlist entries from the config. Output: the command's words, or why it is not
a *simple* command, and whether the words start with an entry's words.

An allowlist must not be fooled by shell syntax: ``curl -s wttr.in; rm -rf ~`` starts
with the text ``curl -s wttr.in``, but it is two commands. So only a simple command can
match: one line, no operator (``; & | < > ( )``), no command substitution (`` ` ``,
``$(``). Words are compared after quote removal, so ``"curl" -s`` is ``curl -s``. An
entry matches when its words are the command's first words; a last entry word ending
in ``*`` matches any word starting with what comes before the ``*``. Words after the
entry's are free: an entry allows every argument that may follow it.

Pure functions, no I/O; the config validates entries with them and the runtime's
approval decides with them.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Final

#: Characters that make shell operators; a word made only of them is one.
OPERATOR_CHARS: Final = "();<>|&"
#: Text that substitutes another command's output wherever it appears.
_SUBSTITUTIONS: Final = ("`", "$(", "<(", ">(")
WILDCARD: Final = "*"


def command_words(command: str) -> list[str] | str:
    """The words of a simple command, or a reason (a ``str``) why it is not one."""
    if any(c in command for c in "\n\r\0"):
        return "it has more than one line"
    found = next((s for s in _SUBSTITUTIONS if s in command), None)
    if found is not None:
        return f"it substitutes a command ({found})"
    lexer = shlex.shlex(command, posix=True, punctuation_chars=OPERATOR_CHARS)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        words = list(lexer)
    except ValueError as exc:  # an unclosed quote
        return f"it cannot be split into words ({exc})"
    operator = next((w for w in words if w and all(c in OPERATOR_CHARS for c in w)), None)
    if operator is not None:
        return f"it uses the shell operator {operator!r}"
    if not words:
        return "it is empty"
    return words


def entry_problem(entry: str) -> str | None:
    """Why an allowlist entry can never match, or None."""
    words = command_words(entry)
    if isinstance(words, str):
        return f"{entry!r} is not a simple command: {words}"
    if any(WILDCARD in w for w in words[:-1]) or WILDCARD in words[-1][:-1]:
        return f"{entry!r}: `*` may only end the last word"
    return None


def starts_with(words: Sequence[str], entry: str) -> bool:
    """Whether the command ``words`` begin with the allowlist ``entry``'s words."""
    prefix = command_words(entry)
    if isinstance(prefix, str) or len(words) < len(prefix):
        return False
    *fixed, last = prefix
    if list(words[: len(fixed)]) != fixed:
        return False
    word = words[len(fixed)]
    if last.endswith(WILDCARD):
        return word.startswith(last[: -len(WILDCARD)])
    return word == last
