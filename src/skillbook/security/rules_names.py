"""Rules for skill names that pass for someone else's: look-alike letters from other
scripts (``gіthub`` with a Cyrillic і), typosquats (``githbu``, ``gog-5w7zvby``).

Input: a skill name and the set of well-known names. Output: ``(rule, severity,
message)`` verdicts. The Unicode confusables come from
:mod:`~skillbook.security.lookalike_table` (derived from the ``confusable_homoglyphs``
package).
"""

from __future__ import annotations

import functools
import unicodedata

from skillbook.security import patterns
from skillbook.security.findings import Severity
from skillbook.security.lookalike_table import LATIN

_C, _H, _M = Severity.CRITICAL, Severity.HIGH, Severity.MEDIUM

Verdict = tuple[str, Severity, str]

#: ``gog-5w7zvby``: a known name plus a random tag, as in the mass clones of clawhub#123.
_RANDOM_SUFFIX = patterns.compile(r"^(?P<base>.+?)-(?P<tag>[a-z0-9]{5,8})$")
_ASCII_LOOKALIKES = (("rn", "m"), ("vv", "w"), ("cl", "d"), ("0", "o"), ("1", "l"), ("1", "i"),
                     ("5", "s"), ("3", "e"))  # fmt: skip
_SEPARATORS = patterns.compile(r"[-_. ]+")


def osa_distance(a: str, b: str, limit: int = 3) -> int:
    """Edit distance with adjacent transpositions (optimal string alignment), capped at ``limit``."""
    if abs(len(a) - len(b)) >= limit:
        return limit
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, start=1):
            cost = 0 if ca == cb else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) >= limit:
            return limit
        prev2, prev = prev, cur
    return min(prev[-1], limit)


def _typo_like(a: str, b: str) -> bool:
    """One edit that a hurried reader misses: a swap, a doubled or dropped letter."""
    if len(a) == len(b):
        diffs = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diffs) == 2 and diffs[1] == diffs[0] + 1
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    for i in range(len(long_)):
        if long_[:i] + long_[i + 1 :] == short:
            return i > 0 and long_[i] == long_[i - 1]
    return False


def _one_typo(name: str, other: str) -> bool:
    """A single edit that reads as a typo of ``other`` rather than a different word.

    Swaps and doubled letters always do; a changed letter only in long names
    (``motion`` is not ``notion``), a dropped or added one from seven letters up.
    """
    if _typo_like(name, other):
        return True
    if len(name) == len(other):
        return len(other) >= 8
    return len(other) >= 7


def _script(ch: str) -> str:
    name = unicodedata.name(ch, "")
    return name.split(" ", 1)[0] if name else "UNKNOWN"


def skeleton(name: str) -> str:
    """``name`` with every letter that looks like a Latin one replaced by it, lowercased."""
    out = []
    for ch in unicodedata.normalize("NFKC", name):
        if ch.isascii():
            out.append(ch)
            continue
        out.append(LATIN.get(ch, ch))
    return "".join(out).lower()


@functools.lru_cache(maxsize=8)
def _ordered(known: frozenset[str]) -> tuple[tuple[str, str, frozenset[str]], ...]:
    """The known names in order, each with its separator-free form and its letters."""
    return tuple((o, _SEPARATORS.sub("", o), frozenset(o)) for o in sorted(known))


@functools.lru_cache(maxsize=4096)
def check_name(name: str, known: frozenset[str]) -> tuple[Verdict, ...]:
    """What is wrong with a skill called ``name`` (empty when nothing is)."""
    name = name.strip()
    if not name or name in known:
        return ()
    if not name.isascii():
        return tuple(_non_ascii(name, known))
    return tuple(_ascii(name.lower(), known))


def _non_ascii(name: str, known: frozenset[str]) -> list[Verdict]:
    letters = [ch for ch in name if ch.isalpha()]
    scripts = {_script(ch) for ch in letters}
    skel = skeleton(name)
    if skel in known:
        return [("homoglyph-name", _C,
                 f"Name {name!r} is written with look-alike letters to read as the well-known {skel!r}")]  # fmt: skip
    if "LATIN" in scripts and len(scripts) > 1:
        others = ", ".join(sorted(s.title() for s in scripts - {"LATIN"}))
        return [("homoglyph-name", _H, f"Name {name!r} mixes Latin with {others} letters")]
    if skel.isascii() and skel != name.lower():
        near = _ascii(skel, known)
        if near:
            return [("homoglyph-name", _H,
                     f"Name {name!r} reads as {skel!r} and imitates a well-known skill")]  # fmt: skip
    return []


def _ascii(name: str, known: frozenset[str]) -> list[Verdict]:
    for a, b in _ASCII_LOOKALIKES:
        if a in name:
            candidate = name.replace(a, b)
            if candidate in known:
                return [("name-impersonation", _H,
                         f"Name {name!r} swaps look-alike characters to read as {candidate!r}")]  # fmt: skip
    m = _RANDOM_SUFFIX.match(name)
    if m and m.group("base") in known:
        tag = m.group("tag")
        if any(c.isdigit() for c in tag) and any(c.isalpha() for c in tag):
            return [("name-impersonation", _H,
                     f"Name {name!r} is {m.group('base')!r} with a random tag (clone pattern)")]  # fmt: skip
    flat = _SEPARATORS.sub("", name)
    ordered = _ordered(known)
    for other, other_flat, _ in ordered:
        if flat == other_flat:
            return [("name-impersonation", _M, f"Name {name!r} is {other!r} with other separators")]
    letters = frozenset(name)
    for other, _, other_letters in ordered:
        if len(other) < 5 or abs(len(other) - len(name)) > 2:
            continue
        # Each edit adds at most one letter and removes at most one, so the distinct
        # letters one name has and the other lacks bound the distance from below. At 2
        # or more the one-typo verdict cannot hold, and the two-typo one needs the same
        # letters (a bound of 0): no distance to compute for most pairs.
        if len(letters - other_letters) >= 2 or len(other_letters - letters) >= 2:
            continue
        distance = osa_distance(name, other)
        if distance == 1 and _one_typo(name, other):
            return [("name-impersonation", _M, f"Name {name!r} is one typo away from {other!r}")]
        if distance == 2 and len(other) >= 10 and set(name) == set(other):
            return [("name-impersonation", _M, f"Name {name!r} is two typos away from {other!r}")]
    return []
