"""Usage counters from sessions, stale skills, and pins.

Input: finished sessions (:meth:`UsageStore.record`), the loaded skills and the clock.
Output: ``<state dir>/experience/usage.json`` — per skill, how often its ``SKILL.md``
was read, how often commands ran as it (and each command), and when it was last used
— and :class:`StaleSkill` values for ``skillbook check``.

A skill is stale when it has not been used for ``skills.experience.staleAfterDays``
days (90 by default; 0 turns staleness off), counted from the latest of: its last use,
the day usage counting started (the first recorded session: a skill cannot be known
unused for longer than skillbook has been counting), and its file's last change.
Bundled and remote skills are never stale. A pinned skill is never reported: pins come
from ``skills.experience.pinned`` and from ``skillbook usage --pin NAME``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from skillbook.base.locks import locked
from skillbook.diagnostics import Diagnostic, info
from skillbook.experience._files import read_json, write_json
from skillbook.experience.record import SessionRecord, iso, parse_iso, utc_now
from skillbook.model import Skill, Source

__all__ = ["SkillUsage", "StaleSkill", "UsageReport", "UsageStore", "stale_skills"]

USAGE_FILE: Final = "usage.json"
#: Distinct commands counted per skill; the least used go first beyond it.
MAX_COMMANDS_PER_SKILL: Final = 50
_COMMAND_CHARS: Final = 200
_NEVER_STALE: Final = frozenset({Source.BUNDLED.value, Source.REMOTE.value})


@dataclass(frozen=True, slots=True)
class SkillUsage:
    name: str
    reads: int = 0
    runs: int = 0
    commands: Mapping[str, int] = field(default_factory=dict)
    last_used: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "reads": self.reads,
            "runs": self.runs,
            "commands": dict(self.commands),
            "lastUsed": self.last_used,
        }


@dataclass(frozen=True, slots=True)
class UsageReport:
    """Everything ``usage.json`` holds."""

    since: str | None = None
    skills: Mapping[str, SkillUsage] = field(default_factory=dict)
    pinned: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "since": self.since,
            "skills": {n: u.to_json() for n, u in sorted(self.skills.items())},
            "pinned": list(self.pinned),
        }


@dataclass(frozen=True, slots=True)
class StaleSkill:
    name: str
    source: str
    last_used: str | None
    idle_days: int
    file: Path

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            "lastUsed": self.last_used,
            "idleDays": self.idle_days,
            "file": str(self.file),
        }

    def diagnostic(self) -> Diagnostic:
        used = f"last used {self.last_used[:10]}" if self.last_used else "never used"
        return info(
            "experience.stale-skill",
            f"not used for {self.idle_days} days ({used}); remove it, or pin it with "
            f"`skillbook usage --pin {self.name}` to stop this note",
            path=self.file,
            skill=self.name,
        )


class UsageStore:
    """``<state dir>/experience/usage.json``, updated under a lock."""

    def __init__(self, state_dir: Path) -> None:
        self.path = Path(state_dir) / "experience" / USAGE_FILE
        self._lock = self.path.with_name(USAGE_FILE + ".lock")

    def load(self) -> UsageReport:
        data = read_json(self.path)
        if not isinstance(data, dict):
            return UsageReport()
        skills: dict[str, SkillUsage] = {}
        raw = data.get("skills")
        for name, v in raw.items() if isinstance(raw, dict) else ():
            if not isinstance(v, dict):
                continue
            commands = v.get("commands")
            skills[str(name)] = SkillUsage(
                name=str(name),
                reads=_int(v.get("reads")),
                runs=_int(v.get("runs")),
                commands={str(k): _int(c) for k, c in commands.items()}
                if isinstance(commands, dict)
                else {},
                last_used=v.get("lastUsed") if isinstance(v.get("lastUsed"), str) else None,
            )
        pinned = data.get("pinned")
        return UsageReport(
            since=data.get("since") if isinstance(data.get("since"), str) else None,
            skills=MappingProxyType(skills),
            pinned=tuple(str(p) for p in pinned) if isinstance(pinned, list) else (),
        )

    def record(self, record: SessionRecord) -> UsageReport:
        """Add one session's reads and commands to the counters."""
        with locked(self._lock):
            report = self.load()
            skills = dict(report.skills)
            for entry in record.tools:
                if not entry.ok or not entry.skill:
                    continue
                old = skills.get(entry.skill, SkillUsage(entry.skill))
                reads, runs, commands = old.reads, old.runs, dict(old.commands)
                if entry.name == "read" and (entry.path or "").endswith("SKILL.md"):
                    reads += 1
                elif entry.command is not None:
                    runs += 1
                    key = " ".join(entry.command.split())[:_COMMAND_CHARS]
                    commands[key] = commands.get(key, 0) + 1
                    if len(commands) > MAX_COMMANDS_PER_SKILL:
                        least = min(commands, key=lambda k: (commands[k], k))
                        del commands[least]
                else:
                    runs += 1
                last = max(filter(None, (old.last_used, record.started)))
                skills[entry.skill] = SkillUsage(entry.skill, reads, runs, commands, last)
            updated = UsageReport(report.since or record.started, skills, report.pinned)
            write_json(self.path, updated.to_json())
            return updated

    def pin(self, name: str, *, on: bool = True) -> UsageReport:
        """Pin (or with ``on=False`` unpin) a skill by name."""
        with locked(self._lock):
            report = self.load()
            pins = [p for p in report.pinned if p != name] + ([name] if on else [])
            updated = UsageReport(report.since, report.skills, tuple(sorted(pins)))
            write_json(self.path, updated.to_json())
            return updated


def stale_skills(
    skills: Iterable[Skill],
    usage: UsageReport,
    *,
    after_days: int,
    pinned: Iterable[str] = (),
    now: datetime | None = None,
) -> list[StaleSkill]:
    """The skills unused for ``after_days`` days (see the module docstring)."""
    since = parse_iso(usage.since)
    if after_days <= 0 or since is None:
        return []
    moment = now if now is not None else utc_now()
    pins = {*pinned, *usage.pinned}
    found: list[StaleSkill] = []
    for skill in skills:
        if skill.source in _NEVER_STALE or skill.name in pins or skill.skill_key in pins:
            continue
        used = usage.skills.get(skill.name)
        last = used.last_used if used is not None else None
        moments = [since, parse_iso(last), _modified(skill.file_path)]
        idle_since = max(m for m in moments if m is not None)
        idle = (moment - idle_since).days
        if idle >= after_days:
            found.append(StaleSkill(skill.name, skill.source, last, idle, skill.file_path))
    return found


def _modified(path: Path) -> datetime | None:
    try:
        stamp = os.stat(path).st_mtime
    except OSError:
        return None
    return parse_iso(iso(datetime.fromtimestamp(stamp).astimezone()))


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
