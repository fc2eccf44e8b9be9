"""The literal text every match of a regular expression starts with, read from its parse.

Input: a pattern and its flags (what ``re.compile`` takes). Output: the short strings
(lower case, ASCII) one of which every match of the pattern starts with, as the
lower-cased text shows it, or None when there is no such small set (a match may start
with any character, with the empty string, or with non-ASCII text).

Why: ``re`` has no literal to skip to in a pattern led by ``\\b`` or written
case-insensitively, so a search tries every offset of the text it is given; most of the
scanner's patterns are such. Knowing that every match starts with ``htt`` or ``ftp``,
:meth:`~skillbook.security.document.Document.finditer` matches only where those occur
(found by ``str.find`` in C), with the same matches: at an offset where none of them
starts, no match can start. ``re`` itself still decides every match, with everything
before and after the offset in view (look-behind, ``\\b``), so only where matching is
tried changes.

The strings are lower-cased, so they are looked for in the lower-cased text: that text
shows an ASCII letter as its lower case whatever its case in the file, and under
``re.IGNORECASE`` an ASCII letter may also match a few non-ASCII ones (``ſ`` matches
``s``, ``K`` the Kelvin sign matches ``k``); a document holding any cased non-ASCII
character therefore searches as before (:attr:`Document.fold_safe`).
"""

from __future__ import annotations

import importlib
from typing import Any

_c: Any
_parser: Any
try:  # CPython's parser (no type stubs); elsewhere no pattern has known literals
    _c = importlib.import_module("re._constants")
    _parser = importlib.import_module("re._parser")
except ImportError:  # pragma: no cover - other Pythons
    _c = _parser = None

#: Strings are followed no further than this many characters.
MAX_LENGTH = 4
#: Shorter strings are too common to be worth looking for: no set is made.
MIN_LENGTH = 2
#: A character class is followed into when it holds at most this many characters.
MAX_CLASS = 8
#: Most strings in a set (more: none is made).
MAX_STRINGS = 48

#: A set of (text so far, whether it may still grow).
_States = frozenset[tuple[str, bool]]


def leading_literals(pattern: str, flags: int = 0) -> tuple[str, ...] | None:
    """The strings (lower case, sorted) one of which every match of ``pattern`` starts
    with in the lower-cased text, or None. See the module's docstring."""
    if _parser is None or not isinstance(pattern, str):
        return None
    try:
        parsed = _parser.parse(pattern, flags)
    except Exception:  # a pattern re refuses (or a parser that differs) offers none
        return None
    states = _sequence(list(parsed), frozenset({("", True)}))
    if states is None:
        return None
    found = {text for text, _open in states}
    if not found or len(found) > MAX_STRINGS or min(map(len, found)) < MIN_LENGTH:
        return None
    # A string another one starts with adds no offset of its own ("do" covers "don't").
    return tuple(sorted(t for t in found if not any(t != o and t.startswith(o) for o in found)))


def _closed(states: _States) -> _States:
    return frozenset((text, False) for text, _open in states)


def _sequence(items: list[tuple[Any, Any]], states: _States | None) -> _States | None:
    for op, av in items:
        if states is None or not any(open_ for _text, open_ in states):
            break
        states = _step(op, av, states)
        if states is not None and len(states) > MAX_STRINGS:
            return None
    return states


def _extend(states: _States, chars: set[str]) -> _States:
    out: set[tuple[str, bool]] = set()
    for text, open_ in states:
        if not open_:
            out.add((text, False))
            continue
        for ch in chars:
            grown = text + ch
            out.add((grown, len(grown) < MAX_LENGTH))
    return frozenset(out)


def _class_chars(items: list[tuple[Any, Any]]) -> set[str] | None:
    """The characters of a class ``[...]`` (lower case, ASCII), or None if it is large,
    negated, holds a category (``\\w``) or non-ASCII characters."""
    chars: set[str] = set()
    for op, av in items:
        if op is _c.LITERAL:
            chars.add(chr(av))
        elif op is _c.RANGE and av[1] - av[0] < MAX_CLASS:
            chars.update(chr(code) for code in range(av[0], av[1] + 1))
        else:
            return None
        if len(chars) > MAX_CLASS:
            return None
    if not all(ch.isascii() for ch in chars):
        return None
    return {ch.lower() for ch in chars}


def _step(op: Any, av: Any, states: _States) -> _States | None:
    c = _c
    if op in (c.AT, c.ASSERT, c.ASSERT_NOT):
        # Zero-width: re checks it where matching is tried, with the whole text in view.
        return states
    if op is c.LITERAL:
        ch = chr(av)
        return _extend(states, {ch.lower()}) if ch.isascii() else _closed(states)
    if op is c.IN:
        chars = _class_chars(av)
        return _closed(states) if chars is None else _extend(states, chars)
    if op is c.SUBPATTERN:
        return _sequence(list(av[3]), states)
    if op is getattr(c, "ATOMIC_GROUP", None):
        return _sequence(list(av), states)
    if op is c.BRANCH:
        closed = frozenset(s for s in states if not s[1])
        opened = frozenset(s for s in states if s[1])
        union: set[tuple[str, bool]] = set(closed)
        for alternative in av[1]:
            got = _sequence(list(alternative), opened)
            if got is None:
                return None
            union |= got
        return frozenset(union)
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", c.MAX_REPEAT)):
        low, high, sub = av
        once = _sequence(list(sub), states)
        if once is None:
            return None
        if high != 1:
            # Another repeat or what follows may come next: the strings stop here.
            once = _closed(once)
        return once | states if low == 0 else once
    # Any character, a category, a negated literal, a back-reference: anything may come.
    return _closed(states)
