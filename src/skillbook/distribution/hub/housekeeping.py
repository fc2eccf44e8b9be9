"""Crash and abuse hygiene: leftover temporaries, expired uploads, per-token storage quotas.

Input: the database, the blob store, :class:`~skillbook.distribution.hub.server_config.HubSettings` and a
clock (injected: the tests move time instead of sleeping). Output: :meth:`Housekeeper.sweep`
removes what a crash left behind and what nobody will use, and reports counts;
:func:`check_quota` refuses (``413``) an upload or a publish that would take a token past
its storage quota, saying the quota and the usage.

A sweep, run by every server process at start-up and then every
``housekeeping.sweep_seconds``:

1. half-written blobs of the folder store (``.tmp-*`` beside the blobs; a write is temp
   file + rename, so a killed server leaves one) last changed more than
   ``grace_seconds`` ago: a younger one may be another replica's write in progress;
2. the temporary copies the checks unpack a version into (``skillbook-hub-*`` in the
   system's temporary folder, owned by this user), after the same grace;
3. uploads not published within ``upload_ttl_seconds`` (refused at publish from then
   on), once ``grace_seconds`` more have passed: their rows are deleted, and their
   blobs too unless a version or another upload holds the same bytes.

Replicas sweep the same store at once without harm: every step tolerates a file or a
row another sweep removed first. A blob is read before it is deleted and put back if a
publish or an upload claimed the same bytes between the check and the delete.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from sqlalchemy import delete, exists, func, or_, select
from sqlalchemy.orm import Session

from skillbook.distribution.hub import HubError, HubNotFound
from skillbook.distribution.hub.blobs import BlobStore
from skillbook.distribution.hub.checks import CHECK_TEMP_PREFIX
from skillbook.distribution.hub.db import Database
from skillbook.distribution.hub.models import DELETED, Upload, Version, VersionFile
from skillbook.distribution.hub.server_config import HubSettings

__all__ = ["Housekeeper", "SweepReport", "check_quota", "sweep_forever", "token_usage"]

log = logging.getLogger("skillbook.distribution.hub")

#: Expired uploads handled per database round trip.
_BATCH: Final = 500


@dataclass(frozen=True, slots=True)
class SweepReport:
    partial_blobs: int = 0
    temp_folders: int = 0
    expired_uploads: int = 0
    collected_blobs: int = 0


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


def token_usage(session: Session, token_id: int, settings: HubSettings, now_ms: int) -> int:
    """Bytes ``token_id`` holds: the files of the versions it published (not deleted), and
    its uploads that have not expired and are not among those files."""
    published_keys = (
        select(VersionFile.sha256)
        .join(Version, VersionFile.version_id == Version.id)
        .where(Version.token_id == token_id)
    )
    published = session.execute(
        select(func.coalesce(func.sum(VersionFile.size), 0))
        .join(Version, VersionFile.version_id == Version.id)
        .where(Version.token_id == token_id, Version.status != DELETED)
    ).scalar_one()
    oldest = now_ms - settings.upload_ttl_seconds * 1000
    pending = session.execute(
        select(func.coalesce(func.sum(Upload.size), 0)).where(
            Upload.token_id == token_id,
            Upload.created_at >= oldest,
            or_(Upload.storage_id.is_(None), Upload.storage_id.not_in(published_keys)),
        )
    ).scalar_one()
    return int(published) + int(pending)


def check_quota(
    session: Session, token_id: int, adding: int, settings: HubSettings, what: str, now_ms: int
) -> None:
    """Refuse (``413``) ``adding`` more bytes for ``token_id`` past its storage quota.

    413, not 507: the clawhub CLI retries a 5xx, and a retry cannot free space.
    """
    quota = settings.housekeeping.quota_bytes_per_token
    if quota <= 0:
        return
    used = token_usage(session, token_id, settings, now_ms)
    if used + adding > quota:
        hours = settings.upload_ttl_seconds / 3600
        raise HubError(
            413,
            f"Storage quota exceeded: this token holds {_size(used)} of its "
            f"{_size(quota)} quota, and {what} needs {_size(adding)} more "
            f"(uploads not published within {hours:g} h expire and stop counting)",
        )


class Housekeeper:
    """Sweeps one registry's store; ``clock`` gives epoch seconds (``time.time``)."""

    def __init__(
        self,
        db: Database,
        blobs: BlobStore,
        settings: HubSettings,
        *,
        clock: Callable[[], float] = time.time,
        temp_dir: Path | None = None,
    ) -> None:
        self.db = db
        self.blobs = blobs
        self.settings = settings
        self.clock = clock
        self.temp_dir = temp_dir or Path(tempfile.gettempdir())

    def sweep(self) -> SweepReport:
        now = self.clock()
        grace = self.settings.housekeeping.grace_seconds
        partial = self.blobs.remove_partial(now - grace)
        folders = self._remove_check_folders(now - grace)
        expired, collected = self._expire_uploads(now)
        return SweepReport(partial, folders, expired, collected)

    def _remove_check_folders(self, before: float) -> int:
        removed = 0
        uid = os.getuid() if hasattr(os, "getuid") else None
        try:
            entries = list(os.scandir(self.temp_dir))
        except OSError:
            return 0
        for entry in entries:
            if not entry.name.startswith(CHECK_TEMP_PREFIX):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            mine = uid is None or info.st_uid == uid
            if stat.S_ISDIR(info.st_mode) and mine and info.st_mtime < before:
                shutil.rmtree(entry.path, ignore_errors=True)
                removed += 1
        return removed

    def _expire_uploads(self, now: float) -> tuple[int, int]:
        keep = self.settings.upload_ttl_seconds + self.settings.housekeeping.grace_seconds
        cutoff = int((now - keep) * 1000)
        expired = collected = 0
        while True:
            with self.db.session() as session:
                rows = session.execute(
                    select(Upload.ticket, Upload.storage_id)
                    .where(Upload.created_at < cutoff)
                    .limit(_BATCH)
                ).all()
                if not rows:
                    return expired, collected
                session.execute(delete(Upload).where(Upload.ticket.in_([t for t, _ in rows])))
            expired += len(rows)
            for key in sorted({k for _, k in rows if k}):
                collected += self._collect(key)

    def _referenced(self, key: str) -> bool:
        with self.db.session() as session:
            held = session.execute(
                select(
                    exists().where(VersionFile.sha256 == key)
                    | exists().where(Version.archive_sha256 == key)
                    | exists().where(Upload.storage_id == key)
                )
            ).scalar_one()
        return bool(held)

    def _collect(self, key: str) -> int:
        if self._referenced(key):
            return 0
        try:
            data = self.blobs.get(key)
        except HubNotFound:
            return 0  # another replica's sweep was first
        self.blobs.delete(key)
        if self._referenced(key):
            # A publish or an upload of the same bytes landed between the check and the
            # delete: put them back (the key is their hash, so this is the same blob).
            self.blobs.put(data)
            return 0
        return 1


def sweep_logged(keeper: Housekeeper) -> SweepReport | None:
    """One sweep; a failure is logged, never raised (the server keeps serving)."""
    try:
        report = keeper.sweep()
    except Exception:  # a sweep must not take the server down; the next one retries
        log.exception("housekeeping sweep failed")
        return None
    if report != SweepReport():
        log.info("housekeeping: %s", report)
    return report


async def sweep_forever(
    keeper: Housekeeper,
    interval: float,
    *,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> None:
    """Sweep every ``interval`` seconds until cancelled (the first sweep after one interval:
    the start-up sweep ran already). ``sleep`` is injected by tests."""
    from starlette.concurrency import run_in_threadpool

    while True:
        await sleep(interval)
        await run_in_threadpool(sweep_logged, keeper)
