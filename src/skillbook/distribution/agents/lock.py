"""``skills-lock.json`` and its ``computedHash``, byte for byte as the ``skills`` CLI writes them.

Input: a skill folder (for the hash) or a project folder and the entries to add or drop.
Output: the SHA-256 hex of the folder (:func:`computed_hash`) and the lock file rewritten
atomically (:func:`update_lock`).

The hash: every regular file under the folder (symlinks are not followed and ``.git``
and ``node_modules`` folders are skipped), ordered by JavaScript's ``localeCompare`` of
their ``/``-separated relative paths, each fed as the path's UTF-8 then the file's
bytes. The file: ``{"version": 1, "skills": {...}}`` indented by two spaces with a
trailing newline, skills ordered as ``Object.keys(...).sort()`` orders them, ``local``
sources written relative to the project (``./x``, ``../x``). Entries skillbook did not
write are kept as they are (only their local source is re-expressed, as the other
tool does on every write); an unreadable file counts as empty, as it does there,
except one with merge-conflict markers: that is an error naming the file
(``agents.lock-conflict``), where the other tool would take it as empty and drop every
entry of both sides on its next write.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import re
import unicodedata
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

from skillbook.base.atomic import write_atomic
from skillbook.distribution.agents import AgentsError

__all__ = [
    "LOCK_FILE",
    "computed_hash",
    "js_locale_key",
    "lock_text",
    "portable_source",
    "read_lock",
    "update_lock",
]

LOCK_FILE: Final = "skills-lock.json"
LOCK_VERSION: Final = 1
_SKIP_DIRS: Final = frozenset({".git", "node_modules"})
#: A line git writes around the two sides of a conflict (``|||||||``: diff3's base).
_CONFLICT_MARKER: Final = re.compile(r"^(?:<{7}|={7}|>{7}|\|{7})(?: |\r?$)", re.M)
#: Printable ASCII in the order of ICU's root collation (what Node's ``localeCompare``
#: uses): punctuation and symbols, digits, then letters with each lowercase letter just
#: before its capital. Read from Node 20 by sorting the characters.
_ASCII_ORDER: Final = (
    " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789"
    "aAbBcCdDeEfFgGhHiIjJkKlLmMnNoOpPqQrRsStTuUvVwWxXyYzZ"
)
_PRIMARY: Final = {
    c: (i if not c.isalpha() else _ASCII_ORDER.index(c.lower())) for i, c in enumerate(_ASCII_ORDER)
}


def _primary(ch: str) -> int | None:
    """The first-level weight of one character; None for ignorable controls."""
    found = _PRIMARY.get(ch)
    if found is not None:
        return found
    if ord(ch) < 0x20 or ord(ch) == 0x7F:
        return None
    # Beyond ASCII: an accented letter sorts with its base letter; anything else after
    # ASCII by code point (an approximation of the full collation table).
    base = unicodedata.normalize("NFKD", ch)[:1].lower()
    if base in _PRIMARY and base.isalpha():
        return _PRIMARY[base]
    return len(_ASCII_ORDER) + ord(ch)


def js_locale_key(text: str) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """A sort key ordering strings as ``a.localeCompare(b)`` does (exact for ASCII).

    ICU compares the first-level weights of the whole strings, then accents, then case
    (lowercase first)."""
    primary: list[int] = []
    accents: list[int] = []
    case: list[int] = []
    for ch in text:
        weight = _primary(ch)
        if weight is None:
            continue
        primary.append(weight)
        accents.append(len(unicodedata.normalize("NFKD", ch)))
        case.append(1 if ch != ch.lower() else 0)
    return tuple(primary), tuple(accents), tuple(case)


def _collect(root: Path, folder: Path) -> Iterator[tuple[str, Path]]:
    with os.scandir(folder) as entries:
        for entry in list(entries):
            path = Path(entry.path)
            if entry.is_dir(follow_symlinks=False):
                if entry.name in _SKIP_DIRS:
                    continue
                yield from _collect(root, path)
            elif entry.is_file(follow_symlinks=False):
                yield path.relative_to(root).as_posix(), path


def computed_hash(folder: Path) -> str:
    """The ``computedHash`` of a skill folder (see the module docstring)."""
    files = sorted(_collect(folder, folder), key=lambda item: js_locale_key(item[0]))
    digest = hashlib.sha256()
    for rel, path in files:
        digest.update(rel.encode("utf-8", "surrogatepass"))
        digest.update(path.read_bytes())
    return digest.hexdigest()


def portable_source(source: str, lock_dir: Path) -> str:
    """A local source as the lock stores it: relative to the project, ``./`` or ``../``."""
    absolute = source if posixpath.isabs(source) else posixpath.join(str(lock_dir), source)
    absolute = posixpath.normpath(absolute)
    rel = posixpath.relpath(absolute, posixpath.normpath(str(lock_dir)))
    if rel == ".":
        return "."
    if rel == ".." or rel.startswith("../"):
        return rel
    return f"./{rel}"


def _is_array_index(key: str) -> bool:
    return key.isascii() and key.isdigit() and str(int(key)) == key and int(key) < 2**32 - 1


def _js_key_order(keys: list[str]) -> list[str]:
    """``Object.keys(o).sort()`` re-inserted into an object, then enumerated: integer-like
    keys come first in numeric order, the rest in UTF-16 code-unit order."""
    ints = sorted((k for k in keys if _is_array_index(k)), key=int)
    rest = sorted(
        (k for k in keys if not _is_array_index(k)),
        key=lambda k: k.encode("utf-16-be", "surrogatepass"),
    )
    return ints + rest


def read_lock(project: Path) -> dict[str, Any]:
    """The lock's ``skills`` object (empty when the file is missing or unusable).

    Raises :class:`AgentsError` (``agents.lock-conflict``) when the file holds
    merge-conflict markers: its entries are not lost by taking it as empty."""
    path = project / LOCK_FILE
    try:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return {}
    try:
        parsed = json.loads(text)
    except ValueError:
        if _CONFLICT_MARKER.search(text):
            raise AgentsError(
                "agents.lock-conflict",
                f"{path} has merge-conflict markers (<<<<<<< … >>>>>>>); resolve the "
                "conflict (keep the entries of both sides) and run the command again",
            ) from None
        return {}
    if not isinstance(parsed, dict):
        return {}
    version, skills = parsed.get("version"), parsed.get("skills")
    if isinstance(version, bool) or not isinstance(version, int | float) or version < LOCK_VERSION:
        return {}
    return dict(skills) if isinstance(skills, dict) else {}


def lock_text(skills: Mapping[str, Any], project: Path) -> str:
    """The file's text for these entries (sorted, local sources portable, trailing newline)."""
    ordered: dict[str, Any] = {}
    for key in _js_key_order(list(skills)):
        entry = skills[key]
        if (
            isinstance(entry, dict)
            and entry.get("sourceType") == "local"
            and isinstance(entry.get("source"), str)
        ):
            entry = {**entry, "source": portable_source(entry["source"], project)}
        ordered[key] = entry
    body = {"version": LOCK_VERSION, "skills": ordered}
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"


def update_lock(
    project: Path, add: Mapping[str, Mapping[str, Any]] = {}, drop: tuple[str, ...] = ()
) -> Path:
    """Add or replace entries and drop others; the file is replaced in one rename."""
    skills = read_lock(project)
    for name in drop:
        skills.pop(name, None)
    for name, entry in add.items():
        skills[name] = dict(entry)
    path = project / LOCK_FILE
    write_atomic(path, lock_text(skills, project).encode("utf-8"), prefix=f".{LOCK_FILE}.")
    return path
