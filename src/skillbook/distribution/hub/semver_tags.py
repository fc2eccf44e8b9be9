"""Versions and tags: semver validation, ordering, and which version a tag or "latest" means.

Pure: input versions as strings, output decisions. Versions must be valid semver
2.0 (the clawhub CLI checks ``semver.valid``); tags are short names that move
between versions (``latest`` by default).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

import semver

__all__ = ["TAG_RE", "is_semver", "newest", "semver_key", "valid_tag"]

#: Tag names: letters, digits, ``.``, ``_``, ``-``; never a version-looking string.
TAG_RE: Final = re.compile(r"^[A-Za-z][A-Za-z0-9._-]{0,63}$")


def is_semver(value: str) -> bool:
    return semver.Version.is_valid(value)


def semver_key(value: str) -> semver.Version:
    return semver.Version.parse(value)


def newest(versions: Iterable[str]) -> str | None:
    """The highest semver among ``versions`` (invalid ones ignored), or None."""
    valid = [v for v in versions if is_semver(v)]
    return max(valid, key=semver_key) if valid else None


def valid_tag(tag: str) -> bool:
    return bool(TAG_RE.match(tag))
