"""Recorded sessions on disk: ``<state dir>/sessions/<id>.jsonl``.

Input: the state dir. Output: :class:`SessionRecord` values and :class:`SessionSummary`
rows, newest first. Each save rewrites the whole file atomically (temp + rename), so a
reader sees the last complete state; :meth:`SessionStore.prune` applies the retention
limits (``skills.experience.sessions``: how many to keep, for how many days).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Final

from skillbook.experience import ExperienceNotFound
from skillbook.experience._files import write_atomic
from skillbook.experience.record import SessionRecord, iso, parse_iso, utc_now
from skillbook.experience.redaction import Redactor

__all__ = ["SESSIONS_DIRNAME", "SessionStore", "SessionSummary", "new_session_id"]

SESSIONS_DIRNAME: Final = "sessions"
_SUFFIX: Final = ".jsonl"


def new_session_id(now: datetime) -> str:
    """``20260105-143000-3fa2c1``: sortable by time, unique by its random tail."""
    return f"{now.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One line of ``skillbook sessions list``."""

    id: str
    started: str
    request: str
    stop: str
    tools: int
    failed: int
    feedback: str | None
    skills: tuple[str, ...]
    path: Path

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "started": self.started,
            "request": self.request,
            "stop": self.stop,
            "tools": self.tools,
            "failed": self.failed,
            "feedback": self.feedback,
            "skills": list(self.skills),
            "path": str(self.path),
        }


class SessionStore:
    """The sessions folder of one state dir; ``redactor`` cleans every record it saves
    (``add_feedback`` rewrites a session an older version may have written)."""

    def __init__(self, state_dir: Path, *, redactor: Redactor | None = None) -> None:
        self.dir = Path(state_dir) / SESSIONS_DIRNAME
        self.redactor = redactor if redactor is not None else Redactor()

    def path(self, session_id: str) -> Path:
        return self.dir / f"{session_id}{_SUFFIX}"

    def save(self, record: SessionRecord) -> Path:
        path = self.path(record.id)
        write_atomic(path, self.redactor.record(record).to_jsonl())
        return path

    def ids(self) -> list[str]:
        """Every session id, newest first (ids sort by time)."""
        try:
            names = [e.name for e in os.scandir(self.dir) if e.name.endswith(_SUFFIX)]
        except OSError:
            return []
        return sorted((n[: -len(_SUFFIX)] for n in names if not n.startswith(".")), reverse=True)

    def resolve(self, ref: str) -> str:
        """The id ``ref`` names: an id, a unique prefix of one, or ``last``."""
        ids = self.ids()
        if ref == "last" and ids:
            return ids[0]
        if ref in ids:
            return ref
        matches = [i for i in ids if i.startswith(ref)] if ref else []
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise ExperienceNotFound(f"no recorded session {ref!r} in {self.dir}")
        raise ExperienceNotFound(
            f"{ref!r} matches {len(matches)} sessions ({', '.join(matches[:3])}, …); "
            "give more of the id",
            code="ambiguous",
        )

    def load(self, ref: str) -> SessionRecord:
        """The session ``ref`` names (see :meth:`resolve`); raises ExperienceNotFound."""
        session_id = self.resolve(ref)
        path = self.path(session_id)
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise ExperienceNotFound(f"cannot read session {path}: {exc.strerror}") from exc
        return SessionRecord.from_jsonl(text, path)

    def records(self) -> Iterator[SessionRecord]:
        """Every readable session, newest first."""
        for session_id in self.ids():
            try:
                yield self.load(session_id)
            except ExperienceNotFound:
                continue  # removed meanwhile (pruned by another process)

    def summaries(self, limit: int | None = None) -> list[SessionSummary]:
        out: list[SessionSummary] = []
        for record in self.records():
            if limit is not None and len(out) >= limit:
                break
            out.append(
                SessionSummary(
                    id=record.id,
                    started=record.started,
                    request=record.request,
                    stop=record.stop,
                    tools=len(record.tools),
                    failed=sum(not t.ok for t in record.tools),
                    feedback=record.feedback,
                    skills=record.skills_used,
                    path=self.path(record.id),
                )
            )
        return out

    def add_feedback(self, ref: str, verdict: str) -> SessionRecord:
        """Mark a session ``good`` or ``bad`` (what the user said about the result)."""
        if verdict not in ("good", "bad"):
            raise ValueError(f"verdict must be 'good' or 'bad', got {verdict!r}")
        record = self.load(ref).with_feedback(verdict)
        self.save(record)
        return record

    def prune(self, *, keep: int, max_age_days: int, now: datetime | None = None) -> list[str]:
        """Remove sessions beyond the newest ``keep`` and older than ``max_age_days``."""
        moment = now if now is not None else utc_now()
        cutoff = iso(moment - timedelta(days=max_age_days))
        removed: list[str] = []
        for index, session_id in enumerate(self.ids()):
            started = _started_of(session_id)
            too_old = started is not None and iso(started) < cutoff
            if index >= keep or too_old:
                try:
                    os.unlink(self.path(session_id))
                except OSError:
                    continue
                removed.append(session_id)
        return removed


def _started_of(session_id: str) -> datetime | None:
    stamp = session_id[:15]  # YYYYMMDD-HHMMSS
    if len(stamp) != 15:
        return None
    return parse_iso(
        f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]}T{stamp[9:11]}:{stamp[11:13]}:{stamp[13:15]}Z"
    )
