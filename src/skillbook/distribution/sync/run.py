"""One sync under the target's lock: clean up, plan, copy, write the catalog, swap.

Used by :func:`skillbook.distribution.sync.workspace.sync_book`, which holds the lock and turns the
run's state into a :class:`~skillbook.distribution.sync.result.SyncResult`. Entries are planned in
order (folder names depend on earlier entries), copied on a thread pool, and recorded
in order again, so diagnostics come out in OpenClaw's order.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from skillbook import diagnostics as dg
from skillbook.base.fs import is_path_inside
from skillbook.diagnostics import Diagnostic
from skillbook.distribution import swap
from skillbook.distribution.sync import TargetNotSynced, marker
from skillbook.distribution.sync.copytree import EXCLUDED_NAMES, CopyError, CopyReport, copy_skill
from skillbook.distribution.sync.names import DirNamer, Refusal
from skillbook.distribution.sync.result import SyncedSkill, SyncProgress
from skillbook.distribution.sync.sandbox import CATALOG_FILE, mounted_catalog
from skillbook.model import Skill
from skillbook.pipeline.book import SkillBook
from skillbook.pipeline.prompt.skills_section import PromptCatalog

SKILLS_DIR = "skills"
#: Link targets named in a diagnostic before "and N more".
_SHOWN_LINKS = 3


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


class SyncRun:
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
        if is_path_inside(plan.real, self.real_staging):
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
