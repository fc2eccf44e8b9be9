"""What changed since the previous build, as a file watcher saw it.

Input: the paths a watcher reported (SKILL.md files, skill folders, roots), the
folders it watches in full, and the folder names below them whose events it drops
(``node_modules``, ``build``, ...). Output: answers the root scanner needs to rebuild
a remembered root without looking at every file in it: whether a folder is covered
by the watcher at all, and which reported paths lie inside it.

A hint only ever narrows what a rebuild *looks at*; the result must equal a full
build's. So a folder is covered only when every change inside it must have been
reported: it lies in a watched root, no reported path is the folder itself or one
of its ancestors (a root that came or went), and the caller (the session) gives no
hint at all when the watcher may have missed something (overflow, a restart, a
change of config, a symlink among the paths, an event of an unknown kind).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["ChangeHint"]


@dataclass(frozen=True, slots=True)
class ChangeHint:
    """Paths changed since the previous build (absolute), and what the watcher covers."""

    paths: frozenset[str]
    #: Folders whose every relevant change is among ``paths`` (the watched roots).
    roots: tuple[str, ...]
    #: Names of folders below a root whose events the watcher ignores.
    blind: frozenset[str] = frozenset()

    @classmethod
    def of(
        cls, paths: Iterable[str], roots: Iterable[str], blind: Iterable[str] = ()
    ) -> ChangeHint:
        return cls(
            frozenset(os.path.abspath(p) for p in paths),
            tuple(os.path.abspath(r) for r in roots),
            frozenset(blind),
        )

    def covers(self, folder: str) -> bool:
        """Whether every change inside ``folder`` since the previous build is in :attr:`paths`."""
        folder = os.path.abspath(folder)
        inside = [r for r in self.roots if folder == r or folder.startswith(r + os.sep)]
        if not inside:
            return False
        for root in inside:
            rel = folder[len(root) + 1 :]
            if rel and not self.blind.isdisjoint(rel.split(os.sep)):
                return False
        # The folder itself, or a folder above it, came, went or was replaced.
        return not any(folder == p or folder.startswith(p + os.sep) for p in self.paths)

    def below(self, folder: str) -> list[str]:
        """The reported paths strictly inside ``folder``."""
        prefix = os.path.abspath(folder) + os.sep
        return [p for p in self.paths if p.startswith(prefix)]
