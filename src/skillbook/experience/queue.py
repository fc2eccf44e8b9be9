"""The review queue: drafts under ``<state dir>/experience``, waiting for a person.

Input: the state dir. Output: :class:`Draft` values and their files. Layout::

    <state dir>/experience/drafts/<id>/draft.json      the draft (what ``drafts show`` reads)
                                      /SKILL.md        or <id>.md in mixed/legacy mode
                                      /replay.sh       the replay helper
                                      /previous.md     the skill file before the last update
                                      /unrefined.json  the draft before ``--refine``
    <state dir>/experience/promoted/<id>/...           promoted drafts (where they went)
    <state dir>/experience/archive/<id>/...            rejected drafts (with the reason)

None of these folders is a skill root: a draft is never in the model's catalog before
it is promoted. Files are replaced atomically, ``draft.json`` last; a new draft's
folder is built under a temporary name and renamed into place. Everything written passes
the queue's :class:`~skillbook.experience.redaction.Redactor` first, so a draft made by
hand (or from an old session) cannot put a known secret on disk either.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Final

from skillbook.diagnostics import Diagnostic, warning
from skillbook.experience import ExperienceNotFound
from skillbook.experience._files import move_dir, read_json, write_atomic, write_json
from skillbook.experience.draft import Draft
from skillbook.experience.redaction import Redactor
from skillbook.experience.replay import render_replay
from skillbook.experience.skill_file import render_skill

__all__ = ["DRAFT_FILE", "REPLAY_FILE", "STATES", "ReviewQueue"]

EXPERIENCE_DIRNAME: Final = "experience"
DRAFT_FILE: Final = "draft.json"
REPLAY_FILE: Final = "replay.sh"
PREVIOUS_FILE: Final = "previous.md"
UNREFINED_FILE: Final = "unrefined.json"
#: Draft status → the folder holding drafts in it.
STATES: Final = {"pending": "drafts", "promoted": "promoted", "rejected": "archive"}


class ReviewQueue:
    """The drafts of one state dir, by status."""

    def __init__(self, state_dir: Path, *, redactor: Redactor | None = None) -> None:
        self.root = Path(state_dir) / EXPERIENCE_DIRNAME
        #: Applied to every file the queue (and promotion) writes.
        self.redactor = redactor if redactor is not None else Redactor()
        #: Folders skipped while listing (``experience.draft-unreadable``), newest read last.
        self.problems: list[Diagnostic] = []

    def folder(self, draft_id: str, status: str = "pending") -> Path:
        return self.root / STATES[status] / draft_id

    def skill_file(self, draft: Draft) -> Path:
        return self.folder(draft.id, draft.status) / draft.skill_filename

    def replay_file(self, draft: Draft) -> Path:
        return self.folder(draft.id, draft.status) / REPLAY_FILE

    # ------------------------------------------------------------------ reading

    def drafts(self, status: str | None = "pending") -> list[Draft]:
        """Drafts with ``status`` (``None``: all), newest first."""
        found: list[Draft] = []
        for state in STATES if status is None else (status,):
            found.extend(self._read_all(state))
        return sorted(found, key=lambda d: d.id, reverse=True)

    def get(self, ref: str) -> Draft:
        """The draft ``ref`` names: its id, a unique prefix (pending drafts first), or
        ``last``, the newest pending draft."""
        if ref == "last":
            pending = self._ids("pending")
            if pending:
                return self._read(max(pending), "pending")
        for status in STATES:
            ids = self._ids(status)
            if ref in ids:
                return self._read(ref, status)
        matches = [(i, st) for st in STATES for i in self._ids(st) if ref and i.startswith(ref)]
        if len(matches) == 1:
            return self._read(*matches[0])
        if not matches:
            raise ExperienceNotFound(f"no draft {ref!r} (see `skillbook drafts list --all`)")
        shown = ", ".join(i for i, _ in matches[:3])
        raise ExperienceNotFound(
            f"{ref!r} matches {len(matches)} drafts ({shown}, …); give more of the id",
            code="ambiguous",
        )

    def by_fingerprint(self, fingerprint: str) -> Draft | None:
        """The draft (any status; pending first) with this behaviour fingerprint."""
        for status in STATES:
            for draft in self._read_all(status):
                if draft.fingerprint == fingerprint:
                    return draft
        return None

    def text(self, draft: Draft, name: str) -> str | None:
        try:
            return (self.folder(draft.id, draft.status) / name).read_text(encoding="utf-8")
        except OSError:
            return None

    def unique_id(self, wanted: str) -> str:
        """``wanted``, or ``wanted-2``, ``-3``… when a draft of any status has the id."""
        taken = {i for st in STATES for i in self._ids(st)}
        candidate, n = wanted, 1
        while candidate in taken:
            n += 1
            candidate = f"{wanted}-{n}"
        return candidate

    # ------------------------------------------------------------------ writing

    def save(self, draft: Draft, *, keep_previous: bool = False) -> Path:
        """Write (or rewrite) a draft's files; ``keep_previous`` saves the old skill text
        as ``previous.md`` for ``drafts diff``."""
        draft = self.redactor.draft(draft)
        folder = self.folder(draft.id, draft.status)
        skill, replay = (
            self.clean(render_skill(draft)),
            self.clean(render_replay(draft, queued=True)),
        )
        if not folder.exists():
            staging = folder.parent / f".new-{draft.id}-{secrets.token_hex(4)}"
            staging.mkdir(parents=True)
            try:
                write_atomic(staging / draft.skill_filename, skill)
                write_atomic(staging / REPLAY_FILE, replay, executable=True)
                self.write_draft(staging / DRAFT_FILE, draft)
                move_dir(staging, folder)
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
            return folder
        if keep_previous:
            old = self.text(draft, draft.skill_filename)
            if old is not None and old != skill:
                write_atomic(folder / PREVIOUS_FILE, self.clean(old))
        write_atomic(folder / draft.skill_filename, skill)
        write_atomic(folder / REPLAY_FILE, replay, executable=True)
        self.write_draft(folder / DRAFT_FILE, draft)
        return folder

    def save_unrefined(self, draft: Draft) -> None:
        self.write_draft(self.folder(draft.id, draft.status) / UNREFINED_FILE, draft)

    def write_draft(self, path: Path, draft: Draft) -> None:
        """``draft`` as JSON at ``path``, redacted."""
        write_json(path, self.redactor.value(draft.to_json()))

    def clean(self, text: str) -> str:
        """``text`` with every known secret redacted (what the queue writes)."""
        return self.redactor.text(text)

    def unrefined(self, draft: Draft) -> Draft | None:
        data = read_json(self.folder(draft.id, draft.status) / UNREFINED_FILE)
        return Draft.from_json(data) if isinstance(data, dict) and "id" in data else None

    def move(self, draft: Draft, status: str) -> Path:
        """Move a draft's folder to the folder of ``status`` (one rename)."""
        source = self.folder(draft.id, draft.status)
        target = self.folder(draft.id, status)
        move_dir(source, target)
        return target

    # ------------------------------------------------------------------ internals

    def _ids(self, status: str) -> list[str]:
        try:
            with os.scandir(self.root / STATES[status]) as it:
                return sorted(e.name for e in it if e.is_dir() and not e.name.startswith("."))
        except OSError:
            return []

    def _read(self, draft_id: str, status: str) -> Draft:
        data = read_json(self.folder(draft_id, status) / DRAFT_FILE)
        if not isinstance(data, dict) or "id" not in data:
            raise ExperienceNotFound(f"draft {draft_id!r} has no readable {DRAFT_FILE}")
        draft = Draft.from_json(data)
        return draft if draft.status == status else replace(draft, status=status)

    def _read_all(self, status: str) -> Iterator[Draft]:
        for draft_id in self._ids(status):
            try:
                yield self._read(draft_id, status)
            except ExperienceNotFound as exc:
                self.problems.append(
                    warning(
                        "experience.draft-unreadable",
                        f"{exc}; skipped (remove the folder, or restore its {DRAFT_FILE})",
                        path=self.folder(draft_id, status),
                    )
                )
