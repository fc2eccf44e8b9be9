"""The content fingerprint of a skill, computed as the ``clawhub`` CLI computes it.

Input: the files of a skill as ``(relative path, bytes)`` pairs, or as ``(relative
path, sha256 hex)`` pairs when only the hashes are known (a registry that stored
them at publish). Output: 64 lowercase hex digits. Pure: which files belong to a
skill (dot segments, ``node_modules``, ignore files) is decided by
:mod:`skillbook.registry.skillfiles`; this module only hashes.

The algorithm (clawhub-api.md §4.3): one line ``<path>:<sha256 of the bytes>`` per
file, the lines sorted by path with JavaScript's ``localeCompare`` (ICU collation,
not byte order: ``references/a.md`` sorts before ``SKILL.md``), joined with ``\\n``
(no trailing newline), and the sha256 hex of that text. The result is what the CLI
stores in ``origin.json`` as ``fingerprint`` and sends to ``/api/v1/resolve`` as
``hash``. An empty file set hashes the empty text; callers that follow the CLI
record no fingerprint at all for a skill without files.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Final, Literal

from skillbook._js import js_sort_key, locale_compare_key

__all__ = ["ORDERS", "fingerprint_files", "fingerprint_hashes", "sha256_hex"]

#: ``"locale"``: the CLI's order (``localeCompare``); ``"bytes"``: code-unit order, which
#: a registry may also accept (clawhub-api.md §4.3 advises checking both).
ORDERS: Final = ("locale", "bytes")
Order = Literal["locale", "bytes"]


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fingerprint_hashes(pairs: Iterable[tuple[str, str]], *, order: Order = "locale") -> str:
    """The fingerprint of ``(path, sha256 hex)`` pairs; pairs with an empty part are
    left out, as the CLI leaves them out."""
    kept = [(path, digest) for path, digest in pairs if path and digest]
    if order == "locale":
        kept.sort(key=lambda pair: locale_compare_key(pair[0]))
    else:
        kept.sort(key=lambda pair: js_sort_key(pair[0]))
    payload = "\n".join(f"{path}:{digest}" for path, digest in kept)
    return sha256_hex(payload.encode("utf-8", "surrogatepass"))


def fingerprint_files(files: Iterable[tuple[str, bytes]]) -> str:
    """The CLI's fingerprint of ``(relative path, content)`` pairs (``/`` separators)."""
    return fingerprint_hashes((path, sha256_hex(data)) for path, data in files)
