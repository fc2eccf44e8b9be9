"""The real paths of one discovery, each resolved once and each recorded.

Input: paths a discovery asks about (a root, a linked skill folder, a file to check).
Output: their strict real paths, or None where a path (or a link in it) does not
resolve. Resolving is many ``lstat`` calls, so answers are kept for the discovery
that owns the memo: they may go stale afterwards, and every read is re-verified on
its descriptor anyway, so a stale entry cannot smuggle a file in.

Every answer this memo gives is a fact the discovery's result depends on: while a
root is scanned (:class:`skillbook.pipeline.cache.scan_reads.scanning`) it is reported
to the scan, so the result cache sees a link retargeted. Answers a listing gave
(:meth:`RealpathMemo.note`) are not: the listing is recorded itself.
"""

from __future__ import annotations

from skillbook.base.fs import try_realpath
from skillbook.pipeline.cache.scan_reads import resolved

__all__ = ["RealpathMemo"]


class RealpathMemo:
    """Per-discovery memo of real paths (see the module docstring)."""

    __slots__ = ("_known", "_noted")

    def __init__(self) -> None:
        self._known: dict[str, str | None] = {}
        #: Paths whose answer :meth:`note` gave: facts of a listing, recorded with it.
        self._noted: set[str] = set()

    def realpath(self, path: str) -> str | None:
        """``fs.realpathSync`` of ``path``, or None when it does not resolve."""
        if path in self._known:
            known = self._known[path]
            if path not in self._noted:
                resolved(path, known)  # perhaps found while another root was scanned
            return known
        real = try_realpath(path)
        resolved(path, real)
        self._known[path] = real
        return real

    def note(self, path: str, real: str) -> None:
        """``real`` is the real path of ``path``, as a listing of a real folder showed."""
        if path not in self._known:
            self._known[path] = real
            self._noted.add(path)
