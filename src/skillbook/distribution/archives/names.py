"""The file names a skill may hold: one rule set for the registry server and the installers.

Input: relative ``/``-separated paths that already passed the path rules of
:mod:`skillbook.distribution.archives.paths` (no ``..``, not absolute), one at a time
(:func:`check_name`) or as the whole tree of one skill (:class:`NameSet`, which adds
the rules between paths). Output: nothing, or :class:`NameRejected` naming the path,
the rule (a stable id from :data:`RULES`) and why. The registry answers it as a ``400``
(:mod:`skillbook.distribution.hub.publish`); the installers refuse the archive with
``install.archive-rejected`` (:mod:`skillbook.distribution.archives.extract`). Pure: nothing here
touches the disk.

Why these rules: a name that one file system cannot hold, or two names that one file
system folds into one, install as a different tree from the one that was published and
scanned (macOS and Windows fold case; macOS normalises Unicode; Windows keeps device
names and drops trailing dots). Invisible and bidi characters make a name read as
another (``U+202E`` turns ``txt.sh`` around; ``U+200B`` makes two names look the same).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Final

__all__ = [
    "MAX_PART_BYTES",
    "RULES",
    "NameProblem",
    "NameRejected",
    "NameSet",
    "check_name",
    "check_names",
    "shown",
]

#: ext4, APFS and others hold at most 255 bytes per name (NTFS: 255 UTF-16 units, fewer bytes).
MAX_PART_BYTES: Final = 255

#: Rule id → what it refuses. The ids are stable: clients and tests match on them.
RULES: Final = {
    "name-too-long": "a name part over 255 bytes in UTF-8",
    "invisible-character": "a control, format (bidi, zero-width), surrogate or line-separator "
    "character (Unicode categories Cc, Cf, Cs, Zl, Zp)",
    "windows-reserved": "a Windows device name (CON, PRN, AUX, NUL, COM0-9, LPT0-9, with any "
    'extension), a character Windows refuses (< > " | ? *), or a trailing dot or space',
    "drive-or-stream": "a ':' in a name (a drive like c:x or an NTFS stream like a:b on Windows)",
    "duplicate": "the same path twice",
    "file-folder": "a file and a folder of the same name",
    "normalisation": "two paths equal after Unicode normalisation (NFC/NFD)",
    "case": "two paths equal after case folding (SKILL.md and skill.md)",
}

#: Categories that draw nothing or reorder what follows (Cf holds the bidi controls).
_INVISIBLE: Final = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_DEVICES: Final = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
    | {f"{stem}{n}" for stem in ("COM", "LPT") for n in "0123456789\u00b9\u00b2\u00b3"}
)
_WINDOWS_CHARS: Final = frozenset('<>"|?*')


@dataclass(frozen=True, slots=True)
class NameProblem:
    """One refused name: ``path``, the ``rule`` id, a message, and the path it clashes with."""

    path: str
    rule: str
    message: str
    other: str | None = None

    def to_json(self) -> dict[str, str]:
        out = {"rule": self.rule, "path": self.path, "message": self.message}
        if self.other is not None:
            out["other"] = self.other
        return out


class NameRejected(ValueError):
    """A file name no client could install as published; ``.problem`` says which and why."""

    def __init__(self, problem: NameProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def shown(text: str) -> str:
    """``text`` for a message: invisible characters spelled ``\\u202e`` so none can hide."""
    return "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) in _INVISIBLE else c for c in text)


def _refuse(path: str, rule: str, message: str, other: str | None = None) -> NameRejected:
    return NameRejected(NameProblem(path, rule, message, other))


def _q(text: str) -> str:
    return f'"{shown(text)}"'


def _named(part: str, path: str) -> str:
    return f"file name {_q(part)}" + ("" if part == path else f" in {_q(path)}")


def _char_name(c: str) -> str:
    return unicodedata.name(c, "") or unicodedata.category(c)


def _check_part(path: str, part: str) -> None:
    size = len(part.encode("utf-8", "surrogatepass"))
    if size > MAX_PART_BYTES:
        raise _refuse(
            path,
            "name-too-long",
            f"file name {_q(part[:32] + '…')} in {_q(path[:64])} is {size} bytes in UTF-8; "
            f"file systems hold at most {MAX_PART_BYTES}",
        )
    for c in part:
        category = unicodedata.category(c)
        if category in _INVISIBLE:
            raise _refuse(
                path,
                "invisible-character",
                f"file path {_q(path)} holds U+{ord(c):04X} ({_char_name(c)}, category "
                f"{category}): invisible and bidi characters make a name read as another",
            )
    if ":" in part:
        raise _refuse(
            path,
            "drive-or-stream",
            f"{_named(part, path)} holds ':' (on Windows a drive like c:x "
            "or an NTFS stream like a:b)",
        )
    bad = next((c for c in part if c in _WINDOWS_CHARS), None)
    if bad is not None:
        raise _refuse(
            path,
            "windows-reserved",
            f"{_named(part, path)} holds {bad!r}, which Windows refuses in names",
        )
    if part.endswith((".", " ")) and part not in (".", ".."):
        raise _refuse(
            path,
            "windows-reserved",
            f"{_named(part, path)} ends in a dot or a space, which Windows drops",
        )
    stem = part.split(".", 1)[0].rstrip(" ").upper()
    if stem in _DEVICES:
        raise _refuse(
            path,
            "windows-reserved",
            f"{_named(part, path)} is the Windows device name {stem} (reserved with any extension)",
        )


def check_name(path: str) -> None:
    """Refuse ``path`` if one of its parts breaks a per-name rule (:data:`RULES`)."""
    for part in path.split("/"):
        _check_part(path, part)


def _folded(nfc: str) -> str:
    # Folding can undo normalisation (and vice versa): normalise after folding too.
    return unicodedata.normalize("NFC", nfc.casefold())


class NameSet:
    """The paths of one tree, added one by one; each is refused if it clashes with one before.

    Every folder a path passes through counts as a folder of the tree, so ``docs`` (a
    file) and ``docs/a.md`` clash, and so do ``Docs/a.md`` and ``docs/b.md`` (one folder
    on macOS and Windows, two on Linux).
    """

    __slots__ = ("_folded", "_kinds", "_nfc")

    def __init__(self) -> None:
        self._kinds: dict[str, bool] = {}  # path → is a folder
        self._nfc: dict[str, str] = {}  # NFC form → path as first spelled
        self._folded: dict[str, str] = {}  # folded form → path as first spelled

    def add(self, path: str, *, folder: bool = False) -> None:
        check_name(path)
        parts = path.split("/")
        nodes = [("/".join(parts[:i]), True) for i in range(1, len(parts))]
        nodes.append((path, folder))
        for node, is_folder in nodes:
            known = self._kinds.get(node)
            if known is not None:
                if known != is_folder:
                    raise _refuse(
                        path,
                        "file-folder",
                        f"{_q(node)} is both a file and a folder",
                        node,
                    )
                if not is_folder:
                    raise _refuse(path, "duplicate", f"file path {_q(path)} appears twice")
                continue
            nfc = unicodedata.normalize("NFC", node)
            other = self._nfc.get(nfc)
            if other is not None:
                raise _refuse(
                    path,
                    "normalisation",
                    f"{_q(node)} and {_q(other)} are the same name after Unicode "
                    "normalisation (one name on macOS)",
                    other,
                )
            folded = _folded(nfc)
            other = self._folded.get(folded)
            if other is not None:
                raise _refuse(
                    path,
                    "case",
                    f"{_q(node)} and {_q(other)} differ only in case "
                    "(one name on macOS and Windows)",
                    other,
                )
            self._kinds[node] = is_folder
            self._nfc[nfc] = node
            self._folded[folded] = node


def check_names(paths: list[str] | tuple[str, ...]) -> None:
    """Refuse the first of ``paths`` (files of one tree) that breaks a rule (:data:`RULES`)."""
    names = NameSet()
    for path in paths:
        names.add(path)
