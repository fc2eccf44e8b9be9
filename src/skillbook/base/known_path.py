"""``Path`` objects for path strings discovery has already normalised, made cheaply.

A cold build makes two ``Path`` objects per skill (its ``SKILL.md`` and its folder)
and later asks each for its string: ``Path(text)`` splits and interns every
component, and ``str()`` joins them again, ~4 µs of a skill's ~110 µs. Discovery's
strings are absolute and normalised already (``_fs.abspath`` and plain joins), so on
CPython 3.11's ``pathlib`` the object can be built from its parts directly, its
string remembered. Anything else (other versions, Windows, a string that ``Path``
would rewrite: ``//``, ``.`` parts, a trailing ``/``) takes ``Path(text)``; a
differential test holds the two to the same object.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path, PosixPath, PurePath

# pathlib's private layout (``_drv``, ``_root``, ``_parts``, ``_str``, ``_cached_cparts``)
# as of 3.11 only.
_FAST = (
    sys.version_info[:2] == (3, 11)
    and os.name == "posix"
    and type(Path()) is PosixPath
    and callable(getattr(PosixPath, "_from_parsed_parts", None))
    and "_cached_cparts" in getattr(PurePath, "__slots__", ())
)


def known_path(text: str) -> Path:
    """``Path(text)`` (the same value, string, parts and hash)."""
    if (
        _FAST
        and text[:1] == "/"
        and len(text) > 1
        and "//" not in text
        and text[-1] != "/"
        and "/./" not in text
        and not text.endswith("/.")
    ):
        parts = text[1:].split("/")
        parts.insert(0, "/")
        return _made(parts, text)
    return Path(text)


def known_parent(child: Path, text: str) -> Path:
    """``Path(text)`` where ``child`` is ``text`` joined with one name (a skill folder
    and its ``SKILL.md``): made from the child's parts instead of splitting ``text``."""
    parts = getattr(child, "_parts", None) if _FAST and type(child) is PosixPath else None
    if (
        parts is None
        or len(parts) < 3
        or parts[0] != "/"
        or text[-1:] == "/"
        or str(child) != f"{text}/{parts[-1]}"
    ):
        return known_path(text)
    return _made(parts[:-1], text)


def _made(parts: list[str], text: str) -> Path:
    path: Path = PosixPath._from_parsed_parts("", "/", parts)  # type: ignore[attr-defined]
    path._str = text  # type: ignore[attr-defined]
    # What ``_cparts`` (hash, ==, sorting) would make of them: on POSIX the parts list
    # itself (no case folding); the merge of roots hashes every skill's file path.
    path._cached_cparts = parts  # type: ignore[attr-defined]
    return path
