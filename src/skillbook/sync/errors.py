"""Why a sync or load could not run at all (bad skills never raise; they become diagnostics).

::

    SkillbookError
     └── SyncError                 the sync or load could not run (the message says why)
          ├── SyncBusy              another process is syncing into the same target (``wait=False``)
          └── TargetNotSynced       ``<target>/skills`` holds files no sync made; ``force`` replaces them
"""

from __future__ import annotations

from skillbook.errors import SkillbookError


class SyncError(SkillbookError):
    """A sync or load could not run: a bad target, an unreadable folder, a failed swap."""

    #: The ``code`` of the CLI's ``--json`` error object.
    code = "sync-failed"


class SyncBusy(SyncError):
    """Another process holds the target's lock and the caller chose not to wait."""

    code = "sync-busy"


class TargetNotSynced(SyncError):
    """The folder to replace was not made by a sync, so replacing it could lose files."""

    code = "target-not-synced"
