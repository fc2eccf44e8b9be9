"""The rules' regular expressions, compiled once per Python installation, not per process.

Input: the rule modules' patterns, through :func:`compile` (``re.compile``'s
signature). Output: the same ``re.Pattern`` objects ``re.compile`` returns (equal to
them: same pattern, flags and engine program). Compiling the ~190 patterns of the
rules cost 0.07-0.14 s of CPU in every ``skillbook scan`` process, more than a process
that reads the whole 9 MB corpus. So the engine program ``re`` builds for each pattern
(what it hands to ``_sre.compile``) is kept in one file beside the package's bytecode
(``__pycache__/patterns.<cache tag>.re``, where ``sys.pycache_prefix`` says), tagged
with the Python build, and the next process loads it in about 2 ms.

With each program the file keeps the pattern's leading literals
(:func:`~skillbook.security.literals.leading_literals`, worked out when the pattern is
compiled anew), which :func:`leading` answers for the scanner's documents.

Only while the rule modules are imported: :func:`seal` (the scanner calls it once it
is imported) writes the file when something was compiled anew, and from then on
:func:`compile` is ``re.compile``, so patterns built per text are not kept. A missing,
stale or unreadable file, a pattern it does not hold, or a Python whose ``re`` works
otherwise: ``re.compile``, as before. Nothing is written when
``sys.dont_write_bytecode`` is set. The file is trusted as far as the ``.pyc`` files
beside it (whoever can write there can rewrite the rules); ``_sre.compile`` checks each
program it is given, so a damaged file cannot crash the process.
"""

from __future__ import annotations

import contextlib
import importlib
import marshal
import os
import re
import sys
from typing import Any

from skillbook.security.literals import leading_literals

_sre: Any
_compiler: Any
_parser: Any
try:  # CPython's engine and compiler (no type stubs); elsewhere patterns compile as usual
    _sre = importlib.import_module("_sre")
    _compiler = importlib.import_module("re._compiler")
    _parser = importlib.import_module("re._parser")
except ImportError:  # pragma: no cover - other Pythons
    _sre = _compiler = _parser = None

#: Bumped when what an entry holds changes (2: the leading literals are kept too).
FORMAT = 2
#: Most patterns kept (the rules have about 190; a bound against a caller that never seals).
MAX_ENTRIES = 1000

#: (pattern, flags given) -> (flags, program, groups - 1, groupindex, indexgroup)
Entry = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]
#: (pattern, flags given) -> the literals every match starts with (:mod:`.literals`).
Leads = dict[tuple[str, int], tuple[str, ...] | None]


def _tag() -> tuple[Any, ...]:
    return (FORMAT, sys.version, sys.implementation.cache_tag, getattr(_sre, "MAGIC", None))


def _store_path() -> str | None:
    tag = sys.implementation.cache_tag
    if tag is None:
        return None
    try:
        from importlib.util import cache_from_source

        beside = cache_from_source(__file__)
    except (NotImplementedError, ValueError):
        return None
    return os.path.join(os.path.dirname(beside), f"patterns.{tag}.re")


def _read(path: str) -> tuple[dict[tuple[str, int], Entry], Leads]:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        # From bytes: loading from the file object reads it in pieces, 50 times slower.
        tag, entries, leads = marshal.loads(data)
    except (OSError, EOFError, ValueError, TypeError):
        return {}, {}
    if tag != _tag() or not isinstance(entries, dict) or not isinstance(leads, dict):
        return {}, {}
    return entries, leads


def _valid_leads(found: object) -> bool:
    return found is None or (
        isinstance(found, tuple) and all(type(s) is str and s for s in found) and bool(found)
    )


def _program(pattern: str, flags: int) -> Entry:
    """What ``re``'s compiler hands to ``_sre.compile`` for ``pattern``, as plain values."""
    parsed = _parser.parse(pattern, flags)
    code = [int(op) for op in _compiler._code(parsed, flags)]
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return (flags | parsed.state.flags, code, parsed.state.groups - 1, groupindex,
            tuple(indexgroup))  # fmt: skip


