"""The ZIP a version is downloaded as, and the rules a published path must pass.

Input: the version's files as ``(path, bytes)``. Output: a flat, deterministic ZIP
(``SKILL.md`` at the root, entries sorted, fixed timestamps and modes), the layout
all three clients accept (spec §6: no ``package/`` folder, no top folder, forward
slashes, no ``..``, no links). The same files always give the same bytes, so an
archive is stored once in the content-addressed store and its sha256 is stable.
Path checks reuse the installer's archive rules (:mod:`skillbook.distribution.install.archive_paths`)
and file name rules (:mod:`skillbook.distribution.install.name_rules`): what the registry accepts,
every installer can write as published. A refused name is answered as a ``400`` JSON
body naming the path and the rule (``{"error": "publish.file-name", "rule", "path", …}``).
"""

from __future__ import annotations

import io
import posixpath
import zipfile
from collections.abc import Iterable
from typing import Final

from skillbook.distribution.hub import HubError, PathRejected
from skillbook.distribution.install import InstallError
from skillbook.distribution.install.archive_paths import check_entry_path
from skillbook.distribution.install.name_rules import NameRejected, NameSet, check_name

__all__ = [
    "FILE_NAME_ERROR",
    "build_zip",
    "check_publish_names",
    "check_publish_path",
    "name_refused",
    "skill_file_of",
]

#: The ``error`` of the JSON body a refused file name is answered with.
FILE_NAME_ERROR: Final = "publish.file-name"

#: 1980-01-01, the earliest time a ZIP can hold: the archive does not depend on the clock.
_EPOCH: Final = (1980, 1, 1, 0, 0, 0)
#: Root files that make a folder a skill (the CLI requires one of these at publish).
SKILL_FILES: Final = ("SKILL.md", "skill.md", "skills.md", "SKILL.MD")
MAX_PATH_CHARS: Final = 1024


def check_publish_path(path: str) -> str:
    """``path`` if it is a safe relative file path, else :class:`PathRejected` (unsafe as a
    path) or :class:`~skillbook.distribution.install.name_rules.NameRejected` (a name one file system
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


def skill_file_of(paths: Iterable[str]) -> str | None:
    """The root skill file among ``paths`` (``SKILL.md`` first), or None."""
    present = {p for p in paths if "/" not in p}
    for name in SKILL_FILES:
        if name in present:
            return name
    lowered = {p.lower(): p for p in present}
    return lowered.get("skill.md") or lowered.get("skills.md")


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
