"""The reads of one skill root's scan, collected for the result cache's footprint.

Input: reports from the low-level helpers every scan goes through
(:mod:`skillbook.base.fs`, :mod:`skillbook.base.pinned_root`, the root scanners): each path
listed, ``stat``-ed, ``lstat``-ed or read (:func:`touch`, or :func:`stated` with the
``lstat`` taken), and each real path resolved (:func:`resolved`). Output: a
:class:`Scan`, while :class:`scanning` is active (held in a ``ContextVar``; outside
it each report costs one ``ContextVar.get``). The root scanner enters it only while
a :class:`~skillbook.pipeline.cache.footprint.Footprint` is recorded, and hands the scan to
:meth:`~skillbook.pipeline.cache.footprint.Footprint.scanned` unless the root was recorded plain.

Imports only ``os`` and ``contextvars``: :mod:`skillbook.base.fs` uses it.
"""

from __future__ import annotations

import os
from contextvars import ContextVar

__all__ = ["Scan", "resolved", "scanning", "stated", "touch"]

#: The reads of the root being scanned (see :class:`scanning`), or None.
_SCAN: ContextVar[Scan | None] = ContextVar("skillbook_scan_reads", default=None)


class Scan:
    """The paths one root's scan read and the real paths it resolved."""

    __slots__ = ("paths", "reals", "stats")

    def __init__(self) -> None:
        self.paths: set[str] = set()
        self.reals: dict[str, str | None] = {}
        self.stats: dict[str, os.stat_result] = {}


class scanning:  # a function to its callers: `with scanning() as scan:`
    """Collect the reads of one root's scan (:func:`touch`, :func:`resolved`) while a
    footprint is recorded; the caller hands them to
    :meth:`skillbook.pipeline.cache.footprint.Footprint.scanned` unless the root was recorded plain."""

    def __init__(self) -> None:
        self.scan = Scan()

    def __enter__(self) -> Scan:
        self._token = _SCAN.set(self.scan)
        return self.scan

    def __exit__(self, *_exc: object) -> None:
        _SCAN.reset(self._token)


def touch(path: str) -> None:
    """A scan listed, ``stat``-ed, ``lstat``-ed or read ``path``."""
    scan = _SCAN.get()
    if scan is not None:
        scan.paths.add(path)


def stated(path: str, info: os.stat_result) -> None:
    """A scan read ``path`` after taking this ``lstat`` of it (:func:`touch` as well)."""
    scan = _SCAN.get()
    if scan is not None:
        scan.paths.add(path)
        scan.stats.setdefault(path, info)


def resolved(path: str, answer: str | None) -> None:
    """A scan took ``answer`` as the strict real path of ``path``."""
    scan = _SCAN.get()
    if scan is not None:
        scan.reals[path] = answer
