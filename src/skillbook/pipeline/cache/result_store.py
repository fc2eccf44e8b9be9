"""Whole command results kept on disk, each with the footprint of the build behind it.

Input: an invocation key (the command line and working folder), the output text and a
:mod:`skillbook.pipeline.cache.footprint` record. Output: one file per key in :func:`results_folder`,
read back by :func:`load` only when its checksum matches, so a torn or corrupt file
is a miss (and is rewritten by the next normal run), never a decoded guess.

The folder comes from the environment alone, because the fast path reads it before
anything else is known: ``$SKILLBOOK_CACHE_DIR/results``, else
``$SKILLBOOK_STATE_DIR/cache/results``, else ``$XDG_CACHE_HOME/skillbook/results``,
else ``$HOME/.cache/skillbook/results`` (the first set; relative: no result cache).
Never a default state dir such as ``~/.skillbook``: creating one would change which
state dir later runs choose. ``SKILLBOOK_CACHE=0`` (or ``off``,
``false``, ``no``) turns it off, as it does the parse cache. At most
:data:`MAX_RESULTS` files are kept (the newest by modification time), and temporaries
left by a writer that died are removed after ten minutes.

Imports only ``os``, ``marshal``, ``time`` and ``zlib``: :mod:`skillbook.cli.entry` uses it
before click or any stage is loaded.
"""

from __future__ import annotations

import marshal
import os
import time
import zlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

__all__ = ["MAX_RESULTS", "invocation_key", "load", "results_folder", "save"]

#: Result files kept per folder; older ones are removed when a new one is written.
MAX_RESULTS = 32
_MAGIC = b"SBRESULT1\n"
_OFF = frozenset({"0", "off", "false", "no"})
_SUFFIX = ".result"
_TEMP_SUFFIX = ".tmp"
#: A temporary older than this was left by a writer that died.
_TEMP_AGE_NS = 600 * 1_000_000_000


def results_folder(env: Mapping[str, str]) -> str | None:
    """Where results live (the module docstring has the rules); None when off."""
    if (env.get("SKILLBOOK_CACHE") or "").strip().lower() in _OFF:
        return None
    for name, parts in (
        ("SKILLBOOK_CACHE_DIR", ("results",)),
        ("SKILLBOOK_STATE_DIR", ("cache", "results")),
        ("XDG_CACHE_HOME", ("skillbook", "results")),
        ("HOME", (".cache", "skillbook", "results")),
    ):
        value = (env.get(name) or "").strip()
        if value:
            return os.path.join(value, *parts) if os.path.isabs(value) else None
    return None


def invocation_key(argv: Sequence[str], cwd: str) -> str:
    """What a result answers: the arguments as given and the working folder."""
    return "\0".join(["skillbook-prompt", cwd, *argv])


def _file(folder: str, key: str) -> str:
    digest = zlib.crc32(key.encode("utf-8", "surrogateescape"))
    return os.path.join(folder, f"{digest:08x}{_SUFFIX}")


def load(folder: str, key: str) -> tuple[str, dict[str, Any]] | None:
    """The stored (output, footprint record) for ``key``, or None (absent, corrupt, other key)."""
    try:
        with open(_file(folder, key), "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    head = len(_MAGIC) + 8
    if len(raw) < head or not raw.startswith(_MAGIC):
        return None
    length = int.from_bytes(raw[len(_MAGIC) : len(_MAGIC) + 4], "big")
    checksum = int.from_bytes(raw[len(_MAGIC) + 4 : head], "big")
    payload = raw[head:]
    if len(payload) != length or zlib.crc32(payload) != checksum:
        return None
    try:
        stored_key, text, record = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return None
    if stored_key != key or not isinstance(text, str) or not isinstance(record, dict):
        return None
    return text, record


def save(folder: str, key: str, text: str, record: Mapping[str, Any]) -> None:
    """Keep ``text`` for ``key`` (atomically; errors are ignored: it is only a cache)."""
    from skillbook.base.atomic import write_atomic

    try:
        payload = marshal.dumps((key, text, dict(record)))
    except ValueError:  # a value marshal cannot write: nothing is kept
        return
    header = len(payload).to_bytes(4, "big") + zlib.crc32(payload).to_bytes(4, "big")
    try:
        os.makedirs(folder, exist_ok=True)
        write_atomic(_file(folder, key), _MAGIC + header + payload, mode=0o600)
        _prune(folder)
    except OSError:
        pass


def _prune(folder: str) -> None:
    entries: list[tuple[int, str]] = []
    stale: list[str] = []
    now = time.time_ns()
    with os.scandir(folder) as it:
        for entry in it:
            try:
                mtime = entry.stat().st_mtime_ns
            except OSError:
                continue
            if entry.name.endswith(_SUFFIX):
                entries.append((mtime, entry.path))
            elif (
                entry.name.startswith(".")
                and entry.name.endswith(_TEMP_SUFFIX)
                and mtime < now - _TEMP_AGE_NS  # a live writer's temporary is young
            ):
                stale.append(entry.path)  # left by a writer killed mid-write
    entries.sort(reverse=True)
    for path in [*stale, *(path for _, path in entries[MAX_RESULTS:])]:
        try:
            os.unlink(path)
        except OSError:
            continue
