"""Safe file-system primitives for discovery: containment, listings, verified reads.

Input: paths as ``str``. Output: plain values (real paths, listings, bytes) or a
:class:`ReadFailure` that says *why* a file was refused, so the caller can turn it
into a diagnostic. Nothing here raises on a bad skill folder, and nothing keeps
state between calls except the :class:`RealpathMemo` a caller creates.

The checks mirror OpenClaw's ``openVerifiedFileSync`` and ``isPathInside``: a
symlinked file is refused, the file must be regular, its size is checked from
``stat`` before reading, it is opened with ``O_NOFOLLOW`` and the descriptor must
be the same inode/device that was checked, and no more than ``max_bytes`` are read.
"""

from __future__ import annotations

import os
import stat as st
import sys
from dataclasses import dataclass

from skillbook._js import locale_compare_key

#: Names a directory listing never offers as candidates (besides ``.``-prefixed ones).
IGNORED_DIR_NAMES = frozenset({"node_modules"})

# Failure kinds of a verified read; discover maps each to a diagnostic code.
MISSING = "missing"
SYMLINK = "symlink"
NOT_REGULAR = "not-regular"
TOO_LARGE = "too-large"
CHANGED = "changed"
ESCAPE = "escape"
IO_ERROR = "io"

# Windows compares paths case-insensitively (as OpenClaw's isPathInside does there).
_CASE_FOLD = os.name == "nt"

_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    # A file swapped for a FIFO between the checks must not block the reader.
    | getattr(os, "O_NONBLOCK", 0)
)


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
        return os.path.realpath(path, strict=True)
    except (OSError, ValueError, RuntimeError):
        return None


def is_symlink(path: str) -> bool:
    try:
        return st.S_ISLNK(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


def byte_order_key(name: str) -> bytes:
    """Node's ``readdir`` order: libuv sorts entries with ``strcmp`` on the raw bytes."""
    return os.fsencode(name)


_FS_ENCODING = sys.getfilesystemencoding()
_FS_ERRORS = sys.getfilesystemencodeerrors()


def _entry_order_key(entry: os.DirEntry[str]) -> bytes:
    # byte_order_key(entry.name) in one call: os.fsencode of a str is this encode.
    return entry.name.encode(_FS_ENCODING, _FS_ERRORS)


class RealpathMemo:
    """Per-discovery memo of directory real paths (realpath is many ``lstat`` calls).

    Owned by one ``discover`` call: results may go stale afterwards, and every read
    is re-verified on its descriptor anyway, so a stale entry cannot smuggle a file in.
    """

    __slots__ = ("_known",)

    def __init__(self) -> None:
        self._known: dict[str, str | None] = {}

    def realpath(self, path: str) -> str | None:
        if path in self._known:
            return self._known[path]
        real = try_realpath(path)
        self._known[path] = real
        return real

    def child(self, parent_real: str, name: str) -> str | None:
        """Real path of ``parent_real/name`` when ``parent_real`` is already real."""
        candidate = os.path.join(parent_real, name)
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
        self._known.setdefault(path, real)


@dataclass(frozen=True, slots=True)
class Listing:
    """One directory read the way OpenClaw's ``listChildDirectories`` reads it.

    ``dirs`` are candidate names in readdir (byte) order, symlinks to directories
    included; the other fields are what OpenClaw skips silently, kept for diagnostics.
    """

    dirs: tuple[str, ...] = ()
    linked: frozenset[str] = frozenset()  # names in ``dirs`` that are symlinks
    hidden_dirs: tuple[str, ...] = ()
    broken_links: tuple[str, ...] = ()
    md_files: tuple[str, ...] = ()
    error: str | None = None


def list_child_dirs(directory: str) -> Listing:
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=_entry_order_key)
    except OSError as exc:
        return Listing(error=exc.strerror or str(exc))
    dirs: list[str] = []
    linked: set[str] = set()
    hidden: list[str] = []
    broken: list[str] = []
    md_files: list[str] = []
    for entry in entries:
        name = entry.name
        try:
            is_link = entry.is_symlink()
            is_dir = entry.is_dir(follow_symlinks=True)
        except OSError:
            is_link, is_dir = False, False
        if is_link and not is_dir and not os.path.exists(entry.path):
            broken.append(name)
            continue
        if name.startswith("."):
            if is_dir:
                hidden.append(name)
            continue
        if name in IGNORED_DIR_NAMES:
            continue
        if is_dir:
            dirs.append(name)
            if is_link:
                linked.add(name)
        elif name.lower().endswith(".md"):
            md_files.append(name)
    return Listing(
        dirs=tuple(dirs),
        linked=frozenset(linked),
        hidden_dirs=tuple(hidden),
        broken_links=tuple(broken),
        md_files=tuple(md_files),
    )


def list_real_subdirs_locale(directory: str) -> list[str]:
    """``listCandidateSkillDirs``: real (non-link) child dirs, full paths, localeCompare order."""
    try:
        with os.scandir(directory) as it:
            paths = [
                e.path
                for e in it
                if not e.name.startswith(".")
                and e.name not in IGNORED_DIR_NAMES
                and e.is_dir(follow_symlinks=False)
            ]
    except OSError:
        return []
    return sorted(paths, key=locale_compare_key)


def has_file(path: str) -> bool:
    """``fs.existsSync``: follows symlinks; a broken link does not exist."""
    try:
        os.stat(path)
    except (OSError, ValueError):
        return False
    return True


@dataclass(frozen=True, slots=True)
class ReadFailure:
    kind: str
    detail: str = ""
    size: int | None = None
    real: str | None = None


@dataclass(frozen=True, slots=True)
class Verified:
    """A file that passed every check before opening; ``identity`` keys the parse cache."""

    path: str
    real: str
    size: int
    identity: tuple[int, int, int, int, int]


