"""Copy skills where an agent can read them: a sandbox's workspace, or your own.

- :func:`~skillbook.distribution.sync.workspace.sync` / :func:`~skillbook.distribution.sync.workspace.sync_book`: replace ``<target>/skills`` with copies of a
  workspace's skills, as OpenClaw's sandbox sync does (spec §9), atomically, with an
  optional catalog in the sandbox's paths and the env vars to pass through;
- :func:`~skillbook.distribution.sync.load.load_skills`: copy bundled or managed skills into a workspace to edit them
  (OpenPocket's ``skills load``), never overwriting an edited copy unless forced.

Part of :mod:`skillbook.distribution`: it uses the pipeline (discovery, gating, prompt).
This ``__init__`` holds why a sync or load could not run at all (bad skills never
raise; they become diagnostics)::

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
