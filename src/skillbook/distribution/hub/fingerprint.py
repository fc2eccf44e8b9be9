"""The content fingerprint of a published version, exactly as the ``clawhub`` CLI computes it.

Spec ``clawhub-api.md`` §4.3. The rule itself lives in one place,
:mod:`skillbook.distribution.fingerprint` (the client computes the same value for an
installed folder); this module applies it to a version's ``(path, sha256)`` list.
The CLI never fingerprints a path with a segment starting with ``.``, so neither does
the server. Because the CLI's order depends on ICU collation, the server also keeps
the byte-order value and ``/resolve`` accepts either.
"""

from __future__ import annotations

from collections.abc import Iterable

from skillbook.distribution.fingerprint import fingerprint_hashes

__all__ = ["fingerprint_bytes_order", "fingerprint_digests", "fingerprinted"]


def fingerprinted(path: str) -> bool:
    """Whether the CLI counts ``path`` (no empty, ``.`` or dot-prefixed segment)."""
    return all(seg and not seg.startswith(".") for seg in path.split("/"))


def fingerprint_digests(pairs: Iterable[tuple[str, str]]) -> str:
    """The CLI's fingerprint of ``(path, sha256 hex)`` pairs (ICU ``localeCompare`` order)."""
    return fingerprint_hashes(((p, h.lower()) for p, h in pairs if fingerprinted(p)))


def fingerprint_bytes_order(pairs: Iterable[tuple[str, str]]) -> str:
    """The same lines in code-unit order: what a client without ICU would send."""
    kept = ((p, h.lower()) for p, h in pairs if fingerprinted(p))
    return fingerprint_hashes(kept, order="bytes")
