"""What a build read from the outside world, so a later process can tell whether the
same build would give the same result.

Input: reports from the code that reads the world, while a :class:`Footprint` is
active (:func:`recording`, held in a ``ContextVar``; inactive, each report costs one
``ContextVar.get``). Output: a record of builtins (:meth:`Footprint.record`, for
``marshal``), or None when the build depended on something this module cannot check
cheaply (the footprint is *open*); :func:`still_valid` answers whether a record still
holds, importing nothing beyond ``os`` and ``sys``.

What is recorded, and who reports it:

- env: every key read from the env mapping the CLI hands to
  :meth:`skillbook.config.run_settings.Settings.resolve` (a :class:`RecordedEnv`; the settings,
  the :class:`~skillbook.pipeline.book.Loader`, :class:`~skillbook.pipeline.gating.gate.Host`, the parse-cache
  and plugin folders all read that mapping), with its value or its absence; iterating
  over it makes the whole env part of the record.
- paths probed (:func:`probe`: ``stat`` and ``lstat`` signature, or absent): the
  paths :class:`~skillbook.config.paths.Paths` names as probed to find the config file
  and the bundled folder, and the config file read (both recorded by the book,
  :func:`skillbook.pipeline.book.record_paths`), the workspace folder,
  every plugin folder searched (:mod:`skillbook.pipeline.discovery.plugin_discovery`; one that holds
  anything makes the footprint open), every skill root that is absent or not a folder.
- real paths (:func:`real`): the homes shortened in the catalog, the kept state paths
  of the 2026.9 profile, the state-dir comparison of ``isDefaultStateDir``, each root.
- skill roots (:func:`root`): a root scanned *plain* (:mod:`skillbook.pipeline.cache.root_memo`):
  its folder state, real path and every SKILL.md's ``lstat`` identity.
- any other root (links, nested ``skills/`` roots, groups, hidden or broken entries,
  skills that fail to load, limits, the 2026.9 recursive scan) is scanned inside
  :class:`skillbook.pipeline.cache.scan_reads.scanning`: the discovery stage records
  each path it lists, ``stat``-s, ``lstat``-s or reads (the file-system helpers of
  :mod:`skillbook.base` report nothing; the stage records from what they return; recorded as its
  signature, taken when the record is made or from the scan's own ``lstat``: a
  folder's listing is unchanged while its device, inode, mtime and ctime are) and
  each real path they resolve (the answer itself). A path gone or a dangling link also records its nearest existing
  folder, whose mtime its removal or creation changed.
- plugin skills, configured sources (``skills.mcp``), sources handed to the
  ``Loader``, a remote node, plugin load paths, a missing ``HOME`` (the book sees it
  in :attr:`Paths.origins <skillbook.config.paths.Paths.origins>`), Windows: the
  footprint is open.
- binaries looked up for gating (:class:`skillbook.pipeline.gating.gate.BinaryLookup`): the answer;
  :func:`still_valid` repeats the lookup on ``PATH``.
- code and host: the Python version, platform and executable, and the (path, size,
  mtime) of every module file loaded when the record is made.

Anything changed within :data:`RACY_NS` before the build started may change again
unseen within one timestamp tick, so such a footprint is open too.
"""

from __future__ import annotations

import os
import sys
import time
from _collections_abc import Mapping  # collections.abc without importing `collections`
from contextvars import ContextVar

from skillbook.base.env import EnvSnapshot

# Not `typing`: the fast path of `skillbook prompt` imports this module (mypy reads it).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from skillbook.pipeline.cache.scan_reads import Scan

__all__ = [
    "RACY_NS",
    "Footprint",
    "RecordedEnv",
    "absent",
    "binary",
    "current",
    "make_open",
    "probe",
    "real",
    "recorded",
    "recording",
    "root",
    "still_valid",
]

#: Something changed this recently before a build may change again unseen (ns).
#: The one home of this rule: the parse cache (an entry) and the root memo (a folder)
#: trust a stat only when it is older than this too (git's "racily clean" rule).
RACY_NS = 2_000_000_000
#: (lstat mode, lstat inode, dev, ino, mode, size, mtime_ns, ctime_ns, links), or None.
Signature = tuple[int, ...] | None

_CURRENT: ContextVar[Footprint | None] = ContextVar("skillbook_footprint", default=None)


def signature(path: str) -> Signature:
    """What ``stat`` and ``lstat`` say of ``path``; None when it cannot be reached."""
    try:
        ls = os.lstat(path)
    except (OSError, ValueError):
        return None
    if (ls.st_mode & 0o170000) != 0o120000:
        return _signed(ls, ls)
    try:
        return _signed(ls, os.stat(path))
    except (OSError, ValueError):
        return (ls.st_mode, ls.st_ino)


def _lstat_signature(s: os.stat_result) -> Signature:
    """:func:`signature` of a path that is not a link, from its ``lstat``."""
    return _signed(s, s)


