"""From a finished session to a draft in the review queue: the experience engine's loop.

Input: a :class:`~skillbook.experience.record.SessionRecord`. Output: :class:`Learned`,
saying what happened and why. The steps:

1. the success rule (:mod:`skillbook.experience.success`, replaceable) judges the run;
   a failed run leaves no draft;
2. the procedure is reconstructed and fingerprinted; a run that only read files has
   nothing to repeat and leaves no draft;
3. a draft with the same fingerprint is updated (run count, last seen, the new
   parameter values) instead of a new one being written; a promoted or rejected one
   with that fingerprint is reported and left alone;
4. a run that followed an existing skill and did what it states leaves no draft
   (``followed-skill``); one that followed it but did more, less or otherwise gives a
   *refine* draft against it (:mod:`skillbook.experience.follow`);
5. otherwise a new draft is built in the active mode's layout, with the risk marker,
   the near-duplicates it resembles and, when its commands had a skill's secret
   variables, that skill's config entry to share (:func:`with_env_source`), optionally
   refined by a model, and saved in the review queue;
6. with ``skills.experience.review: false`` a new draft that passes the gate, with no
   risk marker, is promoted at once (OpenPocket's behaviour); others, and every refine
   draft (it changes a skill someone wrote), wait for review.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillbook.config.mode import Mode
from skillbook.diagnostics import Diagnostic, info, warning
from skillbook.experience import ExperienceError
from skillbook.experience.draft import Draft, RefineTarget, build_draft
from skillbook.experience.follow import CatalogSkill, Following, find_following, slash_skill
from skillbook.experience.owner import ownership
from skillbook.experience.procedure import Procedure, reconstruct
from skillbook.experience.promotion import Promotion, check_draft, promote
from skillbook.experience.queue import DRAFT_FILE, ReviewQueue
from skillbook.experience.record import Clock, SessionRecord, utc_now
from skillbook.experience.redaction import Redactor, book_redactor
from skillbook.experience.refine import refine_draft
from skillbook.experience.risk import find_risks
from skillbook.experience.similarity import find_near_duplicates
from skillbook.experience.success import SuccessRule, Verdict, default_success

if TYPE_CHECKING:
    from skillbook.model import Skill
    from skillbook.pipeline.book import SkillBook
    from skillbook.runtime.providers.base import ChatModel

__all__ = ["Learned", "Learner", "env_keys_of", "with_env_source"]


@dataclass(frozen=True, slots=True)
class Learned:
    """What learning from one session did.

    ``action``: ``created`` (a new draft: ``draft.kind`` is ``new`` or ``refine``),
    ``updated`` (same fingerprint: run count and examples), ``promoted`` (created and
    promoted at once, review off), ``known`` (the procedure was promoted or rejected
    before), ``followed-skill`` (no draft: the run did what the skill ``skill`` states),
    ``skipped`` (no draft; ``verdict`` or the diagnostics say why).
    """

    session: str
    action: str
    verdict: Verdict
    draft: Draft | None = None
    promotion: Promotion | None = None
    diagnostics: tuple[Diagnostic, ...] = ()
    #: Nothing was there to learn (no tool call, or a slash command without the model):
    #: front ends need not mention it.
    quiet: bool = False
    #: The skill the run followed (``followed-skill``, or a refine draft's skill).
    skill: str | None = None

    def message(self) -> str:
        """One line for people."""
        d = self.draft
        if self.action == "followed-skill":
            return (
                f"nothing new learned from session {self.session}: it followed the skill "
                f"{self.skill} and did what it states"
            )
        if d is None:
            return f"nothing learned from session {self.session}: {self._why()}"
        if self.action == "created" and d.target is not None:
            return (
                f"learned refine draft {d.id} for the skill {d.target.name} "
                f"(review: skillbook drafts diff {d.id})"
            )
        if self.action == "created":
            return f"learned draft {d.id} (review: skillbook drafts show {d.id})"
        if self.action == "updated":
            return f"updated draft {d.id}: same procedure, {d.run_count} runs"
        if self.action == "promoted":
            return f"learned and promoted {d.id} as {d.name} (review is off)"
        return f"already learned as {d.id} ({d.status}); nothing new"

    def _why(self) -> str:
        if not self.verdict:
            return self.verdict.reason
        return next((d.message for d in self.diagnostics), "nothing to learn")

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "action": self.action,
            "success": self.verdict.success,
            "reason": self.verdict.reason,
            "draft": self.draft.id if self.draft is not None else None,
            "status": self.draft.status if self.draft is not None else None,
            "kind": self.draft.kind if self.draft is not None else None,
            "skill": self.skill,
            "promotion": self.promotion.to_json() if self.promotion is not None else None,
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }


class Learner:
    """Turns successful sessions into drafts in a state dir's review queue."""

    def __init__(
        self,
        state_dir: Path,
        *,
        mode: Mode | str = Mode.OPENCLAW,
        workspace: Path | None = None,
        review: bool = True,
        promote_mode: Mode | str = Mode.STRICT,
        success: SuccessRule = default_success,
        skills: Sequence[tuple[str, str, str]] = (),
        sources: Mapping[str, str] | None = None,
        home: str | None = None,
        clock: Clock = utc_now,
        redactor: Redactor | None = None,
        env_keys: Mapping[str, tuple[str, str]] | None = None,
    ) -> None:
        #: Every known secret: redacted from the session before anything is built from it.
        self.redactor = redactor if redactor is not None else Redactor()
        self.queue = ReviewQueue(state_dir, redactor=self.redactor)
        self.mode = Mode.of(mode)
        self.workspace = workspace
        self.review = review
        self.promote_mode = Mode.of(promote_mode)
        self.success = success
        #: ``(name, description, path)`` of the loaded skills, for near-duplicates.
        self.skills = tuple(skills)
        #: The discovery source of each skill by name (``openclaw-workspace`` …): a
        #: refine draft says where the skill it changes lives.
        self.sources = dict(sources or {})
        self.home = home
        self.clock = clock
        #: ``(skillKey, primaryEnv)`` of each skill by name and by key: whose config
        #: entry gave a run's commands their secret variables.
        self.env_keys = dict(env_keys or {})

    @classmethod
    def for_book(cls, book: SkillBook, **options: Any) -> Learner:
        """A learner with the book's state dir, mode, workspace, skills and settings."""
        exp = book.config.skills.experience
        defaults: dict[str, Any] = {
            "mode": book.mode,
            "workspace": book.workspace,
            "review": exp.review,
            "promote_mode": exp.promote_mode,
            "skills": tuple((s.name, s.description, str(s.file_path)) for s in book.skills),
            "sources": {s.name: s.source for s in book.skills},
            "home": str(book.paths.home),
            "env_keys": env_keys_of(book.skills),
        }
        if "redactor" not in options:
            defaults["redactor"] = book_redactor(book)
        return cls(book.paths.state_dir, **{**defaults, **options})

    def learn(self, record: SessionRecord, *, refine_with: ChatModel | None = None) -> Learned:
        """:meth:`alearn` for code that is not async."""
        return asyncio.run(self.alearn(record, refine_with=refine_with))

    async def alearn(
        self, record: SessionRecord, *, refine_with: ChatModel | None = None
    ) -> Learned:
        # A session written by hand or by an older version may hold a secret: the draft,
        # its files, its id and the refinement request are all built from this copy.
        record = self.redactor.record(record)
        verdict = self.success(record)
        if not verdict:
            quiet = not record.tools or record.stop == "dispatched"
            why = (_not_learned(verdict.reason),)
            return Learned(record.id, "skipped", verdict, diagnostics=why, quiet=quiet)
        procedure = reconstruct(record, home=self.home, tmpdir=os.environ.get("TMPDIR"))
        if not any(s.tool != "read" for s in procedure.steps):
            why = (_not_learned("the run ran no command or tool besides reading files"),)
            return Learned(record.id, "skipped", verdict, diagnostics=why, quiet=True)
        following = self.following(record, procedure)
        if following is not None and following.pure:
            return Learned(
                record.id,
                "followed-skill",
                verdict,
                diagnostics=(_followed(following),),
                skill=following.skill.name,
            )
        target = _target(following) if following is not None else None
        known = self.queue.by_fingerprint(procedure.fingerprint)
        if known is not None and known.status == "pending":
            updated = known.seen_again(record, procedure)
            if target is not None and known.target is not None:
                updated = replace(updated, target=target)  # the skill may have moved
            self.queue.save(updated, keep_previous=True)
            refines = updated.target.name if updated.target is not None else None
            return Learned(record.id, "updated", verdict, updated, skill=refines)
        if known is not None:
            again = known.seen_again(record, procedure)
            self.queue.write_draft(self.queue.folder(known.id, known.status) / DRAFT_FILE, again)
            return Learned(record.id, "known", verdict, again)
        draft = build_draft(
            record, procedure, mode=self.mode, now=self.clock(), risks=find_risks(record.tools)
        )
        draft = with_env_source(replace(draft, target=target), self.env_keys)
        diagnostics: list[Diagnostic] = []
        if refine_with is not None:
            refined = await refine_draft(draft, refine_with, redactor=self.redactor)
            unrefined = draft
            if refined.error is not None:
                draft = replace(draft, refine_error=refined.error)
                diagnostics.append(
                    warning(
                        "experience.refine-failed",
                        f"{refined.error}; the unrefined draft is kept",
                        skill=draft.id,
                    )
                )
            else:
                draft = refined.draft
        else:
            unrefined = draft
        draft = replace(draft, id=self.queue.unique_id(draft.id))
        # A refine draft is about its skill: that one is no near-duplicate of it.
        others = tuple(s for s in self.skills if target is None or s[0] != target.name)
        near = find_near_duplicates(draft, self.queue.drafts(None), others)
        draft = replace(draft, near_duplicates=near)
        diagnostics += [
            warning(
                "experience.near-duplicate",
                f"resembles {d.of} ({d.kind}, similarity {d.similarity:.2f}); compare with "
                f"`skillbook drafts diff {draft.id} --with {d.of}`",
                skill=draft.id,
            )
            for d in near
        ]
        self.queue.save(draft)
        if draft.refined:
            self.queue.save_unrefined(replace(unrefined, id=draft.id))
        if target is not None:
            diagnostics.append(_refines(draft, target))
        if self.review or self.workspace is None or draft.risks or target is not None:
            return Learned(
                record.id,
                "created",
                verdict,
                draft,
                diagnostics=tuple(diagnostics),
                skill=target.name if target is not None else None,
            )
        report = check_draft(draft, mode=self.promote_mode)
        if not report.ok:
            return Learned(
                record.id,
                "created",
                verdict,
                draft,
                diagnostics=(*diagnostics, *report.diagnostics),
            )
        try:
            # Never shadow a loaded skill: a taken name leaves the draft for review.
            done = promote(
                self.queue,
                draft.id,
                workspace=self.workspace,
                mode=self.promote_mode,
                taken=frozenset(s[0] for s in self.skills),
            )
        except ExperienceError as exc:
            why = exc.diagnostics or (
                warning("experience.not-promoted", f"{exc} ({exc.code})", skill=draft.id),
            )
            return Learned(record.id, "created", verdict, draft, diagnostics=(*diagnostics, *why))
        return Learned(record.id, "promoted", verdict, done.draft, done, tuple(diagnostics))

    def followed(self, record: SessionRecord) -> Following | None:
        """The skill a successful ``record`` followed and what it changed, as learning
        would judge it (``sessions show`` says so), or None."""
        record = self.redactor.record(record)
        procedure = reconstruct(record, home=self.home, tmpdir=os.environ.get("TMPDIR"))
        return self.following(record, procedure)

    def following(self, record: SessionRecord, procedure: Procedure) -> Following | None:
        """The skill ``record`` followed and how (:mod:`skillbook.experience.follow`)."""
        names = [s[0] for s in self.skills]
        wanted = set(record.skills_used)
        slash = slash_skill(record.request, names)
        if slash is not None:
            wanted.add(slash)
        catalog: list[CatalogSkill] = []
        for name, _, path in self.skills:
            if name not in wanted:
                continue
            try:
                text = Path(path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue  # gone since the book was loaded: nothing to compare with
            catalog.append(CatalogSkill(name, path, self.sources.get(name, ""), text))
        return find_following(record, procedure, catalog)


def env_keys_of(skills: Iterable[Skill]) -> dict[str, tuple[str, str]]:
    """``(skillKey, primaryEnv)`` of each skill, by name and by key (``exec`` finds a
    skill by either)."""
    out: dict[str, tuple[str, str]] = {}
    for skill in skills:
        meta = skill.metadata
        primary = (meta.primary_env or "").strip() if meta is not None else ""
        for label in (skill.name, skill.skill_key):
            out.setdefault(label, (skill.skill_key, primary))
    return out


def with_env_source(draft: Draft, env_keys: Mapping[str, tuple[str, str]]) -> Draft:
    """``draft`` with the config entry its secret variables came from: the one skill
    the commands that had them ran as (:attr:`Draft.env_skill_key`); unchanged when
    none had a secret, or several skills gave them (one ``skillKey`` cannot share two
    entries: the skill file then declares the names only)."""
    givers = {s.skill for s in draft.commands if s.secret_env}
    if not draft.needs_env or len(givers) != 1:
        return draft
    found = env_keys.get(next(iter(givers)) or "")
    if found is None:
        return draft
    key, primary = found
    return replace(
        draft, env_skill_key=key, env_primary=primary if primary in draft.needs_env else ""
    )


def _target(following: Following) -> RefineTarget:
    skill = following.skill
    return RefineTarget(skill.name, skill.path, skill.source, following.followed, following.changes)


def _followed(following: Following) -> Diagnostic:
    skill = following.skill
    where = ownership(Path(skill.path), skill.source, skill.name).describe()
    return info(
        "experience.followed-skill",
        f"the run followed the skill {skill.name} ({where}: {skill.path}) and did what it "
        "states; no draft, since the skill already says it",
        skill=skill.name,
        path=Path(skill.path),
    )


def _refines(draft: Draft, target: RefineTarget) -> Diagnostic:
    where = ownership(Path(target.path), target.source, target.name)
    then = (
        "promoting it edits the skill (a backup is kept)"
        if where.owned
        else f"promoting it writes a local override in the workspace, since {where.why}"
    )
    return info(
        "experience.refine",
        f"the run followed the skill {target.name} ({where.describe()}) and did otherwise: "
        f"{'; '.join(target.changes)}. See `skillbook drafts diff {draft.id}`; {then}",
        skill=draft.id,
        path=Path(target.path),
    )


def _not_learned(reason: str) -> Diagnostic:
    return info("experience.not-learned", reason)
