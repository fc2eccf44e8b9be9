"""The content fingerprint of a skill version, exactly as the ``clawhub`` CLI computes it.

Spec ``clawhub-api.md`` §4.3: the ``(path, sha256)`` pairs of the files, sorted by
path with JavaScript's ``localeCompare`` (ICU collation), as ``path:sha256`` lines
joined by ``\\n``, hashed with sha256. Paths with a segment starting with ``.`` are
left out (the CLI never fingerprints them). Because the order depends on ICU, the
server also keeps the same lines in byte order and ``/resolve`` accepts either.

TODO(lead): ``skillbook.registry.fingerprint.fingerprint_files`` (the client, issue
12) is the one home of this rule once it lands; this module then delegates to it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from skillbook._js import locale_compare_key

__all__ = ["fingerprint_bytes_order", "fingerprint_digests", "fingerprinted"]


def fingerprinted(path: str) -> bool:
    """Whether the CLI counts ``path`` (no empty, ``.`` or dot-prefixed segment)."""
    return all(seg and not seg.startswith(".") for seg in path.split("/"))


def _digest(lines: Iterable[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def fingerprint_digests(pairs: Iterable[tuple[str, str]]) -> str:
    """The CLI's fingerprint of ``(path, sha256 hex)`` pairs (ICU ``localeCompare`` order)."""
    kept = [(p, h.lower()) for p, h in pairs if fingerprinted(p)]
    kept.sort(key=lambda pair: locale_compare_key(pair[0]))
    return _digest(f"{p}:{h}" for p, h in kept)


def fingerprint_bytes_order(pairs: Iterable[tuple[str, str]]) -> str:
    """The same lines sorted by code point: what a client without ICU would send."""
    kept = sorted((p, h.lower()) for p, h in pairs if fingerprinted(p))
    return _digest(f"{p}:{h}" for p, h in kept)