def _identity(s: os.stat_result) -> tuple[int, int, int, int, int]:
    return (s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns)


def verify_file(
    path: str,
    *,
    root_real: str,
    max_bytes: int,
    memo: RealpathMemo | None = None,
    dir_real: str | None = None,
    known: os.stat_result | None = None,
) -> Verified | ReadFailure:
    """Check ``path`` without reading it.

    ``dir_real``: the known real path of its folder; ``known``: an ``lstat`` of
    ``path`` the caller just made (saves a system call on the hot path).
    """
    try:
        link_stat = known if known is not None else os.lstat(path)
    except FileNotFoundError:
        return ReadFailure(MISSING)
    except (OSError, ValueError) as exc:
        return ReadFailure(IO_ERROR, str(exc))
    if st.S_ISLNK(link_stat.st_mode):
        return ReadFailure(SYMLINK, real=try_realpath(path))
    if dir_real is not None:
        real: str | None = join(dir_real, _basename(path))
    else:
        real = memo.realpath(path) if memo is not None else try_realpath(path)
    if real is None:
        return ReadFailure(IO_ERROR, "the path does not resolve")
    try:
        pre = link_stat if real == path else os.lstat(real)
    except (OSError, ValueError) as exc:
        return ReadFailure(IO_ERROR, str(exc))
    if not st.S_ISREG(pre.st_mode):
        return ReadFailure(NOT_REGULAR, real=real)
    if pre.st_size > max_bytes:
        return ReadFailure(TOO_LARGE, size=pre.st_size, real=real)
    if not is_path_inside(root_real, real):
        return ReadFailure(ESCAPE, real=real)
    return Verified(path=path, real=real, size=pre.st_size, identity=_identity(pre))


def read_at_most(fd: int, limit: int) -> bytes:
    """Read from ``fd`` until end of file or ``limit`` bytes, whichever comes first.

    Every bounded read goes through here: the size ``stat`` gave is never trusted as
    the end, because a file can grow between the check and the read.
    """
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_contained(path: str, *, root_real: str, max_bytes: int) -> bytes | ReadFailure:
    """A small file inside ``root_real`` (a manifest, a command file), verified as a
    SKILL.md is: no symlink, regular, inside the root, at most ``max_bytes``."""
    checked = verify_file(path, root_real=root_real, max_bytes=max_bytes)
    if isinstance(checked, ReadFailure):
        return checked
    got = read_verified(checked, max_bytes=max_bytes)
    return got if isinstance(got, ReadFailure) else got[0]


def read_verified(
    checked: Verified, *, max_bytes: int
) -> tuple[bytes, tuple[int, int, int, int, int]] | ReadFailure:
    """Open the checked file with ``O_NOFOLLOW``, confirm it is the same file, read it.

    Returns the bytes and the identity from ``fstat`` taken *before* reading: a later
    change to the file changes its ctime, so caching under it is safe.
    """
    try:
        fd = os.open(checked.real, _OPEN_FLAGS)
    except OSError as exc:
        if getattr(exc, "errno", None) == getattr(os, "ELOOP", -1):
            return ReadFailure(SYMLINK, real=checked.real)
        return ReadFailure(IO_ERROR, exc.strerror or str(exc))
    try:
        opened = os.fstat(fd)
        if not st.S_ISREG(opened.st_mode):
            return ReadFailure(NOT_REGULAR, real=checked.real)
        if opened.st_size > max_bytes:
            return ReadFailure(TOO_LARGE, size=opened.st_size, real=checked.real)
        if (opened.st_dev, opened.st_ino) != checked.identity[:2]:
            return ReadFailure(CHANGED, real=checked.real)
        data = read_at_most(fd, max_bytes)
        if len(data) >= max_bytes and os.fstat(fd).st_size > max_bytes:
            # Grew while we read: the cap holds, the truncated text is not used.
            return ReadFailure(TOO_LARGE, size=os.fstat(fd).st_size, real=checked.real)
        return data, _identity(opened)
    except OSError as exc:
        return ReadFailure(IO_ERROR, exc.strerror or str(exc))
    finally:
        os.close(fd)


_FAILURES = {
    MISSING: ("discover.unreadable", "error", "disappeared while it was being read"),
    SYMLINK: (
        "discover.symlinked-skill-md",
        "error",
        "is a symbolic link{target}; skill files are never read through a link, even "
        "inside the root: copy the file, or symlink the whole skill folder instead",
    ),
    NOT_REGULAR: (
        "discover.not-regular-file",
        "error",
        "is not a regular file{target}; the skill is not loaded",
    ),
    CHANGED: (
        "discover.unreadable",
        "error",
        "changed between its check and its opening (a different file was opened); not read",
    ),
    ESCAPE: (
        "discover.path-escape",
        "warning",
        "resolves to {real}, outside its skill folder; not read",
    ),
    IO_ERROR: ("discover.unreadable", "error", "could not be read: {detail}"),
    TOO_LARGE: ("discover.file-too-large", "error", "is too large ({size} bytes); not read"),
}


def describe_failure(failure: ReadFailure, path: str) -> tuple[str, str, str]:
    """(diagnostic code, severity, message) for a refused read of ``path``."""
    code, severity, template = _FAILURES[failure.kind]
    if failure.kind == SYMLINK and failure.real is None:
        target = " whose target does not exist"
    elif failure.real is not None and failure.real != path:
        target = f" (to {failure.real})"
    else:
        target = ""
    text = template.format(
        target=target, real=failure.real, detail=failure.detail, size=failure.size
    )
    return code, severity, f"{os.path.basename(path)} {text}"
