"""Sync a workspace's skills into another workspace, such as a sandbox's (spec §9).

Input: a loaded :class:`~skillbook.pipeline.book.SkillBook` (source workspace, config, agent,
filter) and a target workspace folder. Output: ``<target>/skills`` replaced in one
step by copies of the skills OpenClaw's ``loadWorkspaceSkillEntries`` returns (every
merged winner; gated and filtered only when a skill filter is in effect), and a
:class:`SyncResult` saying where each skill went, what failed and why.

As OpenClaw: each skill goes to a folder named after its *source folder*, never its
frontmatter name, made unique with ``-2``, ``-3``…; ``.git`` and ``node_modules`` are
left out at any depth; links are copied as links; a skill that cannot be placed or
copied is reported with OpenClaw's text (``Failed to resolve safe destination for
<name>: …``, ``Failed to copy <name> to sandbox: …``) and the others go on; the same
source and target is a no-op; syncs into one target take turns.

Beyond OpenClaw: the new tree is built beside the old one and swapped in atomically
(:mod:`skillbook.distribution.swap`), so a reader or a crash never sees a half-copied skill;
a skill is copied completely or not at all; ``<target>/skills`` is only replaced when
an earlier sync made it (or ``force``); an optional catalog with the sandbox's paths
and the list of declared environment variables (:mod:`skillbook.distribution.sync.sandbox`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from skillbook import diagnostics as dg
from skillbook.base import locks
from skillbook.config.file import Config
from skillbook.config.paths import resolve_user_path
from skillbook.distribution.sync import SyncBusy, SyncError
from skillbook.distribution.sync.result import SyncProgress, SyncResult
from skillbook.distribution.sync.run import SKILLS_DIR, SyncRun
from skillbook.distribution.sync.sandbox import check_mount, env_passthrough
from skillbook.model import Skill
from skillbook.pipeline.book import Loader, SkillBook

#: Threads copying skills and deleting the old tree: they mostly wait on the disk.
DEFAULT_WORKERS = 8


def sync_entries(book: SkillBook) -> tuple[Skill, ...]:
    """The skills a sync copies (spec §4.4): all merged winners, or gated and filtered
    when a skill filter (explicit or the agent's allowlist) is in effect."""
    if book.skill_filter is not None:
        return book.eligible
    excluded = {s.file_path for s in book.excluded}
    return tuple(s for s in book.skills if s.file_path not in excluded)


def sync(
    workspace: str | os.PathLike[str],
    target: str | os.PathLike[str],
    *,
    config: Config | str | os.PathLike[str] | None = None,
    agent: str | None = None,
    skill_filter: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    **options: Any,
) -> SyncResult:
    """Load ``workspace`` and sync its skills into ``target``; see :func:`sync_book`."""
    book = Loader(workspace, config=config, agent=agent, skill_filter=skill_filter, env=env).load()
    return sync_book(book, target, env=env, **options)


def sync_book(
    book: SkillBook,
    target: str | os.PathLike[str],
    *,
    mount: str | None = None,
    links: str = "openclaw",
    force: bool = False,
    wait: bool = True,
    env: Mapping[str, str] | None = None,
    progress: Callable[[SyncProgress], None] | None = None,
    workers: int = DEFAULT_WORKERS,
) -> SyncResult:
    """Replace ``<target>/skills`` with copies of the book's sync entries.

    ``mount``: where the sandbox sees ``<target>/skills``; a catalog with those paths
    is rendered and written as ``<target>/skills/.catalog.md``. ``links``:
    ``"openclaw"`` (Node's ``fs.cp``) or ``"sandbox"`` (see
    :mod:`skillbook.distribution.sync.copytree`). ``force``: replace a ``<target>/skills`` that no
    sync made. ``wait``: wait for another sync into the same target (else raise
    :class:`SyncBusy`). ``env``: the environment whose variables count as set for the
    pass-through list (default: the process's). ``workers``: threads that copy and
    delete trees (1: all in the calling thread).

    Raises :class:`SyncError` (or a subclass) when the sync cannot run at all.
    """
    if book.workspace is None:
        raise SyncError("sync needs a source workspace; load the book with one")
    if mount is not None:
        mount = check_mount(mount)
    source = book.workspace
    dest = resolve_user_path(os.fspath(target), book.paths.home)
    skills_dir = dest / SKILLS_DIR
    if dest == source or _same_folder(dest, source):
        note = dg.info(
            "sync.same-workspace",
            f"the target {dest} is the source workspace itself; nothing was synced",
            path=dest,
        )
        return SyncResult(source, dest, skills_dir, diagnostics=(note,), skipped="same workspace")
    try:
        dest.mkdir(parents=True, exist_ok=True)
        with locks.folder_lock(dest, wait=wait):
            run = SyncRun(book, dest, links=links, progress=progress, workers=workers)
            run.start(force=force)
            run.copy_all(sync_entries(book))
            catalog = run.write_catalog(mount) if mount is not None else None
            how = run.finish()
    except locks.FolderBusy as exc:
        raise SyncBusy(f"another sync into {dest} is running; try again later") from exc
    except OSError as exc:
        raise SyncError(f"cannot sync into {dest}: {exc.strerror or exc} ({exc.filename})") from exc
    variables = env_passthrough(
        [s.skill for s in run.synced if s.skill is not None],
        book.config,
        os.environ if env is None else env,
    )
    diagnostics = list(run.diagnostics)
    diagnostics += [
        dg.warning(
            "sync.env-blocked",
            f"{v.name} (declared by {', '.join(v.skills)}) changes how programs start; "
            "it is not listed for pass-through into the sandbox",
        )
        for v in variables
        if not v.passable
    ]
    if catalog is not None:
        diagnostics += catalog.diagnostics
    return SyncResult(
        source=source,
        target=dest,
        skills_dir=skills_dir,
        synced=tuple(run.synced),
        failed=tuple(run.failed),
        diagnostics=tuple(diagnostics),
        swap=how,
        mount=mount,
        catalog=catalog,
        env=variables,
    )


def _same_folder(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
