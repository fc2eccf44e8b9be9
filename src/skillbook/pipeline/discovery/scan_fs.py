"""The file-system questions a root scan asks, each recorded where it is asked.

Input: paths the scanners and layouts ask about. Output: the answers of
:mod:`skillbook.base.fs` and :mod:`skillbook.base.listing`, unchanged. The helpers
there report nothing; these record the path asked about (and, for a listing, the
entries whose kind came through a link) to the scan of
:mod:`skillbook.pipeline.cache.scan_reads`, so the result cache learns what the scan
depended on. Outside a recorded scan each record costs one ``ContextVar.get``.
"""

from __future__ import annotations

import os

from skillbook.base import fs as _fs
from skillbook.base import listing as _listing
from skillbook.pipeline.cache.scan_reads import listed, touch

__all__ = ["has_file", "is_dir", "is_symlink_loop", "lexists", "list_child_dirs"]


def has_file(path: str) -> bool:
    """:func:`skillbook.base.fs.has_file`, recorded."""
    touch(path)
    return _fs.has_file(path)


def is_symlink_loop(path: str) -> bool:
    """:func:`skillbook.base.fs.is_symlink_loop`, recorded."""
    touch(path)
    return _fs.is_symlink_loop(path)


def is_dir(path: str) -> bool:
    """``os.path.isdir``, recorded."""
    touch(path)
    return os.path.isdir(path)


def lexists(path: str) -> bool:
    """``os.path.lexists``, recorded."""
    touch(path)
    return os.path.lexists(path)


def list_child_dirs(directory: str) -> _listing.Listing:
    """:func:`skillbook.base.listing.list_child_dirs`, recorded with the entries its
    folder's stat does not vouch for."""
    listing = _listing.list_child_dirs(directory)
    listed(directory, listing)
    return listing