def _signed(ls: os.stat_result, s: os.stat_result) -> tuple[int, ...]:
    return (
        ls.st_mode,
        ls.st_ino,
        s.st_dev,
        s.st_ino,
        s.st_mode,
        s.st_size,
        s.st_mtime_ns,
        s.st_ctime_ns,
        s.st_nlink,
    )


def real_path(path: str, strict: bool) -> str | None:
    try:
        return os.path.realpath(path, strict=strict)
    except (OSError, ValueError, RuntimeError):
        return None


class Footprint:
    """The outside reads of one build (see the module docstring)."""

    def __init__(self) -> None:
        self.started = time.time_ns()
        self.env: dict[str, str | None] = {}
        self.whole_env: dict[str, str] | None = None
        self.paths: dict[str, Signature] = {}
        self.reals: dict[tuple[str, bool], str | None] = {}
        #: (folder, folder state, SKILL.md paths, their identities)
        self.roots: list[tuple[str, Any, tuple[str, ...], tuple[Any, ...]]] = []
        self.bins: dict[str, bool] = {}
        #: Paths a scan touched (skillbook.pipeline.cache.scan_reads): signed when the record is
        #: made, from the ``lstat`` the scan made of it where it gave one.
        self.touched: set[str] = set()
        self.stats: dict[str, os.stat_result] = {}
        #: Skill roots accounted for (recorded plain or scanned, or absent).
        self.covered = 0
        #: Why the result may not be reused (empty: closed).
        self.reasons: list[str] = []
        #: The command's output, set by the command that was recorded.
        self.result: str | None = None

    def make_open(self, reason: str) -> None:
        self.reasons.append(reason)

    def scanned(self, scan: Scan) -> None:
        """A root scanned inside :class:`scanning` and not recorded otherwise."""
        self.touched.update(scan.paths)
        for path, info in scan.stats.items():
            self.stats.setdefault(path, info)
        for path, answer in scan.reals.items():
            self.reals[path, True] = answer
        self.covered += 1

    def _sign_touched(self) -> None:
        # Signed now, after the build: a path changed since it was read has a ctime
        # after the build started (racy, so no record), except one removed or turned
        # into a dangling link, which changes the folder holding it instead. A file the
        # scan gave an lstat of before reading it is signed from that: any change since
        # shows as a different signature when the record is checked.
        paths, stats = self.paths, self.stats
        for path in self.touched:
            while path not in paths:
                info = stats.get(path)
                if info is not None and (info.st_mode & 0o170000) != 0o120000:
                    paths[path] = _lstat_signature(info)
                    break
                sig = paths[path] = signature(path)
                if sig is not None and len(sig) > 2:
                    break
                parent = os.path.dirname(path)
                if parent == path:
                    break
                path = parent

    def _racy(self, *stamps: int) -> bool:
        return any(stamp >= self.started - RACY_NS for stamp in stamps)

    def record(self) -> dict[str, Any] | None:
        """The record of this build, or None when it is open or racy."""
        if self.reasons or os.name == "nt":
            return None
        self._sign_touched()
        for sig in self.paths.values():
            if sig is not None and len(sig) > 2 and self._racy(sig[6], sig[7]):
                return None
        for _folder, state, _files, identities in self.roots:
            if state is None or self._racy(state[2], state[3]):
                return None
            if any(self._racy(i[4], i[5]) for i in identities):
                return None
        modules = []
        for module in list(sys.modules.values()):
            file = getattr(module, "__file__", None)
            if isinstance(file, str):
                try:
                    s = os.stat(file)
                except OSError:
                    continue
                if self._racy(s.st_mtime_ns):
                    return None  # a source file being edited right now
                modules.append((file, s.st_size, s.st_mtime_ns))
        return {
            "host": host(),
            "env": dict(self.env),
            "whole_env": self.whole_env,
            "paths": dict(self.paths),
            "reals": [(p, strict, answer) for (p, strict), answer in self.reals.items()],
            "roots": list(self.roots),
            "bins": dict(self.bins),
            "modules": modules,
        }


def host() -> tuple[str, str, str]:
    # The interpreter by its real file: a console script starts `.venv/bin/python3`,
    # `python -m skillbook` `.venv/bin/python`, links to one interpreter (a record made
    # by one is as good for the other; the module files recorded tell venvs apart).
    return (sys.version, sys.platform, os.path.realpath(sys.executable))


class recording:  # a function to its callers: `with recording() as fp:`
    """Record the outside reads of the code run inside the ``with`` block."""

    def __init__(self) -> None:
        self.footprint = Footprint()

    def __enter__(self) -> Footprint:
        self._token = _CURRENT.set(self.footprint)
        return self.footprint

    def __exit__(self, *_exc: object) -> None:
        _CURRENT.reset(self._token)


def current() -> Footprint | None:
    return _CURRENT.get()


def make_open(reason: str) -> None:
    """The build depends on something no record can check: its result is not kept."""
    fp = _CURRENT.get()
    if fp is not None:
        fp.make_open(reason)


