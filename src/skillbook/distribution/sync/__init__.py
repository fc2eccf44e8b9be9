"""Copy skills where an agent can read them: a sandbox's workspace, or your own.

- :func:`sync` / :func:`sync_book`: replace ``<target>/skills`` with copies of a
  workspace's skills, as OpenClaw's sandbox sync does (spec §9), atomically, with an
  optional catalog in the sandbox's paths and the env vars to pass through;
- :func:`load_skills`: copy bundled or managed skills into a workspace to edit them
  (OpenPocket's ``skills load``), never overwriting an edited copy unless forced.

Part of :mod:`skillbook.distribution`: it uses the pipeline (discovery, gating, prompt).
"""

from skillbook.distribution.sync.errors import SyncBusy, SyncError, TargetNotSynced
from skillbook.distribution.sync.listing import TreeEntry, list_tree
from skillbook.distribution.sync.result import SyncedSkill, SyncProgress, SyncResult
from skillbook.distribution.sync.sandbox import CATALOG_FILE, EnvVar, env_file_text
from skillbook.distribution.sync.workspace import sync, sync_book, sync_entries

__all__ = [
    "CATALOG_FILE",
    "EnvVar",
    "SyncBusy",
    "SyncError",
    "SyncProgress",
    "SyncResult",
    "SyncedSkill",
    "TargetNotSynced",
    "TreeEntry",
    "env_file_text",
    "list_tree",
    "sync",
    "sync_book",
    "sync_entries",
]
