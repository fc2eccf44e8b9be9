"""Why a sync or load could not run at all (bad skills never raise; they become diagnostics).

::

    SkillbookError
     └── SyncError                 the sync or load could not run (the message says why)
          ├── SyncBusy              another process is syncing into the same target (``wait=False``)
          └── TargetNotSynced       ``<target>/skills`` holds files no sync made; ``force`` replaces them

The classes are defined in :mod:`skillbook.errors` (so ``skillbook.SyncError`` needs no
edge package) and re-exported here.
"""

from __future__ import annotations

from skillbook.errors import SyncBusy, SyncError, TargetNotSynced

__all__ = ["SyncBusy", "SyncError", "TargetNotSynced"]
