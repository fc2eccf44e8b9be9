"""Which files a scan reads: a bounded, deterministic walk of one folder.

Input: a folder and the limits. Output: a :class:`Walk` listing regular files,
symbolic links (never followed) and special files in byte order of their paths,
plus what was left out and why (``.git``/``node_modules`` folders, files over the
count limit, unreadable folders). Each file is also marked with whether
OpenClaw's scanner would read it (its extensions, no dot-names, no
``node_modules``, at most 500 files), so both verdicts come from one walk.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from skillbook.security import rules_openclaw

#: Folders never descended into: version-control internals and vendored packages.
SKIPPED_DIRS = frozenset({".git", "node_modules"})
#: Hard cap on folders visited, so a hostile tree of empty folders cannot stall a scan.
MAX_DIRS = 10_000

FILE = "file"
SYMLINK = "symlink"
SPECIAL = "special"


@dataclass(frozen=True, slots=True)
class Entry:
    path: Path
    #: Path relative to the walked folder, with ``/`` separators.
    rel: str
    kind: str
    #: OpenClaw's scanner would read this file (before its size check).
    openclaw: bool = False


@dataclass(slots=True)
class Walk:
    entries: list[Entry] = field(default_factory=list)
    skipped_dirs: list[Path] = field(default_factory=list)
    #: Regular files beyond the file limit, not read.
    over_limit: int = 0
    errors: list[tuple[Path, str]] = field(default_factory=list)


def _openclaw_reads(rel: str) -> bool:
    parts = rel.split("/")
    if any(p.startswith(".") or p == "node_modules" for p in parts):
        return False
    name = parts[-1]
    dot = name.rfind(".")
    return dot >= 0 and name[dot:].lower() in rules_openclaw.EXTENSIONS


def walk(root: Path, *, max_files: int) -> Walk:
    """List ``root`` (not following symbolic links) up to ``max_files`` regular files."""
    out = Walk()
    files = 0
    openclaw_files = 0
    stack: list[tuple[Path, str]] = [(root, "")]
    visited = 0
    while stack:
        folder, prefix = stack.pop()
        visited += 1
        if visited > MAX_DIRS:
            out.errors.append((folder, f"more than {MAX_DIRS} folders; the rest was not scanned"))
            break
        try:
            with os.scandir(folder) as it:
                children = sorted(it, key=lambda e: os.fsencode(e.name))
        except OSError as exc:
            out.errors.append((folder, exc.strerror or str(exc)))
            continue
        subdirs: list[tuple[Path, str]] = []
        for child in children:
            rel = prefix + child.name
            path = Path(child.path)
            try:
                mode = child.stat(follow_symlinks=False).st_mode
            except OSError as exc:
                out.errors.append((path, exc.strerror or str(exc)))
                continue
            if stat.S_ISLNK(mode):
                out.entries.append(Entry(path, rel, SYMLINK))
            elif stat.S_ISDIR(mode):
                if child.name in SKIPPED_DIRS:
                    out.skipped_dirs.append(path)
                else:
                    subdirs.append((path, rel + "/"))
            elif stat.S_ISREG(mode):
                if files >= max_files:
                    out.over_limit += 1
                    continue
                files += 1
                reads = _openclaw_reads(rel) and openclaw_files < rules_openclaw.MAX_FILES
                openclaw_files += reads
                out.entries.append(Entry(path, rel, FILE, openclaw=reads))
            else:
                out.entries.append(Entry(path, rel, SPECIAL))
        # Depth-first, in byte order: push in reverse so the first folder pops first.
        stack.extend(reversed(subdirs))
    out.entries.sort(key=lambda e: os.fsencode(e.rel))
    return out
