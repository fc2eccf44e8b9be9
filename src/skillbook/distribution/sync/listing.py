"""A tree as a list of entries: path, type, size and sha256, or the link target.

Input: a folder. Output: :class:`TreeEntry` values in the order of the OpenClaw
oracle's ``sync`` listing (each folder's names in JavaScript sort order, a folder
before its contents), so two trees compare with ``==`` and the shape matches the
oracle's JSON. Links are listed, never followed. ``load`` records these entries to
tell an edited copy from an untouched one.
"""

from __future__ import annotations

import hashlib
import os
import stat as st
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from skillbook.base.js import js_sort_key

_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class TreeEntry:
    """One entry; ``type`` is ``dir``, ``file``, ``symlink`` or ``other``."""

    path: str
    type: str
    size: int | None = None
    sha256: str | None = None
    target: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "type": self.type}
        if self.type == "file":
            out["size"] = self.size
            out["sha256"] = self.sha256
        elif self.type == "symlink":
            out["target"] = self.target
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TreeEntry:
        return cls(
            path=str(data["path"]),
            type=str(data["type"]),
            size=data.get("size"),
            sha256=data.get("sha256"),
            target=data.get("target"),
        )


def list_tree(root: str | os.PathLike[str], *, skip: Iterable[str] = ()) -> list[TreeEntry]:
    """Every entry below ``root`` (not ``root`` itself); ``[]`` if it is not a folder.

    ``skip`` names top-level entries to leave out.
    """
    out: list[TreeEntry] = []
    _walk(os.fspath(root), "", out, frozenset(skip))
    return out


def _walk(folder: str, rel: str, out: list[TreeEntry], skip: frozenset[str]) -> None:
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in sorted(names, key=js_sort_key):
        if not rel and name in skip:
            continue
        path = os.path.join(folder, name)
        shown = f"{rel}/{name}" if rel else name
        info = os.lstat(path)
        if st.S_ISLNK(info.st_mode):
            out.append(TreeEntry(shown, "symlink", target=os.readlink(path)))
        elif st.S_ISDIR(info.st_mode):
            out.append(TreeEntry(shown, "dir"))
            _walk(path, shown, out, skip)
        elif st.S_ISREG(info.st_mode):
            size, digest = _hash(path)
            out.append(TreeEntry(shown, "file", size=size, sha256=digest))
        else:
            out.append(TreeEntry(shown, "other"))


def _hash(path: str) -> tuple[int, str]:
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()