def probe(path: str | os.PathLike[str]) -> None:
    """The build asked whether ``path`` exists, what it is, or read it."""
    fp = _CURRENT.get()
    if fp is not None:
        key = os.fspath(path)
        if key not in fp.paths:
            fp.paths[key] = signature(key)


def real(path: str | os.PathLike[str], *, strict: bool) -> str | None:
    """``os.path.realpath`` (None where ``strict`` fails), recorded."""
    key = os.fspath(path)
    answer = real_path(key, strict)
    fp = _CURRENT.get()
    if fp is not None:
        fp.reals[key, strict] = answer
    return answer


def binary(name: str, found: bool) -> None:
    """A gate looked ``name`` up on ``PATH``."""
    fp = _CURRENT.get()
    if fp is not None:
        fp.bins[name] = found


def root(folder: str, state: Any, files: tuple[str, ...], identities: tuple[Any, ...]) -> None:
    """A plain root was scanned (or reused): its folder state and SKILL.md identities."""
    fp = _CURRENT.get()
    if fp is not None:
        fp.reals[folder, False] = real_path(folder, False)
        fp.roots.append((folder, state, files, identities))
        fp.covered += 1


def absent(folder: str) -> None:
    """A skill root is absent (or not a folder)."""
    fp = _CURRENT.get()
    if fp is not None:
        fp.paths[folder] = signature(folder)
        fp.covered += 1


class RecordedEnv(EnvSnapshot):
    """A snapshot of an environment that reports each key read to a footprint (kept,
    not copied, by :func:`skillbook.base.env.own_env`, so every reader reports)."""

    def __init__(self, env: Mapping[str, str], footprint: Footprint) -> None:
        self._env = dict(env)
        self._footprint = footprint

    def __getitem__(self, key: str) -> str:
        value = self._env.get(key)
        if key not in self._footprint.env:
            self._footprint.env[key] = value
        if value is None:
            raise KeyError(key)
        return value

    def __iter__(self) -> Iterator[str]:
        self._footprint.whole_env = dict(self._env)
        return iter(self._env)

    def __len__(self) -> int:
        self._footprint.whole_env = dict(self._env)
        return len(self._env)


def recorded(env: Mapping[str, str]) -> Mapping[str, str]:
    """``env`` as a :class:`RecordedEnv` while a footprint is recorded, else as is."""
    fp = _CURRENT.get()
    return env if fp is None else RecordedEnv(env, fp)


# --------------------------------------------------------------------------- checking


def still_valid(record: Mapping[str, Any], env: Mapping[str, str]) -> bool:
    """Whether every outside read of the recorded build would give the same answer now."""
    try:
        return _still_valid(record, env)
    except (OSError, ValueError, TypeError, KeyError, IndexError):
        return False


def _still_valid(record: Mapping[str, Any], env: Mapping[str, str]) -> bool:
    if tuple(record["host"]) != host():
        return False
    whole = record["whole_env"]
    if whole is not None and whole != dict(env):
        return False
    if any(env.get(key) != value for key, value in record["env"].items()):
        return False
    stat = os.stat
    for file, size, mtime in record["modules"]:
        s = stat(file)
        if s.st_size != size or s.st_mtime_ns != mtime:
            return False
    if any(signature(path) != sig for path, sig in record["paths"].items()):
        return False
    if any(real_path(path, strict) != answer for path, strict, answer in record["reals"]):
        return False
    parts = [p for p in (env.get("PATH") or "").split(":") if p]
    for name, found in record["bins"].items():
        if any(os.access(os.path.join(p, name), os.X_OK) for p in parts) != found:
            return False
    return all(_root_unchanged(*entry) for entry in record["roots"])


def _root_unchanged(
    folder: str, state: Any, files: tuple[str, ...], identities: tuple[Any, ...]
) -> bool:
    s = os.stat(folder)
    if (s.st_dev, s.st_ino, s.st_mtime_ns, s.st_ctime_ns) != tuple(state):
        return False
    return changed_files(files, identities) == []


def changed_files(files: tuple[str, ...], identities: tuple[Any, ...]) -> list[int]:
    """The positions of ``files`` whose ``lstat`` is not the identity recorded
    (mode, device, inode, size, mtime_ns, ctime_ns, links); raises ``OSError`` for a
    file gone. Shared with :class:`skillbook.pipeline.cache.root_memo.RootRecord`."""
    lstat = os.lstat
    out: list[int] = []
    for index, (path, known) in enumerate(zip(files, identities, strict=True)):
        i = lstat(path)
        if (
            i.st_ino != known[2]
            or i.st_mtime_ns != known[4]
            or i.st_ctime_ns != known[5]
            or i.st_size != known[3]
            or i.st_mode != known[0]
            or i.st_dev != known[1]
            or i.st_nlink != known[6]
        ):
            out.append(index)
    return out
