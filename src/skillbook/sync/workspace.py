"""Sync a workspace's skills into another workspace, such as a sandbox's (spec §9).

Input: a loaded :class:`~skillbook.book.SkillBook` (source workspace, config, agent,
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
(:mod:`skillbook.sync.swap`), so a reader or a crash never sees a half-copied skill;
a skill is copied completely or not at all; ``<target>/skills`` is only replaced when
an earlier sync made it (or ``force``); an optional catalog with the sandbox's paths
and the list of declared environment variables (:mod:`skillbook.sync.sandbox`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillbook import diagnostics as dg
from skillbook.book import Loader, SkillBook
from skillbook.config import Config
from skillbook.diagnostics import Diagnostic
from skillbook.model import Skill
from skillbook.paths import resolve_user_path
from skillbook.prompt import PromptCatalog
from skillbook.sync import marker, swap
from skillbook.sync.copytree import EXCLUDED_NAMES, CopyError, CopyReport, copy_skill
from skillbook.sync.errors import SyncBusy, SyncError, TargetNotSynced
from skillbook.sync.names import DirNamer, Refusal
from skillbook.sync.result import SyncedSkill, SyncProgress, SyncResult
from skillbook.sync.sandbox import CATALOG_FILE, check_mount, env_passthrough, mounted_catalog

SKILLS_DIR = "skills"
#: Threads copying skills and deleting the old tree: they mostly wait on the disk.
DEFAULT_WORKERS = 8
#: Link targets named in a diagnostic before "and N more".
_SHOWN_LINKS = 3


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
    :mod:`skillbook.sync.copytree`). ``force``: replace a ``<target>/skills`` that no
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
        with swap.folder_lock(dest, wait=wait):
            run = _Run(book, dest, links=links, progress=progress, workers=workers)
            run.start(force=force)
            run.copy_all(sync_entries(book))
            catalog = run.write_catalog(mount) if mount is not None else None
            how = run.finish()
    except swap.FolderBusy as exc:
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


@dataclass(slots=True)
class _Plan:
    """One entry's fate, decided before any copy: skipped, refused, or where it goes."""

    skill: Skill
    notes: list[Diagnostic] = field(default_factory=list)
    failed: bool = False
    folder: str = ""
    renamed: str = ""
    real: str = ""
    shown: str = ""
    #: The folder to copy into; ``None`` when nothing is copied.
    target: Path | None = None

    def fail(self, code: str, message: str) -> _Plan:
        self.failed = True
        self.notes.append(dg.error(code, message, path=self.skill.base_dir, skill=self.skill.name))
        return self


