"""The reads of one skill root's scan, collected for the result cache's footprint.

Input: reports from the discovery stage, which knows which paths it asked about:
each path it listed, ``stat``-ed, ``lstat``-ed or read (:func:`touch`, or
:func:`stated` with the ``lstat`` taken), each listing with the entries whose kind
came through a link (:func:`listed`), each verified file with the ``lstat`` the check
took (:func:`checked`), and each real path it took (:func:`resolved`, which
:class:`~skillbook.pipeline.cache.realpath_memo.RealpathMemo` reports). The file-system
helpers of :mod:`skillbook.base` report nothing: the stage records from the values they
return. Output: a :class:`Scan`, while :class:`scanning` is active (held in a
``ContextVar``; outside it each report costs one ``ContextVar.get``). The root
scanner enters it only while a :class:`~skillbook.pipeline.cache.footprint.Footprint` is
recorded, and hands the scan to
:meth:`~skillbook.pipeline.cache.footprint.Footprint.scanned` unless the root was recorded plain.
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from typing import TYPE_CHECKING

from skillbook.base.verified_read import SYMLINK, ReadFailure, Verified

if TYPE_CHECKING:
    from skillbook.base.listing import Listing

__all__ = ["Scan", "checked", "listed", "resolved", "scanning", "stated", "touch"]

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


def listed(directory: str, listing: Listing) -> None:
    """A scan listed ``directory``: its entries (and their kinds, but for links) are
    unchanged while its stat is; an entry whose kind came through a link, or could not
    be read, is recorded by its own path."""
    scan = _SCAN.get()
    if scan is not None:
        paths = scan.paths
        paths.add(directory)
        for name in listing.followed:
            paths.add(os.path.join(directory, name))


def checked(path: str, result: Verified | ReadFailure) -> None:
    """A scan checked ``path`` for reading (:func:`skillbook.base.verified_read.verify_file`).

    A verified file is recorded with the ``lstat`` the check took: its signature covers
    the bytes read (they cannot change without its ctime changing). A refused one is
    recorded by path, with the real path it was refused at unless that came from
    following the link itself (which :func:`resolved` records).
    """
    scan = _SCAN.get()
    if scan is None:
        return
    paths = scan.paths
    paths.add(path)
    if isinstance(result, Verified):
        # Not a link, so its lstat is its real path's: one inode, one signature.
        info, real = result.info, result.real
        if info is not None:
            scan.stats.setdefault(path, info)
        if real != path:
            paths.add(real)
            if info is not None:
                scan.stats.setdefault(real, info)
    elif result.real is not None and result.kind != SYMLINK:
        paths.add(result.real)
