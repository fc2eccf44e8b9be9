"""Where each synced skill goes: folder names, uniquifying, OpenClaw's sandbox-path rules.

Input: the skill's folder (never its frontmatter name), the target ``skills`` folder
and the home used for ``~``. Output: a :class:`Destination` (the folder name inside
the target) or a :class:`Refusal` carrying OpenClaw's message (spec §9 step 5).
Pure: nothing here touches the disk.

OpenClaw resolves the uniquified folder name with ``resolveSandboxPath``, which strips
one leading ``@``, turns Unicode spaces into plain spaces and expands ``~``. Two
consequences are bugs there and are fixed here: a folder named ``@`` or ``@.`` is
copied *into* the skills folder itself, and two folders that differ only by that
normalisation (``@x`` and ``x``, ``a b`` and ``a\\u00a0b``) are merged into one.
skillbook refuses the first and gives the second a free ``-N`` name; every other name
gets exactly OpenClaw's destination.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass

from skillbook.base.js import js_trim

#: Message of a folder name that cannot be a destination (OpenClaw's text).
INVALID_NAME = "invalid source directory name"

# The Unicode spaces OpenClaw's expandPath turns into " " (sandbox-paths.ts).
_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")


@dataclass(frozen=True, slots=True)
class Destination:
    """``name`` is the folder inside the target ``skills``; ``base`` the folder it came from."""

    name: str
    base: str
    #: Why ``name`` differs from ``base`` ("" when it does not).
    renamed: str = ""


@dataclass(frozen=True, slots=True)
class Refusal:
    """No safe destination; ``message`` is what follows OpenClaw's ``…for <name>: ``."""

    message: str


class DirNamer:
    """Hands out destination folder names for one sync, in entry order.

    ``claim`` is OpenClaw's ``resolveUniqueSyncedSkillDirName`` followed by its
    ``resolveSandboxPath``: ``base``, then ``base-2``, ``base-3``… (OpenClaw writes the
    search as two loops, up to ``base-9999`` and then from ``base-10000``; both find the
    first free number from 2, as here).
    """

    def __init__(self, root: str, *, home: str) -> None:
        self.root = _normpath(root)
        self.home = home
        self._raw: set[str] = set()
        self._final: set[str] = set()
        # First index worth trying per base: names are never released, so every
        # smaller index is known to be taken (keeps 10,000 duplicates linear).
        self._next: dict[tuple[int, str], int] = {}

    def claim(self, base_dir: str) -> Destination | Refusal:
        base = js_trim(os.path.basename(base_dir))
        if base in ("", ".", ".."):
            return Refusal(INVALID_NAME)
        raw = self._unique(base, self._raw, 0)
        resolved = self._resolve(raw)
        if isinstance(resolved, Refusal):
            return resolved
        if resolved == self.root:
            # OpenClaw would copy the skill's files into the skills folder itself.
            return Refusal(INVALID_NAME)
        name = posixpath.basename(resolved) if os.sep == "/" else os.path.basename(resolved)
        why = f"the folder name {base!r} is taken in this sync" if raw != base else ""
        if raw != name:
            why = why or f"OpenClaw's sandbox path rules turn {raw!r} into {name!r}"
        if name in self._final:
            # Different source names, same destination: OpenClaw merges the two skills.
            taken = name
            name = self._unique(taken, self._final, 1)
            why = f"{taken!r} (from {base!r}) is already used in this sync"
        else:
            self._final.add(name)
        return Destination(name=name, base=base, renamed=why)

    def _unique(self, base: str, used: set[str], space: int) -> str:
        if base not in used:
            used.add(base)
            return base
        index = self._next.get((space, base), 2)
        while f"{base}-{index}" in used:
            index += 1
        self._next[(space, base)] = index + 1
        name = f"{base}-{index}"
        used.add(name)
        return name

    def _resolve(self, name: str) -> str | Refusal:
        """OpenClaw's ``resolveSandboxPath({filePath: name, cwd: root, root})``."""
        expanded = _UNICODE_SPACES.sub(" ", name[1:] if name.startswith("@") else name)
        if expanded == "~":
            expanded = self.home
        elif expanded.startswith("~/"):
            expanded = self.home + expanded[1:]
        resolved = _normpath(
            expanded if os.path.isabs(expanded) else os.path.join(self.root, expanded)
        )
        relative = os.path.relpath(resolved, self.root) if resolved != self.root else ""
        if relative.startswith("..") or os.path.isabs(relative):
            return Refusal(f"Path escapes sandbox root ({self._short(self.root)}): {name}")
        return resolved

    def _short(self, path: str) -> str:
        # OpenClaw's shortPath: a plain prefix test, no separator check.
        if self.home and path.startswith(self.home):
            return "~" + path[len(self.home) :]
        return path


def _normpath(path: str) -> str:
    normalized = os.path.normpath(path)
    # POSIX normpath keeps a leading "//"; Node's path.resolve does not.
    if normalized.startswith("//") and not normalized.startswith("///"):
        normalized = normalized[1:]
    return normalized
