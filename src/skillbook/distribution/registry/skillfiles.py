"""Which files make up an installed skill, as the ``clawhub`` CLI lists them.

Input: a skill folder. Output: its files as ``(relative path, bytes)`` pairs, the
per-file sha256 manifest and the fingerprint (:mod:`skillbook.distribution.fingerprint`).
The rules are the CLI's ``listSkillFiles`` (clawhub-api.md §4.3): walk the folder,
skip every entry whose name starts with ``.`` and every ``node_modules``, keep
regular files only (links are neither followed nor listed), apply gitignore rules
(built in: ``.git/``, ``node_modules/``, ``.clawhub/``, ``.clawdhub/``; added: the
root-level ``.gitignore``, ``.clawhubignore`` and ``.clawdhubignore``), and drop any
path with a segment starting with ``.``. So the files a registry records at publish
and those on disk after an install give the same fingerprint, and the
``.clawhub``/``.skillbook`` records inside the folder never count.

:func:`tree_entries` walks a folder the way OpenClaw 2026.9 does for its tree digest
(every entry but the top-level ``.clawhub``/``.clawdhub``; a link, a special file or
a hard-linked file makes the tree undigestable), and :func:`skill_file` names the
``SKILL.md`` it records beside that digest.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from skillbook.distribution.fingerprint import (
    TreeEntry,
    fingerprint_hashes,
    sha256_hex,
    tree_digest,
)

__all__ = [
    "BUILTIN_IGNORES",
    "SkillFiles",
    "list_skill_files",
    "skill_file",
    "tree_entries",
    "tree_sha256",
]

BUILTIN_IGNORES: Final = (".git/", "node_modules/", ".clawhub/", ".clawdhub/")
IGNORE_FILES: Final = (".gitignore", ".clawhubignore", ".clawdhubignore")


@dataclass(frozen=True, slots=True)
class SkillFiles:
    """The files of one skill folder: path → sha256 hex, in listing order."""

    hashes: dict[str, str]

    @property
    def fingerprint(self) -> str | None:
        """The CLI's fingerprint, or None for a folder without files (the CLI records none)."""
        return fingerprint_hashes(self.hashes.items()) if self.hashes else None

    def diff(self, recorded: dict[str, str]) -> tuple[list[str], list[str], list[str]]:
        """``(added, removed, changed)`` paths compared with a recorded manifest."""
        added = sorted(p for p in self.hashes if p not in recorded)
        removed = sorted(p for p in recorded if p not in self.hashes)
        changed = sorted(p for p, h in self.hashes.items() if p in recorded and recorded[p] != h)
        return added, removed, changed


def _ignore_lines(root: Path) -> list[str]:
    lines = list(BUILTIN_IGNORES)
    for name in IGNORE_FILES:
        path = root / name
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        lines += text.replace("\r\n", "\n").split("\n")
    return lines


def _walk(root: Path, rel: str = "") -> Iterator[str]:
    folder = root / rel if rel else root
    with os.scandir(folder) as it:
        entries = sorted(it, key=lambda e: e.name)
    for entry in entries:
        if entry.name.startswith(".") or entry.name == "node_modules":
            continue
        child = f"{rel}/{entry.name}" if rel else entry.name
        mode = entry.stat(follow_symlinks=False).st_mode
        if stat.S_ISDIR(mode):
            yield from _walk(root, child)
        elif stat.S_ISREG(mode):
            yield child


def list_skill_files(root: Path) -> SkillFiles:
    """Hash the files of ``root`` by the CLI's rules; raises OSError when unreadable."""
    from pathspec import GitIgnoreSpec

    spec = GitIgnoreSpec.from_lines(_ignore_lines(root))
    hashes: dict[str, str] = {}
    for rel in _walk(root):
        if spec.match_file(rel) or any(part.startswith(".") for part in rel.split("/")):
            continue
        hashes[rel] = sha256_hex((root / rel).read_bytes())
    return SkillFiles(hashes)


_TREE_EXCLUDED: Final = frozenset({".clawhub", ".clawdhub"})


def _code_units(name: str) -> bytes:
    # JavaScript's ``<`` on strings compares UTF-16 code units.
    return name.encode("utf-16-be", "surrogatepass")


def tree_entries(root: Path, rel: str = "") -> list[TreeEntry]:
    """OpenClaw 2026.9's digest entries of ``root``; raises ValueError for a link, a
    special file or a hard-linked file (2026.9 refuses to digest those), OSError when
    unreadable."""
    folder = root / rel if rel else root
    out: list[TreeEntry] = []
    for name in sorted(os.listdir(folder), key=_code_units):
        if not rel and name in _TREE_EXCLUDED:
            continue
        child = f"{rel}/{name}" if rel else name
        info = os.lstat(root / child)
        if stat.S_ISDIR(info.st_mode):
            out.append((child, None))
            out += tree_entries(root, child)
        elif stat.S_ISREG(info.st_mode) and info.st_nlink <= 1:
            out.append((child, sha256_hex((root / child).read_bytes())))
        elif stat.S_ISREG(info.st_mode):
            raise ValueError(f"Skill tree contains hard-linked file {child!r}.")
        else:
            raise ValueError(f"Skill tree contains unsupported entry {child!r}.")
    return out


def tree_sha256(root: Path) -> str | None:
    """``fileTreeSha256`` of ``root``, or None when it cannot be digested."""
    try:
        return tree_digest(tree_entries(root))
    except (OSError, ValueError):
        return None


def skill_file(root: Path) -> dict[str, str] | None:
    """``{"path", "sha256"}`` of the first root marker present (OpenClaw's ``skillFile``)."""
    from skillbook.distribution.archives.layout import ROOT_MARKERS

    for marker in ROOT_MARKERS:
        try:
            info = os.lstat(root / marker)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            return {"path": marker, "sha256": sha256_hex((root / marker).read_bytes())}
    return None
