"""Safe file-system primitives for discovery: containment, listings, verified reads.

Input: paths as ``str``. Output: plain values (real paths, listings, bytes) or a
:class:`ReadFailure` that says *why* a file was refused, so the caller can turn it
into a diagnostic. Nothing here raises on a bad skill folder, and nothing keeps
state between calls except the :class:`RealpathMemo` a caller creates.

The checks mirror OpenClaw's ``openVerifiedFileSync`` and ``isPathInside``: a
symlinked file is refused, the file must be regular, its size is checked from
``stat`` before reading, it is opened with ``O_NOFOLLOW`` and the descriptor must
be the same inode/device that was checked, and no more than ``max_bytes`` are read.

Beyond OpenClaw: a folder on the way can be swapped for a symlink between the check
and the open (``O_NOFOLLOW`` guards only the last component). :func:`open_contained`
therefore opens every component below a known real folder with ``O_NOFOLLOW`` through
directory descriptors, and on Linux also compares the kernel's path of the opened
descriptor with the real path that was checked, which covers the folders above.
"""

from __future__ import annotations

import errno
import operator
import os
import stat as st
import sys
from collections.abc import Callable
from dataclasses import dataclass

from skillbook._fast_init import fast_init
from skillbook._js import locale_compare_key
from skillbook._scan_reads import resolved, stated, touch

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
LOOP = "loop"

# Windows compares paths case-insensitively (as OpenClaw's isPathInside does there).
_CASE_FOLD = os.name == "nt"

_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    # A file swapped for a FIFO between the checks must not block the reader.
    | getattr(os, "O_NONBLOCK", 0)
)
_DIR_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
# openat(2) through os.open(dir_fd=...); without it, components are checked by path.
_HAS_DIR_FD = os.open in os.supports_dir_fd and bool(getattr(os, "O_DIRECTORY", 0))
_PROC_FD = "/proc/self/fd"
_HAS_PROC_FD = sys.platform.startswith("linux") and os.path.isdir(_PROC_FD)
# For skillbook._pinned_root, which opens below a held folder the same way.
HAS_DIR_FD, HAS_PROC_FD, DIR_FLAGS = _HAS_DIR_FD, _HAS_PROC_FD, _DIR_FLAGS


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
    #: Symlinks that resolve to themselves (``a -> a``, ``a <-> b``).
    looped_links: tuple[str, ...] = ()


_NAME = operator.attrgetter("name")


def list_child_dirs(directory: str) -> Listing:
    # A folder's entries (and their kinds, but for links) are unchanged while its stat is.
    touch(directory)
    try:
        with os.scandir(directory) as it:
            entries = list(it)
    except OSError as exc:
        return Listing(error=exc.strerror or str(exc))
    # UTF-8 keeps code-point order, so names sort as their bytes do, except names
    # holding undecodable bytes (surrogate escapes): only those need the byte key.
    if all(e.name.isascii() for e in entries):
        entries.sort(key=_NAME)
    else:
        entries.sort(key=_entry_order_key)
    dirs: list[str] = []
    linked: set[str] = set()
    hidden: list[str] = []
    broken: list[str] = []
    looped: list[str] = []
    md_files: list[str] = []
    for entry in entries:
        name = entry.name
        try:
            is_link = entry.is_symlink()
            if is_link:
                touch(entry.path)  # where it points is not in the folder's stat
            is_dir = entry.is_dir(follow_symlinks=True)
        except OSError as exc:
            touch(entry.path)
            if exc.errno == errno.ELOOP:
                looped.append(name)
                continue
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
        looped_links=tuple(looped),
    )


def list_real_subdirs_locale(directory: str) -> list[str]:
    """``listCandidateSkillDirs``: real (non-link) child dirs, full paths, localeCompare order."""
    touch(directory)
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


class PathChanged(OSError):
    """The file opened is not the one that was checked: a path component was swapped."""

    def __init__(self, path: str, detail: str) -> None:
        super().__init__(errno.ESTALE, detail, path)


def fd_path(fd: int) -> str | None:
    """The kernel's path of an open descriptor (Linux ``/proc/self/fd``), or None."""
    if not _HAS_PROC_FD:
        return None
    try:
        return os.readlink(f"{_PROC_FD}/{fd}")
    except OSError:
        return None


def _parts_below(anchor: str, real: str) -> list[str]:
    if not is_path_inside(anchor, real) or real == anchor:
        raise PathChanged(real, f"{real} is not inside {anchor}")
    rest = real[len(anchor) :].lstrip(os.sep)
    parts = rest.split(os.sep)
    if any(p in ("", ".", "..") for p in parts):
        raise PathChanged(real, f"{real} is not a plain path below {anchor}")
    return parts