class _Run:
    """One sync under the target's lock: clean up, build the new tree, swap it in."""

    def __init__(
        self,
        book: SkillBook,
        dest: Path,
        *,
        links: str,
        progress: Callable[[SyncProgress], None] | None,
        workers: int = 1,
    ) -> None:
        self.book = book
        self.workers = workers
        self.dest = dest
        self.skills_dir = dest / SKILLS_DIR
        self.links = links
        self.progress = progress
        self.synced: list[SyncedSkill] = []
        self.failed: list[str] = []
        self.diagnostics: list[Diagnostic] = []
        self.staging: Path | None = None
        self.real_staging = ""
        self.trees: list[tuple[int, int]] = []
        self.namer = DirNamer(str(self.skills_dir), home=str(book.paths.os_home))

    def start(self, *, force: bool) -> None:
        record = self.dest / marker.MARKER_FILE
        for left in swap.recover(self.skills_dir) + swap.recover(record):
            self.diagnostics.append(_leftover_diagnostic(left, self.skills_dir))
        self.trees = marker.read_trees(record)
        current = marker.identity(self.skills_dir)
        ours = current is None or current in self.trees or marker.is_empty_dir(self.skills_dir)
        if not ours and not force:
            raise TargetNotSynced(
                f"{self.skills_dir} was not made by skillbook sync and would be replaced; "
                "move it away or pass --force (force=True) to replace it"
            )
        self.staging = swap.make_staging(self.skills_dir)
        self.real_staging = os.path.realpath(self.staging)

    def copy_all(self, entries: Sequence[Skill]) -> None:
        """Copy every entry; the copies run on a thread pool (file system calls wait on
        the disk, not the CPU), the results are recorded in entry order."""
        plans = [self.plan(skill) for skill in entries]
        pool = ThreadPoolExecutor(self.workers) if self.workers > 1 else None
        try:
            outcomes = pool.map(self.copy, plans) if pool else map(self.copy, plans)
            for index, (plan, outcome) in enumerate(zip(plans, outcomes, strict=True), 1):
                self.record(plan, outcome)
                if self.progress is not None:
                    self.progress(SyncProgress("skill", index, len(plans), plan.skill.name))
        except BaseException:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
            self.abandon()
            raise
        finally:
            if pool is not None:
                pool.shutdown()

    def plan(self, skill: Skill) -> _Plan:
        """Where ``skill`` goes, decided in entry order (names depend on earlier entries)."""
        assert self.staging is not None
        plan = _Plan(skill)
        where = {"path": skill.base_dir, "skill": skill.name}
        if skill.file_path.name != "SKILL.md" or skill.file_path.parent != skill.base_dir:
            plan.notes.append(
                dg.warning(
                    "sync.standalone-skipped",
                    f"{skill.name} is a standalone Markdown file ({skill.file_path.name}), not "
                    "a skill folder; it is not synced. Move it to <name>/SKILL.md to sync it.",
                    **where,
                )
            )
            return plan
        placed = self.namer.claim(str(skill.base_dir))
        if isinstance(placed, Refusal):
            message = f"Failed to resolve safe destination for {skill.name}: {placed.message}"
            return plan.fail("sync.invalid-destination", message)
        if os.path.basename(skill.base_dir) in EXCLUDED_NAMES:
            # OpenClaw's copy filter drops the skill folder itself, silently.
            plan.notes.append(
                dg.warning(
                    "sync.skill-excluded",
                    f"{skill.name} lives in a folder named {skill.base_dir.name}, which the "
                    "sync leaves out (as OpenClaw does); nothing was copied",
                    **where,
                )
            )
            return plan
        plan.folder, plan.renamed = placed.name, placed.renamed
        plan.real = os.path.realpath(skill.base_dir)
        plan.shown = str(self.skills_dir / placed.name)
        if _inside(plan.real, self.real_staging):
            return plan.fail(
                "sync.copy-failed",
                f"Failed to copy {skill.name} to sandbox: cannot copy {skill.base_dir} into "
                f"a subdirectory of itself ({plan.shown})",
            )
        plan.target = self.staging / placed.name
        return plan

    def copy(self, plan: _Plan) -> CopyReport | CopyError | None:
        """Copy one planned skill (on a worker thread); a failed copy leaves nothing."""
        if plan.target is None:
            return None
        try:
            return copy_skill(
                str(plan.skill.base_dir),
                str(plan.target),
                links=self.links,
                real_src=plan.real,
                shown_dest=plan.shown,
            )
        except CopyError as exc:
            swap.remove_tree(plan.target)
            return exc

    def record(self, plan: _Plan, outcome: CopyReport | CopyError | None) -> None:
        skill = plan.skill
        self.diagnostics.extend(plan.notes)
        if isinstance(outcome, CopyError):
            message = f"Failed to copy {skill.name} to sandbox: {outcome}"
            self.diagnostics.extend(plan.fail("sync.copy-failed", message).notes[-1:])
        if plan.failed:
            self.failed.append(skill.name)
        if not isinstance(outcome, CopyReport):
            return
        self.note_links(skill, plan.folder, outcome)
        if plan.renamed:
            self.diagnostics.append(
                dg.info(
                    "sync.renamed",
                    f"{skill.name} is synced as {SKILLS_DIR}/{plan.folder}: {plan.renamed}",
                    path=skill.base_dir,
                    skill=skill.name,
                )
            )
        self.synced.append(
            SyncedSkill(
                name=skill.name,
                source=skill.source,
                source_dir=skill.base_dir,
                folder=plan.folder,
                files=outcome.files,
                bytes=outcome.bytes,
                renamed=plan.renamed,
                skill=skill,
            )
        )

    def note_links(self, skill: Skill, folder: str, report: CopyReport) -> None:
        where = {"path": skill.base_dir, "skill": skill.name}
        if report.host_links:
            self.diagnostics.append(
                dg.warning(
                    "sync.symlink-host-path",
                    f"{SKILLS_DIR}/{folder} holds {_links(report.host_links)} pointing at host "
                    "paths (OpenClaw's copy makes link targets absolute); they resolve in the "
                    "sandbox only where the same paths are mounted. links='sandbox' "
                    "(--links sandbox) copies them so they work there.",
                    **where,
                )
            )
        if report.dropped_links:
            self.diagnostics.append(
                dg.warning(
                    "sync.link-dropped",
                    f"{SKILLS_DIR}/{folder}: left out {_links(report.dropped_links)} that point "
                    "outside the skill folder (they could only reach host paths)",
                    **where,
                )
            )

    def write_catalog(self, mount: str) -> PromptCatalog:
        assert self.staging is not None
        folders = {s.skill.file_path: s.folder for s in self.synced if s.skill is not None}
        shown = [(s, folders[s.file_path]) for s in self.book.eligible if s.file_path in folders]
        catalog = mounted_catalog(shown, mount, self.book.config)
        try:
            (self.staging / CATALOG_FILE).write_text(catalog.text + "\n", encoding="utf-8")
        except BaseException:
            self.abandon()
            raise
        return catalog

    def finish(self) -> str:
        assert self.staging is not None
        try:
            new = marker.identity(self.staging)
            current = marker.identity(self.skills_dir)
            keep = [t for t in (new, current) if t is not None and (t == new or t in self.trees)]
            marker.write_trees(self.dest / marker.MARKER_FILE, keep, self.book.workspace)
            how = swap.replace_tree(
                self.staging,
                self.skills_dir,
                on_cleanup_error=self.cleanup_failed,
                workers=self.workers,
            )
        except BaseException:
            self.abandon()
            raise
        self.staging = None
        if self.progress is not None:
            self.progress(SyncProgress("swap", len(self.synced), len(self.synced)))
        return how

    def cleanup_failed(self, old: Path, exc: OSError) -> None:
        self.diagnostics.append(
            dg.warning(
                "sync.cleanup-failed",
                f"the new tree is in place, but the previous one ({old.name}) could not be "
                f"removed: {exc.strerror or exc}; the next sync removes it",
                path=old,
            )
        )

    def abandon(self) -> None:
        """Remove the half-built tree (a crash leaves it for the next run's cleanup)."""
        if self.staging is not None:
            swap.remove_tree(self.staging)
            self.staging = None


def _links(pairs: Sequence[tuple[str, str]]) -> str:
    shown = ", ".join(f"{rel or '.'} -> {target}" for rel, target in pairs[:_SHOWN_LINKS])
    more = f" and {len(pairs) - _SHOWN_LINKS} more" if len(pairs) > _SHOWN_LINKS else ""
    noun = "link" if len(pairs) == 1 else "links"
    return f"{len(pairs)} {noun} ({shown}{more})"


def _leftover_diagnostic(left: swap.Leftover, skills_dir: Path) -> Diagnostic:
    if left.action == "removed":
        return dg.warning(
            "sync.leftover-removed",
            f"removed {left.path.name}, left behind by an interrupted sync",
            path=left.path,
        )
    which = "the new tree" if left.action == "completed" else "the previous tree"
    return dg.warning(
        "sync.recovered",
        f"an interrupted sync left no {skills_dir.name} folder; {which} was put back "
        f"from {left.path.name}",
        path=skills_dir,
    )


def _same_folder(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _inside(root: str, path: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)