class Store:
    """The programs of one process: those read from ``path`` and those it compiled."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.sealed = _sre is None
        self.loaded: dict[tuple[str, int], Entry] | None = None
        self.loaded_leads: Leads = {}
        self.used: dict[tuple[str, int], Entry] = {}
        self.used_leads: Leads = {}
        #: id of a compiled pattern -> (the pattern, kept alive; its leading literals).
        self.leads: dict[int, tuple[re.Pattern[str], tuple[str, ...] | None]] = {}

    def compile(self, pattern: str, flags: int | re.RegexFlag = 0) -> re.Pattern[str]:
        """``re.compile(pattern, flags)``; until :meth:`seal`, from a kept program when
        the file holds one, and kept for the file."""
        if self.sealed or not isinstance(pattern, str):
            return re.compile(pattern, flags)
        key = (pattern, int(flags))
        if self.loaded is None:
            self.loaded, self.loaded_leads = _read(self.path) if self.path is not None else ({}, {})
        entry = self.loaded.get(key)
        if entry is not None and key in self.loaded_leads:
            leads = self.loaded_leads[key]
            try:
                if not _valid_leads(leads):
                    raise ValueError("damaged literals")
                found: re.Pattern[str] = _sre.compile(pattern, *entry)
            except (TypeError, ValueError, RuntimeError, OverflowError):
                pass  # a damaged entry: compiled anew below
            else:
                self.used[key] = entry
                self.used_leads[key] = leads
                self.leads[id(found)] = (found, leads)
                return found
        compiled = re.compile(pattern, flags)  # raises re.error as ever
        leads = leading_literals(pattern, int(flags))
        self.leads[id(compiled)] = (compiled, leads)
        if len(self.used) < MAX_ENTRIES:
            # A Python whose compiler works otherwise: the pattern is not kept.
            with contextlib.suppress(Exception):
                self.used[key] = _program(pattern, int(flags))
                self.used_leads[key] = leads
        return compiled

    def leading(self, regex: re.Pattern[str]) -> tuple[str, ...] | None:
        """The literals every match of ``regex`` starts with (lower case), when it was
        compiled through this store and has such a set; None otherwise."""
        known = self.leads.get(id(regex))
        return known[1] if known is not None and known[0] is regex else None

    def seal(self) -> None:
        """End recording: write the kept programs when they differ from the file's."""
        if self.sealed:
            return
        self.sealed = True
        if (self.path is None or sys.dont_write_bytecode or not self.used
                or (self.used == self.loaded and self.used_leads == self.loaded_leads)):  # fmt: skip
            return
        try:
            from skillbook.base.atomic import write_atomic

            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            write_atomic(self.path, marshal.dumps((_tag(), self.used, self.used_leads)))
        except (OSError, ValueError):
            pass  # a read-only install: every process compiles, as before

    def status(self) -> dict[str, Any]:
        """Where the file is and how many patterns came from it (tests, benchmarks)."""
        loaded = self.loaded or {}
        return {
            "path": self.path,
            "sealed": self.sealed,
            "used": len(self.used),
            "from_file": sum(
                1
                for k, v in self.used.items()
                if loaded.get(k) == v
                and k in self.loaded_leads
                and self.loaded_leads[k] == self.used_leads.get(k)
            ),
        }


#: The store of the rule modules' patterns.
STORE = Store(_store_path())


def compile(pattern: str, flags: int | re.RegexFlag = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)`` through :data:`STORE` (see :meth:`Store.compile`)."""
    return STORE.compile(pattern, flags)


def leading(regex: re.Pattern[str]) -> tuple[str, ...] | None:
    """See :meth:`Store.leading` (of :data:`STORE`)."""
    return STORE.leading(regex)


def seal() -> None:
    """End the recording of :data:`STORE` (see :meth:`Store.seal`)."""
    STORE.seal()
