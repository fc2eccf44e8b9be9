"""The experience engine of one skill book: its sessions, drafts, usage and settings.

Input: a :class:`~skillbook.pipeline.book.SkillBook` (its state dir, workspace, mode and
``skills.experience`` config). Output: the pieces wired together — a recorder for an
:class:`~skillbook.runtime.agent.Agent`, a learner, the review queue, usage and stale
skills — so the CLI and Python code do the same thing::

    exp = Experience(book)
    agent = Agent(book, model, recorder=exp.recorder())
    result = asyncio.run(agent.invoke("count the words in notes.txt"))
    learned = exp.learner().learn(exp.last_session())
    exp.promote(learned.draft.id)
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillbook.errors import SkillNotFound
from skillbook.experience import ExperienceError
from skillbook.experience.learner import Learner
from skillbook.experience.promotion import GateReport, Promotion, check_draft, promote, reject
from skillbook.experience.queue import PREVIOUS_FILE, ReviewQueue
from skillbook.experience.record import SessionRecord
from skillbook.experience.recorder import SessionRecorder
from skillbook.experience.redaction import Redactor, book_redactor
from skillbook.experience.refining import (
    ORIGINAL_DIR,
    RefinePlan,
    check_refine,
    plan_refine,
    promote_refine,
)
from skillbook.experience.skill_file import render_skill
from skillbook.experience.store import SessionStore
from skillbook.experience.usage import StaleSkill, UsageStore, stale_skills
from skillbook.pipeline.lookup import find_entry

if TYPE_CHECKING:
    from skillbook.config.experience import ExperienceConfig
    from skillbook.experience.draft import Draft
    from skillbook.pipeline.book import SkillBook

__all__ = ["Experience"]


class Experience:
    """Sessions, drafts and usage of one book's state dir (see the module docstring)."""

    def __init__(self, book: SkillBook) -> None:
        self.book = book
        state = book.paths.state_dir
        #: Every secret the book knows of; what the queue writes and the CLI prints passes it.
        self.redactor: Redactor = book_redactor(book)
        self.sessions = SessionStore(state, redactor=self.redactor)
        self.queue = ReviewQueue(state, redactor=self.redactor)
        self.usage = UsageStore(state)
        self._recorder: SessionRecorder | None = None

    @property
    def config(self) -> ExperienceConfig:
        return self.book.config.skills.experience

    # ------------------------------------------------------------------ recording

    def recorder(self, *, conversation: str | None = None) -> SessionRecorder | None:
        """A recorder for an Agent, or None when ``skills.experience.record`` is off."""
        if not self.config.record:
            return None
        self._recorder = SessionRecorder(
            self.sessions,
            conversation=conversation,
            keep=self.config.keep_sessions,
            max_age_days=self.config.max_age_days,
            on_end=self.usage.record,
        )
        return self._recorder

    def last_session(self) -> SessionRecord | None:
        """The session the last :meth:`recorder` finished, if any."""
        return self._recorder.last if self._recorder is not None else None

    def learner(self, **options: Any) -> Learner:
        return Learner.for_book(self.book, **{"redactor": self.redactor, **options})

    # ------------------------------------------------------------------ review

    def check(
        self, ref: str, *, accept_risk: bool = False, strict_name: bool = False
    ) -> GateReport:
        draft = self.queue.get(ref)
        if draft.target is not None:
            return check_refine(
                draft,
                self.plan(draft),
                mode=self.config.promote_mode,
                accept_risk=accept_risk,
                path=self.queue.skill_file(draft),
            )
        return check_draft(
            draft,
            mode=self.config.promote_mode,
            accept_risk=accept_risk,
            path=self.queue.skill_file(draft),
            strict_name=strict_name,
        )

    def taken_names(self) -> frozenset[str]:
        """The names of every skill the book found, shadowed ones too: a promoted skill
        must not take one (it would hide the other, or be hidden). The book is the one
        this was made with: make a new Experience to see skills added since."""
        found = self.book.discovery
        return frozenset({s.name for s in found.loaded} | {s.hidden.name for s in found.shadowed})

    def promote(
        self,
        ref: str,
        *,
        accept_risk: bool = False,
        name: str | None = None,
        suffix: bool = False,
        strict_name: bool = False,
        as_new: bool = False,
    ) -> Promotion:
        """Promote a draft into the book's workspace (``skills/auto``, ``scripts/auto``)
        as ``name`` (else its slug); :func:`~skillbook.experience.promotion.promote`.

        A refine draft edits the skill it refines, or overrides it, or with ``as_new``
        becomes a new skill (``name``, ``suffix``):
        :func:`~skillbook.experience.refining.promote_refine`."""
        workspace = self._workspace()
        draft = self.queue.get(ref)
        if draft.target is not None:
            return promote_refine(
                self.queue,
                draft,
                workspace=workspace,
                mode=self.config.promote_mode,
                accept_risk=accept_risk,
                as_new=as_new,
                name=name,
                taken=self.taken_names(),
                suffix=suffix,
            )
        return promote(
            self.queue,
            ref,
            workspace=workspace,
            mode=self.config.promote_mode,
            accept_risk=accept_risk,
            name=name,
            taken=self.taken_names(),
            suffix=suffix,
            strict_name=strict_name,
        )

    def plan(self, draft: Draft, *, as_new: bool = False) -> RefinePlan:
        """What promoting the refine draft ``draft`` would write (nothing is written)."""
        return plan_refine(
            draft,
            workspace=self._workspace(),
            as_new=as_new,
            taken=self.taken_names(),
            suffix=True,
            redacted=self.redactor.draft(draft),
        )

    def _workspace(self) -> Path:
        workspace = self.book.workspace
        if workspace is None:
            raise ExperienceError(
                "promotion needs a workspace (pass one to skillbook.load or --workspace)",
                code="no-workspace",
            )
        return workspace

    def reject(self, ref: str, reason: str) -> Draft:
        return reject(self.queue, ref, reason)

    def diff(self, ref: str, *, with_skill: str | None = None) -> str:
        """A unified diff of a draft's skill file against ``with_skill``'s SKILL.md, else
        against the draft before its last update or refinement, else against nothing.

        A refine draft (without ``with_skill``) shows the change to the skill it refines:
        its ``SKILL.md`` now, then as promotion would write it."""
        draft = self.queue.get(ref)
        if draft.target is not None and with_skill is None:
            return self._refine_diff(draft)
        current = render_skill(draft)
        label = "/dev/null"
        before = ""
        if with_skill is not None:
            entry = find_entry(self.book.status.skills, with_skill)
            if entry is None:
                raise SkillNotFound(with_skill)
            path = Path(entry.file_path)
            before, label = path.read_text(encoding="utf-8", errors="replace"), str(path)
        else:
            previous = self.queue.text(draft, PREVIOUS_FILE)
            unrefined = self.queue.unrefined(draft)
            if previous is not None:
                before, label = previous, f"{draft.id} (before the last update)"
            elif unrefined is not None:
                before, label = render_skill(unrefined), f"{draft.id} (unrefined)"
        return self.redactor.text(
            "".join(
                difflib.unified_diff(
                    before.splitlines(keepends=True),
                    current.splitlines(keepends=True),
                    fromfile=label,
                    tofile=f"{draft.id}/{draft.skill_filename}",
                )
            )
        )

    def _refine_diff(self, draft: Draft) -> str:
        if draft.status == "pending":
            plan = self.plan(draft)
            before, after = plan.original_text, plan.text
            path = str(plan.skill_path) if plan.how != "edited" else str(plan.original_path)
            label = str(plan.original_path)
        else:
            # Decided: the skill's file may have changed since; show what was written.
            assert draft.target is not None
            kept = self.queue.text(draft, f"{ORIGINAL_DIR}/SKILL.md")
            written = Path(draft.promoted_to or draft.target.path)
            try:
                after = written.read_text(encoding="utf-8", errors="replace")
            except OSError:
                after = ""
            label = draft.target.path
            path = str(written)
            before = kept if kept is not None else self._text_of(Path(draft.target.path))
        return self.redactor.text(
            "".join(
                difflib.unified_diff(
                    before.splitlines(keepends=True),
                    after.splitlines(keepends=True),
                    fromfile=label,
                    tofile=f"{path} (refined by {draft.id})",
                )
            )
        )

    @staticmethod
    def _text_of(path: Path) -> str:
        try:
            return path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    # ------------------------------------------------------------------ usage

    def stale(self) -> list[StaleSkill]:
        """The book's skills unused for ``staleAfterDays`` days, pins left out."""
        return stale_skills(
            self.book.skills,
            self.usage.load(),
            after_days=self.config.stale_after_days,
            pinned=self.config.pinned,
        )