def open_contained(
    real: str,
    anchor: str,
    *,
    flags: int = _OPEN_FLAGS,
    anchor_identity: tuple[int, int] | None = None,
) -> int:
    """Open the file at the real path ``real`` below the real folder ``anchor``.

    ``anchor`` itself is opened with ``O_NOFOLLOW`` (and, given ``anchor_identity``,
    must still be that ``(st_dev, st_ino)``); every component below it is opened with
    ``O_NOFOLLOW`` relative to its parent's descriptor, so a folder swapped for a
    symlink fails the open (``ELOOP``) instead of being followed. Where the kernel
    names open files (Linux), the opened file's path must also equal ``real``, which
    covers the folders above ``anchor``; without ``anchor_identity`` that check alone
    is made (it covers every component). Raises :class:`OSError` (:class:`PathChanged`
    when the file is not the one checked); the caller owns the returned descriptor.
    """
    if _HAS_PROC_FD and anchor_identity is None:
        # Fast path (discovery's hot loop): the kernel's path of the opened file covers
        # every component at once, so the component walk below adds nothing.
        if not real.startswith(anchor.rstrip(os.sep) + os.sep):
            raise PathChanged(real, f"{real} is not inside {anchor}")
        opened = os.open(real, flags)
        if fd_path(opened) != real:
            os.close(opened)
            raise PathChanged(real, f"{real} was not the file opened")
        return opened
    parts = _parts_below(anchor, real)
    if _HAS_DIR_FD:
        fd = os.open(anchor, _DIR_FLAGS)
        try:
            if anchor_identity is not None:
                info = os.fstat(fd)
                if (info.st_dev, info.st_ino) != anchor_identity:
                    raise PathChanged(anchor, f"{anchor} was replaced")
            for part in parts[:-1]:
                inner = os.open(part, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = inner
            opened = os.open(parts[-1], flags, dir_fd=fd)
        finally:
            os.close(fd)
    else:  # pragma: no cover - platforms without openat: the kernel-path check only
        opened = os.open(real, flags)
    kernel = fd_path(opened)
    if kernel is not None and kernel != real:
        os.close(opened)
        raise PathChanged(real, f"opened {kernel} instead of {real}")
    return opened


@dataclass(frozen=True, slots=True)
class ReadFailure:
    kind: str
    detail: str = ""
    size: int | None = None
    real: str | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class Verified:
    """A file that passed every check before opening; ``identity`` keys the parse cache."""

    path: str
    real: str
    size: int
    identity: tuple[int, int, int, int, int]
    #: The real folder the file was checked to lie in; the open starts there.
    root_real: str = ""


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
        touch(path)
        return ReadFailure(MISSING)
    except (OSError, ValueError) as exc:
        touch(path)
        return ReadFailure(IO_ERROR, str(exc))
    # The result cache's footprint: the file's signature covers the bytes read (they
    # cannot change without its ctime changing).
    stated(path, link_stat)
    if st.S_ISLNK(link_stat.st_mode):
        if is_symlink_loop(path):
            return ReadFailure(LOOP)
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
        touch(real)
        return ReadFailure(IO_ERROR, str(exc))
    if real != path:
        stated(real, pre)
    if not st.S_ISREG(pre.st_mode):
        return ReadFailure(NOT_REGULAR, real=real)
    if pre.st_size > max_bytes:
        return ReadFailure(TOO_LARGE, size=pre.st_size, real=real)
    # A name joined to the checked folder itself is inside it (the test is lexical).
    if root_real != dir_real and not is_path_inside(root_real, real):
        return ReadFailure(ESCAPE, real=real)
    return Verified(
        path=path, real=real, size=pre.st_size, identity=_identity(pre), root_real=root_real
    )


def read_at_most(fd: int, limit: int, size: int = -1) -> bytes:
    """Read from ``fd`` until end of file or ``limit`` bytes, whichever comes first.

    Every bounded read goes through here: the size ``stat`` gave is never trusted as
    the end, because a file can grow between the check and the read. One read holds a
    skill file whole, and an empty second one finds the end, unless the first returned
    exactly ``size`` bytes (``fd``'s ``fstat`` just before; a file grown since gives more).
    """
    if limit <= 0:
        return b""
    first = os.read(fd, min(limit, 1 << 20))
    remaining = limit - len(first)
    if not first or remaining <= 0 or len(first) == size:
        return first
    chunks = [first]
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
    checked: Verified,
    *,
    max_bytes: int,
    open_below: Callable[[str, int], int | None] | None = None,
) -> tuple[bytes, tuple[int, int, int, int, int]] | ReadFailure:
    """Open the checked file with ``O_NOFOLLOW``, confirm it is the same file, read it.

    Returns the bytes and the identity from ``fstat`` taken *before* reading: a later
    change to the file changes its ctime, so caching under it is safe. ``open_below``
    (a held root's :meth:`~skillbook._pinned_root.PinnedRoot.open_file`) opens the
    file with the same guarantee as :func:`open_contained`, or declines with None.
    """
    try:
        fd = open_below(checked.real, _OPEN_FLAGS) if open_below is not None else None
        if fd is None and checked.root_real and checked.root_real != checked.real:
            # Every component below the checked folder without following a link, and
            # (Linux) the opened file's own path: a swapped folder cannot redirect it.
            fd = open_contained(checked.real, checked.root_real)
        elif fd is None:
            fd = os.open(checked.real, _OPEN_FLAGS)
    except PathChanged:
        return ReadFailure(CHANGED, real=checked.real)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            if is_symlink(checked.real):
                return ReadFailure(SYMLINK, real=checked.real)
            return ReadFailure(CHANGED, real=checked.real)
        if exc.errno == errno.ENOENT:
            return ReadFailure(MISSING)
        return ReadFailure(IO_ERROR, exc.strerror or str(exc))
    try:
        opened = os.fstat(fd)
        if not st.S_ISREG(opened.st_mode):
            return ReadFailure(NOT_REGULAR, real=checked.real)
        if opened.st_size > max_bytes:
            return ReadFailure(TOO_LARGE, size=opened.st_size, real=checked.real)
        if (opened.st_dev, opened.st_ino) != checked.identity[:2]:
            return ReadFailure(CHANGED, real=checked.real)
        data = read_at_most(fd, max_bytes, opened.st_size)
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
    LOOP: (
        "discover.symlink-loop",
        "error",
        "is a symbolic link that loops back to itself; it resolves to no file: remove it",
    ),
}


def describe_failure(failure: ReadFailure, path: str) -> tuple[str, str, str]:
    """(diagnostic code, severity, message) for a refused read of ``path``."""
    if failure.kind == SYMLINK and failure.real is None and is_symlink_loop(path):
        failure = ReadFailure(LOOP)
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
