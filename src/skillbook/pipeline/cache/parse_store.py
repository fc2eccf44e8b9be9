"""The persistent parse cache: parsed SKILL.md files kept on disk between processes.

Input: a cache folder, the namespace of the parser options (skillbook's version and
code, the compat profile, the spec mode), and lookups by path and file identity
``(device, inode, size, mtime_ns, ctime_ns)``. Output: the
:class:`~skillbook.model.ParsedSkillFile` stored for exactly that identity, or None.
A fresh process on an unchanged tree therefore lists folders, stats files and
decodes; it never reads or parses a SKILL.md again.

Layout: one small file per (folder holding skill folders, shard of 8), named by a
hash of the folder and the namespace, so an edit rewrites an eighth of a root's
entries, not all of them. Each file is msgpack: a header (format, namespace,
folder) and ``path -> (identity, stored_at_ns, payload)``; payloads are decoded
only when looked up (:mod:`skillbook.pipeline.cache.parse_codec`).

Safety:

- *atomic*: a file is written under a unique temporary name and renamed over the
  old one, so a reader (or ``kill -9``) sees the old or the new file, never half;
- *several processes*: each writes its own temporary file; before writing it merges
  what another process stored meanwhile, and the last rename wins. Nothing is ever
  locked, and a lost update costs one parse later, never a wrong result;
- *racy files*: an entry is trusted only when the file's ctime is at least
  :data:`RACY_NS` older than the moment it was stored (git's "racily clean" rule),
  because a write within the same timestamp tick could keep the identity unchanged;
- *self-healing*: a file that does not decode (truncated, garbage, another format)
  is ignored, logged, and replaced at the next write;
- *bounded*: entries of files that no longer exist are dropped when their shard is
  written, and the folder is kept under :data:`DEFAULT_MAX_BYTES` by removing the
  least recently written files.

Nothing here raises on a broken cache folder: an unwritable folder turns the store
off for the rest of the process (logged once).
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import time
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from hashlib import blake2b
from pathlib import Path
from typing import Final

import msgspec

from skillbook.model import ParsedSkillFile
from skillbook.pipeline.cache.footprint import RACY_NS
from skillbook.pipeline.cache.parse_codec import decode_parsed, encode_parsed

__all__ = [
    "DEFAULT_MAX_BYTES",
    "FORMAT",
    "SHARDS",
    "ParseStore",
    "cache_folder",
    "code_fingerprint",
    "store_namespace",
]

_log = logging.getLogger("skillbook.cache")

#: The on-disk format; a new one ignores (and in time evicts) every older file.
FORMAT: Final = 1
#: Files per folder of skill folders: an edit rewrites one of them.
SHARDS: Final = 8
#: The cache folder is trimmed to this many bytes (least recently written first).
DEFAULT_MAX_BYTES: Final = 256 * 1024 * 1024
#: Temporary files older than this are leftovers of a killed process.
STALE_TMP_S: Final = 3600
_SUFFIX: Final = ".bin"
_TMP: Final = ".tmp"

Identity = tuple[int, ...]

#: The modules whose code decides what a parsed file holds.
# Paths below the package folder: every module whose code shapes a parsed entry.
_PARSER_MODULES: Final = (
    "pipeline/parse/skill_file.py",
    "pipeline/parse/text.py",
    "pipeline/parse/line_parser.py",
    "pipeline/parse/yaml_core.py",
    "pipeline/parse/yaml_simple.py",
    "pipeline/parse/yaml_flow.py",
    "pipeline/parse/frontmatter.py",
    "pipeline/parse/frontmatter_rules.py",
    "pipeline/parse/invocation_policy.py",
    "pipeline/parse/json_readback.py",
    "pipeline/parse/manifest.py",
    "pipeline/parse/url.py",
    "base/js.py",
    "model.py",
    "diagnostics.py",
    "config/profile.py",
    "pipeline/cache/parse_codec.py",
)


class _Entry(msgspec.Struct, array_like=True):
    identity: tuple[int, ...]
    stored_at: int
    payload: msgspec.Raw


class _ShardFile(msgspec.Struct, array_like=True):
    format: int
    namespace: str
    folder: str
    entries: dict[str, _Entry]


_DECODER = msgspec.msgpack.Decoder(_ShardFile)
_ENCODER = msgspec.msgpack.Encoder()


def store_namespace(profile: object, mode: object) -> str:
    """The namespace of a loader's entries: the parser's code, the compat profile, the mode."""
    return f"{code_fingerprint()}|{profile}|{mode}"


def code_fingerprint() -> str:
    """skillbook's version plus the size and mtime of its parser modules (and of the
    YAML and JSON5 packages), so an edited or upgraded parser never reads old entries."""
    from skillbook.version import __version__

    root = Path(__file__).resolve().parents[2]
    parts = [__version__]
    files = [root / name for name in _PARSER_MODULES]
    import importlib.util

    for package in ("yaml", "json5"):
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.origin:
            files.append(Path(spec.origin))
    for path in files:
        try:
            info = os.stat(path)
        except OSError:
            parts.append(f"{path.name}:-")
            continue
        parts.append(f"{path.name}:{info.st_size}:{info.st_mtime_ns}")
    return blake2b("|".join(parts).encode(), digest_size=12).hexdigest()


@dataclass(slots=True)
class _Shard:
    name: str
    folder: str
    #: What the file held when read (payloads still encoded).
    entries: dict[str, _Entry] = field(default_factory=dict)
    #: (size, mtime_ns, inode) of the file as read; None when there was none.
    seen: tuple[int, int, int] | None = None
    #: Entries stored by this process since the last write.
    fresh: dict[str, _Entry] = field(default_factory=dict)
    #: Paths looked up by this process (kept when the shard is written).
    used: set[str] = field(default_factory=set)
    corrupt: bool = False


class ParseStore:
    """Parsed files on disk, for one namespace of parser options (see the module).

    Owned by a :class:`~skillbook.pipeline.cache.parse_cache.ParseCache`, which asks it on a miss
    of its in-memory entries; :meth:`flush` writes what changed. Not thread-safe on
    its own: the parse cache's owner serialises loads.
    """

    def __init__(
        self,
        folder: str | os.PathLike[str],
        *,
        namespace: str,
        max_bytes: int = DEFAULT_MAX_BYTES,
        clock: Callable[[], int] = time.time_ns,
    ) -> None:
        self.folder = os.fspath(folder)
        self.namespace = f"{FORMAT}|{namespace}"
        self.max_bytes = max_bytes
        self._clock = clock
        self._shards: dict[str, _Shard] = {}
        self._digests: dict[str, str] = {}
        #: Lookups answered from disk / entries refused as racy / shards found corrupt.
        self.hits = 0
        self.racy = 0
        self.corrupt = 0
        self.disabled = False

    # -- lookups -----------------------------------------------------------------------

    def lookup(self, key: str, identity: Identity) -> ParsedSkillFile | None:
        """The parsed file stored under ``key`` (a path, maybe with a profile suffix)
        for exactly ``identity``, else None."""
        if self.disabled:
            return None
        shard = self._shard(key)
        shard.used.add(key)
        entry = shard.fresh.get(key) or shard.entries.get(key)
        if entry is None or tuple(entry.identity) != identity:
            return None
        if not self._trusted(entry):
            self.racy += 1
            return None
        try:
            parsed = decode_parsed(entry.payload)
        except (ValueError, KeyError, TypeError):
            shard.corrupt = True
            shard.entries.pop(key, None)
            return None
        self.hits += 1
        return parsed

    def _trusted(self, entry: _Entry) -> bool:
        # identity[4] is the ctime: changed by every write, and not settable by users.
        return len(entry.identity) == 5 and entry.identity[4] < entry.stored_at - RACY_NS

    def store(self, key: str, identity: Identity, parsed: ParsedSkillFile) -> None:
        """Keep ``parsed`` for ``identity`` (written by the next :meth:`flush`)."""
        if self.disabled:
            return
        payload = encode_parsed(parsed)
        if payload is None:
            return  # a value msgpack cannot carry: parse this file every time
        shard = self._shard(key)
        shard.used.add(key)
        shard.fresh[key] = _Entry(tuple(identity), self._clock(), msgspec.Raw(payload))

    # -- shards ------------------------------------------------------------------------

    def _shard(self, key: str) -> _Shard:
        cut = key.find("\0")
        path = key if cut < 0 else key[:cut]
        # The folder holding the skill folders: two parents up (a plain string cut on
        # the hot path; shards only need a stable grouping, not a normalised path).
        folder = path[: path.rfind(os.sep, 0, max(0, path.rfind(os.sep)))]
        digest = self._digests.get(folder)
        if digest is None:
            digest = blake2b(
                f"{self.namespace}\0{folder}".encode("utf-8", "surrogatepass"), digest_size=12
            ).hexdigest()
            self._digests[folder] = digest
        index = zlib.crc32(path.encode("utf-8", "surrogatepass")) % SHARDS
        name = f"{digest}-{index}{_SUFFIX}"
        shard = self._shards.get(name)
        if shard is None:
            shard = _Shard(name, folder)
            self._read(shard)
            self._shards[name] = shard
        return shard

    def _read(self, shard: _Shard) -> None:
        path = os.path.join(self.folder, shard.name)
        try:
            with open(path, "rb") as fh:
                info = os.fstat(fh.fileno())
                data = fh.read()
        except FileNotFoundError:
            return
        except OSError as exc:
            _log.debug("cannot read parse cache file %s: %s", path, exc)
            return
        shard.seen = (info.st_size, info.st_mtime_ns, info.st_ino)
        try:
            got = _DECODER.decode(data)
        except (msgspec.DecodeError, ValueError) as exc:
            self._corrupt(shard, path, str(exc))
            return
        if got.format != FORMAT or got.namespace != self.namespace or got.folder != shard.folder:
            self._corrupt(shard, path, "header does not match its name")
            return
        shard.entries = got.entries

    def _corrupt(self, shard: _Shard, path: str, why: str) -> None:
        self.corrupt += 1
        shard.corrupt = True
        _log.warning("ignoring a damaged parse cache file %s (%s); it will be rewritten", path, why)

    # -- writing -----------------------------------------------------------------------

    def flush(self) -> int:
        """Write every shard that gained entries or was found damaged; returns how
        many files were written. Never raises: failures turn the store off."""
        if self.disabled:
            return 0
        dirty = [s for s in self._shards.values() if s.fresh or s.corrupt]
        if not dirty:
            return 0
        try:
            os.makedirs(self.folder, mode=0o700, exist_ok=True)
        except OSError as exc:
            self._disable(f"cannot create {self.folder}: {exc}")
            return 0
        written = 0
        for shard in dirty:
            try:
                self._write(shard)
            except OSError as exc:
                self._disable(f"cannot write to {self.folder}: {exc}")
                return written
            written += 1
        self._trim()
        return written

    def _disable(self, why: str) -> None:
        self.disabled = True
        _log.warning("parse cache off for this process: %s", why)

    def _write(self, shard: _Shard) -> None:
        path = os.path.join(self.folder, shard.name)
        entries = self._merged(shard, path)
        blob = _ENCODER.encode(_ShardFile(FORMAT, self.namespace, shard.folder, entries))
        tmp = os.path.join(self.folder, f".{shard.name}.{os.getpid()}.{secrets.token_hex(4)}{_TMP}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(blob)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        info = os.stat(path)
        shard.entries = entries
        shard.fresh = {}
        shard.corrupt = False
        shard.seen = (info.st_size, info.st_mtime_ns, info.st_ino)

    def _merged(self, shard: _Shard, path: str) -> dict[str, _Entry]:
        """What the shard file should hold: entries of files that still exist, what
        another process wrote since we read the file, then ours."""
        base = shard.entries
        try:
            info = os.stat(path)
            now = (info.st_size, info.st_mtime_ns, info.st_ino)
        except OSError:
            now = None
        if now is not None and now != shard.seen:
            other = _Shard(shard.name, shard.folder)
            self._read(other)
            base = {**base, **other.entries}
        kept: dict[str, _Entry] = {}
        for key, entry in base.items():
            if key in shard.used or _exists(key):
                kept[key] = entry
        kept.update(shard.fresh)
        return kept

    def _trim(self) -> None:
        """Keep the folder under ``max_bytes``: remove the least recently written
        files, and temporary files a killed process left behind."""
        try:
            names = os.listdir(self.folder)
        except OSError:
            return
        now = time.time()
        files: list[tuple[float, int, str]] = []
        total = 0
        for name in names:
            full = os.path.join(self.folder, name)
            try:
                info = os.stat(full)
            except OSError:
                continue
            if name.endswith(_TMP):
                if now - info.st_mtime > STALE_TMP_S:
                    _unlink(full)
                continue
            if name.endswith(_SUFFIX):
                files.append((info.st_mtime, info.st_size, full))
                total += info.st_size
        if total <= self.max_bytes:
            return
        for _mtime, size, full in sorted(files):
            if total <= self.max_bytes:
                break
            _unlink(full)
            total -= size
        for shard in self._shards.values():
            if not os.path.exists(os.path.join(self.folder, shard.name)):
                shard.entries, shard.seen = {}, None


def _exists(key: str) -> bool:
    try:
        os.lstat(key.split("\0", 1)[0])
    except (OSError, ValueError):
        return False
    return True


def _unlink(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


#: ``SKILLBOOK_CACHE`` values that turn the cache off / on.
_OFF: Final = frozenset({"0", "false", "off", "no"})
_ON: Final = frozenset({"1", "true", "on", "yes"})
#: Where the cache lives under the state dir, unless ``SKILLBOOK_CACHE_DIR`` says.
CACHE_SUBDIR: Final = ("cache", "skills")


def cache_folder(
    choice: bool | str | os.PathLike[str] | None,
    *,
    env: Mapping[str, str],
    configured: bool | None,
    state_dir: Path,
) -> tuple[Path | None, str]:
    """The folder of the persistent parse cache, or None when it is off, and why.

    ``choice`` (``Loader(cache=…)``, ``--no-cache``) wins: False turns the cache off,
    a path puts it there. Then ``SKILLBOOK_CACHE`` (``0``/``off``/``false``/``no``, or
    ``1``/``on``), then ``skills.cache`` of the config; it is on by default, in
    ``SKILLBOOK_CACHE_DIR`` or ``<state dir>/cache/skills``.
    """
    if choice is False:
        return None, "cache=False"
    folder = Path(env["SKILLBOOK_CACHE_DIR"]) if env.get("SKILLBOOK_CACHE_DIR") else None
    if folder is None:
        folder = state_dir.joinpath(*CACHE_SUBDIR)
    if choice is not None and choice is not True:
        return Path(os.fspath(choice)), "cache=<folder>"
    if choice is True:
        return folder, "cache=True"
    flag = env.get("SKILLBOOK_CACHE", "").strip().lower()
    if flag in _OFF:
        return None, f"SKILLBOOK_CACHE={flag}"
    if flag in _ON:
        return folder, f"SKILLBOOK_CACHE={flag}"
    if configured is False:
        return None, "skills.cache is false"
    return folder, "the default" if configured is None else "skills.cache is true"
