"""The ZIP a version is downloaded as, and the rules a published path must pass.

Input: the version's files as ``(path, bytes)``. Output: a flat, deterministic ZIP
(``SKILL.md`` at the root, entries sorted, fixed timestamps and modes), the layout
all three clients accept (spec §6: no ``package/`` folder, no top folder, forward
slashes, no ``..``, no links). The same files always give the same bytes, so an
archive is stored once in the content-addressed store and its sha256 is stable.
Path checks are the archive rules every installer applies
(:mod:`skillbook.distribution.archives.paths`, :mod:`skillbook.distribution.archives.names`):
what the registry accepts, every installer can write as published. A refused name is answered as a ``400`` JSON
body naming the path and the rule (``{"error": "publish.file-name", "rule", "path", …}``).
"""

from __future__ import annotations

import io
import posixpath
import zipfile
from collections.abc import Iterable
from typing import Final

from skillbook.distribution import InstallError
from skillbook.distribution.archives.names import NameRejected, NameSet, check_name
from skillbook.distribution.archives.paths import check_entry_path
from skillbook.distribution.hub import HubError, PathRejected

__all__ = [
    "FILE_NAME_ERROR",
    "build_zip",
    "check_publish_names",
    "check_publish_path",
    "name_refused",
]

#: The ``error`` of the JSON body a refused file name is answered with.
FILE_NAME_ERROR: Final = "publish.file-name"

#: 1980-01-01, the earliest time a ZIP can hold: the archive does not depend on the clock.
_EPOCH: Final = (1980, 1, 1, 0, 0, 0)
MAX_PATH_CHARS: Final = 1024


def check_publish_path(path: str) -> str:
    """``path`` if it is a safe relative file path, else :class:`PathRejected` (unsafe as a
    path) or :class:`~skillbook.distribution.archives.names.NameRejected` (a name one file system
    cannot hold as published)."""
    if not path or len(path) > MAX_PATH_CHARS:
        raise PathRejected(f"invalid file path {path!r}")
    if "\\" in path:
        raise PathRejected(f"file path {path!r} holds a backslash")
    try:
        check_entry_path(path)
    except InstallError as exc:
        raise PathRejected(str(exc).replace("archive entry", "file path")) from None
    segments = path.split("/")
    if any(seg in ("", ".", "..") for seg in segments) or posixpath.normpath(path) != path:
        raise PathRejected(f"file path {path!r} is not normalised (empty, '.' or '..' segment)")
    check_name(path)
    return path


def name_refused(exc: NameRejected) -> HubError:
    """The ``400`` a refused file name is answered with: JSON naming the path and the rule."""
    return HubError(400, str(exc), {"error": FILE_NAME_ERROR, **exc.problem.to_json()})


def check_publish_names(paths: Iterable[str]) -> None:
    """Refuse (``400``, JSON) the first path that clashes with another of the same version."""
    names = NameSet()
    try:
        for path in paths:
            names.add(path)
    except NameRejected as exc:
        raise name_refused(exc) from None


def build_zip(files: Iterable[tuple[str, bytes]]) -> bytes:
    """A flat ZIP of ``files``, sorted by path, byte-identical for identical input."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for path, data in sorted(files, key=lambda item: item[0]):
            info = zipfile.ZipInfo(path, date_time=_EPOCH)
            info.create_system = 3  # Unix, so the mode below is read
            info.external_attr = (0o100644 & 0xFFFF) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data, compresslevel=6)
    return buffer.getvalue()
