"""Recording and learning for ``run`` and ``chat``: ``--learn/--no-learn`` and
``--refine/--no-refine``.

Each request is recorded as a session (unless ``skills.experience.record`` is false).
With learning on (``skills.experience.learn``, default true; ``--no-learn`` turns it off
for one call), a successful session becomes a draft in the review queue. The same model
writes a new draft's words (name, description, what each step is for, checks) when one
is configured (``skills.experience.refine: auto``, the default); ``--no-refine`` keeps
the offline template for one call, ``--refine`` asks even when the setting is ``never``.

``run`` learns right after the answer. ``chat`` waits until the next request (or the
end of the chat), so that ``/bad`` can still reject the last task; ``/good`` marks it
good and learns from it at once.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from skillbook.cli.validate_cmd import finding_lines
from skillbook.experience.engine import Experience
from skillbook.experience.refine import refine_model

if TYPE_CHECKING:
    from skillbook.experience.learner import Learned
    from skillbook.experience.record import SessionRecord
    from skillbook.experience.recorder import SessionRecorder
    from skillbook.pipeline.book import SkillBook
    from skillbook.runtime.providers.base import ChatModel

__all__ = ["Learning", "learn_options"]

F = TypeVar("F", bound=Callable[..., Any])


def learn_options(fn: F) -> F:
    """``--learn/--no-learn`` and ``--refine/--no-refine``, shared by ``run`` and ``chat``."""
    fn = click.option(
        "--refine/--no-refine",
        "refine",
        default=None,
        help="Let the model write a new draft's name, description, step notes and checks "
        "(never its commands); --no-refine keeps the offline template "
        "(default: skills.experience.refine, auto: on when a model is configured).",
    )(fn)
    fn = click.option(
        "--learn/--no-learn",
        "learn",
        default=None,
        help="Draft a skill from a successful run (default: skills.experience.learn, on).",
    )(fn)
    return fn


class Learning:
    """One command's recorder and learner."""

    def __init__(
        self,
        book: SkillBook,
        *,
        learn: bool | None,
        refine: bool | None,
        model: ChatModel | None,
        conversation: bool = False,
    ) -> None:
        self.experience = Experience(book)
        chat_id = secrets.token_hex(4) if conversation else None
        self.recorder: SessionRecorder | None = self.experience.recorder(conversation=chat_id)
        wanted = self.experience.config.learn if learn is None else learn
        self.enabled = wanted and self.recorder is not None
        #: The model that writes new drafts' words, or None for the template.
        self.model = refine_model(self.experience.config.refine, model, refine)
        #: The chat's last task, not learned from yet.
        self.pending: SessionRecord | None = None
        #: What learning from the chat's last task did.
        self.last: Learned | None = None

    def finished(self) -> SessionRecord | None:
        return self.experience.last_session()

    async def learn(self, record: SessionRecord | None = None) -> Learned | None:
        """Learn from ``record`` (default: the last session) when learning is on."""
        record = record if record is not None else self.finished()
        if not self.enabled or record is None:
            return None
        learner = self.experience.learner()
        return await learner.alearn(record, refine_with=self.model)

    # ------------------------------------------------------------------ chat

    def after_request(self) -> None:
        """A chat request ended: its session waits for /good, /bad or the next request."""
        record = self.finished()
        if record is not None and (self.pending is None or record.id != self.pending.id):
            self.pending = record
            self.last = None

    async def settle(self) -> list[str]:
        """Learn from the pending task (the user did not say /bad)."""
        record, self.pending = self.pending, None
        if record is None:
            return []
        self.last = await self.learn(record)
        if self.last is not None and self.last.action == "skipped":
            return []  # a chat need not say so after each turn; `sessions show` does
        return lines_of(self.last)

    async def good(self) -> list[str]:
        target = self._target()
        if target is None:
            return ["Nothing to mark: no request was recorded yet."]
        record = self.experience.sessions.add_feedback(target, "good")
        if self.pending is not None and self.pending.id == record.id:
            self.pending = record
            return [f"Marked session {record.id} good.", *await self.settle()]
        return [f"Marked session {record.id} good."]

    async def bad(self) -> list[str]:
        target = self._target()
        if target is None:
            return ["Nothing to mark: no request was recorded yet."]
        record = self.experience.sessions.add_feedback(target, "bad")
        out = [f"Marked session {record.id} bad; nothing will be learned from it."]
        if self.pending is not None and self.pending.id == record.id:
            self.pending = None
        elif self.last is not None and self.last.action == "created" and self.last.draft:
            draft = self.experience.reject(self.last.draft.id, "the user marked the run bad (/bad)")
            out.append(f"Rejected draft {draft.id}.")
            self.last = None
        return out

    def _target(self) -> str | None:
        if self.pending is not None:
            return self.pending.id
        record = self.finished()
        return record.id if record is not None else None


def lines_of(learned: Learned | None) -> list[str]:
    """What learning did, for people: one line, then each finding."""
    if learned is None or learned.quiet:
        return []
    if learned.action == "skipped":
        return [f"skillbook: {learned.message()}"]
    return [
        f"skillbook: {learned.message()}",
        *(f"  {x}" for x in finding_lines(learned.diagnostics)),
    ]
