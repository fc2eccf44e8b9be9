"""The content fingerprint of a skill, computed as the ``clawhub`` CLI computes it.

Input: the files of a skill as ``(relative path, bytes)`` pairs, or as ``(relative
path, sha256 hex)`` pairs when only the hashes are known (a registry that stored
them at publish). Output: 64 lowercase hex digits. Pure: which files belong to a
skill (dot segments, ``node_modules``, ignore files) is decided by
:mod:`skillbook.distribution.registry.skillfiles`; this module only hashes.

The algorithm (clawhub-api.md §4.3): one line ``<path>:<sha256 of the bytes>`` per
file, the lines sorted by path with JavaScript's ``localeCompare`` (ICU collation,
not byte order: ``references/a.md`` sorts before ``SKILL.md``), joined with ``\\n``
(no trailing newline), and the sha256 hex of that text. The result is what the CLI
stores in ``origin.json`` as ``fingerprint`` and sends to ``/api/v1/resolve`` as
``hash``. An empty file set hashes the empty text; callers that follow the CLI
record no fingerprint at all for a skill without files.

OpenClaw 2026.9 records a second digest, of the whole tree (``fileTreeSha256``,
clawhub-api.md §4.5): entries depth first, each level sorted by code unit, each a
``{"path", "type": "directory"}`` or ``{"path", "type": "file", "sha256"}`` object,
``JSON.stringify``-ed without spaces, hashed, prefixed ``sha256:``.
:func:`tree_digest` computes it from those entries (:func:`skillbook.distribution.registry.skillfiles.tree_entries`
walks a folder for them); dotfiles count there, only the top-level ``.clawhub`` and
``.clawdhub`` do not.

A registry (the server, or the publisher before it uploads) fingerprints a version from
the ``(path, sha256)`` list it stored: :func:`fingerprint_digests` leaves out what the
CLI never counts (a path with an empty or dot-prefixed segment), and
:func:`fingerprint_bytes_order` gives the code-unit-order value a client without ICU
would send, which ``/resolve`` also accepts.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable
from typing import Final, Literal

from skillbook.base.js import js_sort_key, locale_compare_key

__all__ = [
    "ORDERS",
    "TreeEntry",
    "fingerprint_bytes_order",
    "fingerprint_digests",
    "fingerprint_files",
    "fingerprint_hashes",
    "fingerprinted",
    "github_content_hash",
    "integrity",
    "sha256_hex",
    "tree_digest",
]

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


def fingerprinted(path: str) -> bool:
    """Whether the CLI counts ``path`` (no empty, ``.`` or dot-prefixed segment)."""
    return all(seg and not seg.startswith(".") for seg in path.split("/"))


def fingerprint_digests(pairs: Iterable[tuple[str, str]]) -> str:
    """The CLI's fingerprint of a version's ``(path, sha256 hex)`` pairs, the paths it
    never counts left out (ICU ``localeCompare`` order)."""
    return fingerprint_hashes(((p, h.lower()) for p, h in pairs if fingerprinted(p)))


def fingerprint_bytes_order(pairs: Iterable[tuple[str, str]]) -> str:
    """The same lines in code-unit order: what a client without ICU would send."""
    kept = ((p, h.lower()) for p, h in pairs if fingerprinted(p))
    return fingerprint_hashes(kept, order="bytes")


#: One entry of OpenClaw 2026.9's tree digest: ``(path, sha256 hex)`` for a file,
#: ``(path, None)`` for a folder.
TreeEntry = tuple[str, str | None]


def tree_digest(entries: Iterable[TreeEntry]) -> str:
    """``fileTreeSha256`` of entries already in OpenClaw's walk order."""
    items: list[dict[str, str]] = []
    for path, digest in entries:
        if digest is None:
            items.append({"path": path, "type": "directory"})
        else:
            items.append({"path": path, "type": "file", "sha256": digest})
    text = json.dumps(items, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + sha256_hex(text.encode("utf-8", "surrogatepass"))


def github_content_hash(files: Iterable[tuple[str, int, str]]) -> str:
    """The ``clawhub`` CLI's hash of a GitHub folder (clawhub-api.md §4.4): one
    ``<path>\\0<size>\\0<sha256>`` line per ``(path, size, sha256 hex)``, sorted by path as
    ``localeCompare`` sorts, joined with ``\\n``, hashed. A skills.sh install must match
    the ``contentHash`` the registry's resolver approved."""
    rows = sorted(files, key=lambda row: locale_compare_key(row[0]))
    payload = "\n".join(f"{path}\0{size}\0{digest.lower()}" for path, size, digest in rows)
    return sha256_hex(payload.encode("utf-8", "surrogatepass"))


def integrity(sha256: str) -> str:
    """``sha256-<base64>`` (Subresource Integrity) of a sha256 hex digest."""
    return "sha256-" + base64.b64encode(bytes.fromhex(sha256)).decode("ascii")
