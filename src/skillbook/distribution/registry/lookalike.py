"""Warnings for skills whose names imitate installed or well-known ones.

Input: the name a skill is installed under, the names already installed, and the
names of well-known skills (:data:`skillbook.security.known_names.WELL_KNOWN_NAMES`).
Output: warning lines, from the scanner's own name rules
(:func:`skillbook.security.rules_names.check_name`: look-alike letters from other
scripts, swapped look-alike characters, a known name plus a random tag, other
separators, one typo away). A warning does not block: ``githbu`` may be a real skill,
but the user should look twice before running it.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["lookalike_warnings"]


def lookalike_warnings(name: str, installed: Iterable[str]) -> list[str]:
    from skillbook.security.known_names import WELL_KNOWN_NAMES
    from skillbook.security.rules_names import check_name

    others = frozenset(n for n in installed if n and n != name)
    known = frozenset(WELL_KNOWN_NAMES) | others
    return [
        f"WARNING: {message}. Check that this is the skill you meant to install."
        for _rule, _severity, message in check_name(name, known)
    ]
