"""Path primitives for discovery: containment and real paths.

Input: paths as ``str``. Output: plain values: absolute and real paths, and whether a
path lies inside a folder, exists or is a link (or a link that loops). Nothing here
raises on a bad skill folder, and nothing keeps state between calls except the
:class:`RealpathMemo` a caller creates. Listings are :mod:`skillbook._listing`'s,
verified reads :mod:`skillbook._verified_read`'s, and the race-proof open below a
real folder :mod:`skillbook._contained_open`'s.

The containment test mirrors OpenClaw's ``isPathInside``.
"""

from __future__ import annotations

import errno
import os
import stat as st
from typing import TYPE_CHECKING, Any

from skillbook._scan_reads import resolved, touch

# Windows compares paths case-insensitively (as OpenClaw's isPathInside does there).
_CASE_FOLD = os.name == "nt"


def abspath(path: str | os.PathLike[str]) -> str:
    """``path.resolve(p)``: absolute and normalised, symlinks untouched."""
    absolute = os.path.abspath(os.fspath(path))
    # POSIX normpath keeps a leading "//"; Node's path.resolve does not.
    if absolute.startswith("//") and not absolute.startswith("///"):
        absolute = absolute[1:]
    return absolute


def join(parent: str, name: str) -> str:
    """``os.path.join`` for one plain name (hot path: no type dispatch)."""
    return parent + name if parent.endswith(os.sep) else parent + os.sep + name


def is_path_inside(root: str, target: str) -> bool:
    """OpenClaw's ``isPathInside``: ``target`` equals ``root`` or lies below it (lexically).

    Absolute inputs are taken as already normalised (real paths are).
    """
    if _CASE_FOLD:
        root, target = os.path.normcase(abspath(root)), os.path.normcase(abspath(target))
    else:
        # Hot path (called for every candidate): plain string tests on POSIX.
        if root[:1] != "/":
            root = abspath(root)
        if target[:1] != "/":
            target = abspath(target)
    if target == root:
        return True
    return target.startswith(root if root.endswith(os.sep) else root + os.sep)


def _basename(path: str) -> str:
    """``os.path.basename`` of a str path; inline on POSIX (hot path)."""
    if _CASE_FOLD:
        return os.path.basename(path)
    return path[path.rfind("/") + 1 :]


def try_realpath(path: str) -> str | None:
    """``fs.realpathSync`` or ``None`` when the path (or a link in it) does not resolve."""
    try:
        answer: str | None = os.path.realpath(path, strict=True)
    except (OSError, ValueError, RuntimeError):
        answer = None
    resolved(path, answer)  # the result cache's footprint (skillbook.footprint)
    return answer


def is_symlink(path: str) -> bool:
    touch(path)
    try:
        return st.S_ISLNK(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


class RealpathMemo:
    """Per-discovery memo of directory real paths (realpath is many ``lstat`` calls).

    Owned by one ``discover`` call: results may go stale afterwards, and every read
    is re-verified on its descriptor anyway, so a stale entry cannot smuggle a file in.
    """

    __slots__ = ("_known", "_noted")

    def __init__(self) -> None:
        self._known: dict[str, str | None] = {}
        #: Paths whose answer :meth:`note` gave: facts of a listing, recorded with it.
        self._noted: set[str] = set()

    def realpath(self, path: str) -> str | None:
        if path in self._known:
            known = self._known[path]
            if path not in self._noted:
                resolved(path, known)  # perhaps found while another root was scanned
            return known
        real = try_realpath(path)
        self._known[path] = real
        return real

    def child(self, parent_real: str, name: str) -> str | None:
        """Real path of ``parent_real/name`` when ``parent_real`` is already real."""
        candidate = os.path.join(parent_real, name)
        touch(candidate)
        try:
            mode = os.lstat(candidate).st_mode
        except (OSError, ValueError):
            return None
        if not st.S_ISLNK(mode):
            # A real parent plus a non-link last component is already canonical.
            self._known.setdefault(candidate, candidate)
            return candidate
        return self.realpath(candidate)

    def note(self, path: str, real: str) -> None:
        if path not in self._known:
            self._known[path] = real
            self._noted.add(path)


def has_file(path: str) -> bool:
    """``fs.existsSync``: follows symlinks; a broken link does not exist."""
    touch(path)
    try:
        os.stat(path)
    except (OSError, ValueError):
        return False
    return True


def is_symlink_loop(path: str) -> bool:
    """Whether ``path`` is a symlink that never resolves (``a -> a``, ``a <-> b``)."""
    touch(path)
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    except ValueError:
        return False
    return False


if TYPE_CHECKING:
    from skillbook._contained_open import PathChanged as PathChanged
    from skillbook._contained_open import open_contained as open_contained
    from skillbook._verified_read import read_at_most as read_at_most
else:

    def __getattr__(name: str) -> Any:
        # Bridge for skillbook.mcp._skillfiles (being split elsewhere): it still reads
        # these three here. Imported on first use, so _fs imports neither module.
        if name in ("PathChanged", "open_contained"):
            from skillbook import _contained_open

            return getattr(_contained_open, name)
        if name == "read_at_most":
            from skillbook._verified_read import read_at_most

            return read_at_most
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
