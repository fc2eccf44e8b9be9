"""Rules every archive entry must pass, whatever the archive format (spec §8.5 step 5).

Input: entry names, types and sizes as an archive lists them. Output: the safe
relative path to write (after ``stripComponents``), or an ``install.archive-rejected``
:class:`~skillbook.distribution.InstallError` with OpenClaw's message: drive-letter,
absolute and ``..``-escaping paths, links, devices, FIFOs and sockets, more than
50,000 entries, an entry over 256 MiB, more than 512 MiB in total. Skill archives
(registry downloads, ``skillbook publish`` of an archive) also pass the file name
rules the registry publishes by (:mod:`skillbook.distribution.archives.names`: Windows device
names, invisible characters, names that fold into one); tool downloads keep
OpenClaw's rules only. Pure: nothing here touches the disk.
"""

from __future__ import annotations

import math
import posixpath
from dataclasses import dataclass
from typing import Final

from skillbook.base.fs import climbs_out
from skillbook.distribution import InstallError
from skillbook.distribution.archives.names import NameRejected, NameSet

__all__ = [
    "BLOCKED_TYPES",
    "DEFAULT_LIMITS",
    "ByteBudget",
    "EntryChecker",
    "ExtractLimits",
    "check_entry_path",
    "check_skill_name",
    "normalize_strip",
    "strip_entry_path",
]

MIB: Final = 1024 * 1024
#: Entry types that are never extracted (tar's names; zip entries are mapped to them).
BLOCKED_TYPES: Final = frozenset(
    {"SymbolicLink", "Link", "BlockDevice", "CharacterDevice", "FIFO", "Socket"}
)


@dataclass(frozen=True, slots=True)
class ExtractLimits:
    """OpenClaw's archive limits; tests pass smaller ones."""

    max_archive_bytes: int = 256 * MIB
    max_entries: int = 50_000
    max_extracted_bytes: int = 512 * MIB
    max_entry_bytes: int = 256 * MIB


DEFAULT_LIMITS: Final = ExtractLimits()


def _rejected(message: str) -> InstallError:
    return InstallError("install.archive-rejected", message)


def normalize_strip(value: float | None) -> int:
    """``stripComponents``: floor of a finite non-negative number, else 0."""
    if value is None or not math.isfinite(value):
        return 0
    return max(0, math.floor(value))


def _is_drive(path: str) -> bool:
    return len(path) >= 3 and path[0].isascii() and path[0].isalpha() and path[1:3] in (":/", ":\\")


def check_entry_path(entry: str, *, escape_label: str = "destination") -> None:
    """Refuse drive-letter, ``..``-escaping and absolute entry paths."""
    if not entry or entry in (".", "./"):
        return
    if _is_drive(entry):
        raise _rejected(f"archive entry uses a drive path: {entry}")
    normalized = entry.replace("\\", "/")
    if climbs_out(normalized):
        raise _rejected(f"archive entry escapes {escape_label}: {entry}")
    if normalized.startswith("/"):
        raise _rejected(f"archive entry is absolute: {entry}")


def check_skill_name(names: NameSet | None, rel: str, *, folder: bool) -> None:
    """Add ``rel`` to the names of a skill tree (None: no name rules), or refuse the archive."""
    if names is None:
        return
    try:
        names.add(rel, folder=folder)
    except NameRejected as exc:
        raise _rejected(f"archive entry name refused ({exc.problem.rule}): {exc}") from None


def strip_entry_path(entry: str, strip: int) -> str | None:
    """The entry path after dropping ``strip`` leading segments (as ``tar
    --strip-components`` counts them on the raw path), normalised; None if nothing is left.
    """
    raw = entry.replace("\\", "/")
    if not raw or raw in (".", "./"):
        return None
    parts = [p for p in raw.split("/") if p and p != "."]
    result = posixpath.normpath("/".join(parts[strip:]))
    return None if result in ("", ".") else result


class ByteBudget:
    """Counts extracted bytes per entry and in total against the limits."""

    __slots__ = ("_entry", "_limits", "_total")

    def __init__(self, limits: ExtractLimits) -> None:
        self._limits = limits
        self._entry = 0
        self._total = 0

    def start_entry(self) -> None:
        self._entry = 0

    def add(self, count: int) -> None:
        if count <= 0:
            return
        self._entry += count
        if self._entry > self._limits.max_entry_bytes:
            raise _rejected("archive entry extracted size exceeds limit")
        self._total += count
        if self._total > self._limits.max_extracted_bytes:
            raise _rejected("archive extracted size exceeds limit")

    def add_entry_size(self, size: int) -> None:
        self.start_entry()
        if size > self._limits.max_entry_bytes:
            raise _rejected("archive entry extracted size exceeds limit")
        self.add(size)


class EntryChecker:
    """OpenClaw's tar preflight: one call per listed entry, in archive order.

    Returns the relative output path, or None for an entry that strips to nothing.
    Entries that survive the strip are counted and their declared sizes budgeted, and
    with ``names`` pass the file name rules of a skill tree.
    """

    __slots__ = ("_budget", "_count", "_label", "_limits", "_names", "_strip")

    def __init__(
        self,
        *,
        strip: int,
        limits: ExtractLimits,
        escape_label: str = "destination",
        names: NameSet | None = None,
    ) -> None:
        self._strip = strip
        self._limits = limits
        self._label = escape_label
        self._budget = ByteBudget(limits)
        self._count = 0
        self._names = names

    def check(self, path: str, kind: str, size: int, *, link_word: str = "tar") -> str | None:
        check_entry_path(path, escape_label=self._label)
        rel = strip_entry_path(path, self._strip)
        if rel is None:
            return None
        check_entry_path(rel, escape_label=self._label)
        if kind in BLOCKED_TYPES:
            raise _rejected(f"{link_word} entry is a link: {path}")
        self._count += 1
        if self._count > self._limits.max_entries:
            raise _rejected("archive entry count exceeds limit")
        check_skill_name(self._names, rel, folder=kind == "Directory")
        self._budget.add_entry_size(max(0, size))
        return rel
