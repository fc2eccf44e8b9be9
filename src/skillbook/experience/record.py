"""A recorded session: one request to the agent, what it did, and how it ended.

Input: JSON Lines as :class:`~skillbook.experience.recorder.SessionRecorder` writes them
under ``<state dir>/sessions/<id>.jsonl``. Output: a frozen :class:`SessionRecord`.
The file holds one JSON object per line, each with a ``type``:

``session``   ``{id, version, started, workspace, agent, mode, model, conversation, skills}``
``request``   ``{text}``: what the user sent (a slash command as typed)
``step``      ``{n, text, calls}``: one model response, its text and the ids of its tool calls
``approval``  ``{call, approved}``: the user was asked about a command and answered
``tool``      ``{call, name, arguments, skill, step, isError, result, cwd, shell, env,
              secretEnv, hints, declined, durationMs}``: one tool call and its (redacted) result
``outcome``   ``{stop, text, error, ended, skillsRead}``; ``stop`` is ``answer``, ``max-steps``,
              ``dispatched``, ``error`` or ``cancelled``; no outcome line: ``interrupted``
``feedback``  ``{verdict, at}``: ``good`` or ``bad`` (chat's ``/good`` and ``/bad``)

Readers skip lines they cannot parse and unknown types, so a newer writer or a damaged
line never makes a session unreadable. Nothing here does I/O.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

__all__ = [
    "FORMAT_VERSION",
    "Clock",
    "Outcome",
    "SessionRecord",
    "Step",
    "ToolEntry",
    "iso",
    "parse_iso",
    "utc_now",
]

FORMAT_VERSION: Final = 1
#: Where the model finished, or why it did not.
STOPS: Final = ("answer", "max-steps", "dispatched", "error", "cancelled", "interrupted")

Clock = Callable[[], datetime]
_EMPTY: Final[Mapping[str, Any]] = MappingProxyType({})


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """``2026-01-05T14:30:00Z``: UTC, whole seconds."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class ToolEntry:
    """One tool call of the session and what came back (secrets already redacted)."""

    call_id: str
    name: str
    arguments: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    skill: str | None = None
    result: str = ""
    is_error: bool = False
    #: The model step that asked for it (0: a slash command the user typed).
    step: int = 0
    #: It never ran: the user or the exec policy refused it.
    declined: bool = False
    #: None: nobody was asked; True/False: what the user answered.
    approved: bool | None = None
    #: Where ``exec`` ran it, the shell it ran under (``/bin/sh``), and the non-secret
    #: variables of the skill's environment.
    cwd: str | None = None
    shell: str | None = None
    env: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    #: Names (never values) of the secret variables the command had.
    secret_env: tuple[str, ...] = ()
    #: Structured hints the tool contributed (``skillbook.experience.hints``).
    hints: tuple[Mapping[str, Any], ...] = ()
    duration_ms: int | None = None

    @property
    def ok(self) -> bool:
        return not self.is_error and not self.declined

    @property
    def command(self) -> str | None:
        value = self.arguments.get("command")
        return value if isinstance(value, str) else None

    @property
    def path(self) -> str | None:
        value = self.arguments.get("path")
        return value if isinstance(value, str) else None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "tool",
            "call": self.call_id,
            "name": self.name,
            "arguments": dict(self.arguments),
            "skill": self.skill,
            "step": self.step,
            "isError": self.is_error,
            "result": self.result,
        }
        if self.declined:
            out["declined"] = True
        if self.cwd is not None:
            out["cwd"] = self.cwd
        if self.shell is not None:
            out["shell"] = self.shell
        if self.env:
            out["env"] = dict(self.env)
        if self.secret_env:
            out["secretEnv"] = list(self.secret_env)
        if self.hints:
            out["hints"] = [dict(h) for h in self.hints]
        if self.duration_ms is not None:
            out["durationMs"] = self.duration_ms
        return out

    @classmethod
    def from_json(cls, line: Mapping[str, Any]) -> ToolEntry:
        args = line.get("arguments")
        env = line.get("env")
        return cls(
            call_id=str(line.get("call", "")),
            name=str(line.get("name", "")),
            arguments=MappingProxyType(dict(args)) if isinstance(args, Mapping) else _EMPTY,
            skill=_str_or_none(line.get("skill")),
            result=str(line.get("result", "")),
            is_error=bool(line.get("isError")),
            step=_int(line.get("step")),
            declined=bool(line.get("declined")),
            cwd=_str_or_none(line.get("cwd")),
            shell=_str_or_none(line.get("shell")),
            env=MappingProxyType({str(k): str(v) for k, v in env.items()})
            if isinstance(env, Mapping)
            else _EMPTY,
            secret_env=tuple(str(v) for v in _list(line.get("secretEnv"))),
            hints=tuple(
                MappingProxyType(dict(h)) for h in _list(line.get("hints")) if isinstance(h, dict)
            ),
            duration_ms=line.get("durationMs") if isinstance(line.get("durationMs"), int) else None,
        )


@dataclass(frozen=True, slots=True)
class Step:
    """One model response: its text and the tool calls it asked for (by id)."""

    n: int
    text: str
    calls: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Outcome:
    stop: str
    text: str = ""
    error: str | None = None
    ended: str | None = None


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """Everything one request did, as recorded."""

    id: str
    started: str
    request: str
    workspace: str | None = None
    agent: str | None = None
    mode: str = "openclaw"
    model: str | None = None
    conversation: str | None = None
    #: Folders of the skills the session used, by name (for replay and fingerprints).
    skills: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    steps: tuple[Step, ...] = ()
    tools: tuple[ToolEntry, ...] = ()
    outcome: Outcome | None = None
    feedback: str | None = None
    #: The file it was read from, when it was.
    path: Path | None = field(default=None, compare=False)

    @property
    def stop(self) -> str:
        return self.outcome.stop if self.outcome is not None else "interrupted"

    @property
    def skills_read(self) -> tuple[str, ...]:
        """Skills whose ``SKILL.md`` the model read, in first-read order."""
        names = (
            t.skill
            for t in self.tools
            if t.name == "read" and t.ok and t.skill and (t.path or "").endswith("SKILL.md")
        )
        return tuple(dict.fromkeys(n for n in names if n))

    @property
    def skills_used(self) -> tuple[str, ...]:
        """Skills read or run as, in first-use order."""
        return tuple(dict.fromkeys(t.skill for t in self.tools if t.skill and t.ok))

    def with_feedback(self, verdict: str) -> SessionRecord:
        return replace(self, feedback=verdict)

    # ------------------------------------------------------------------ JSON Lines

    def to_lines(self, at: str | None = None) -> list[dict[str, Any]]:
        lines: list[dict[str, Any]] = [
            {
                "type": "session",
                "version": FORMAT_VERSION,
                **self._head(),
            },
            {"type": "request", "text": self.request},
        ]
        placed: set[str] = set()
        by_id = {t.call_id: t for t in self.tools}
        for step in self.steps:
            lines.append(
                {"type": "step", "n": step.n, "text": step.text, "calls": list(step.calls)}
            )
            for call in step.calls:
                if call in by_id and call not in placed:
                    placed.add(call)
                    lines += _tool_lines(by_id[call])
        for tool in self.tools:
            if tool.call_id not in placed:
                lines += _tool_lines(tool)
        if self.outcome is not None:
            o = self.outcome
            lines.append(
                {
                    "type": "outcome",
                    "stop": o.stop,
                    "text": o.text,
                    "error": o.error,
                    "ended": o.ended,
                    "skillsRead": list(self.skills_read),
                }
            )
        if self.feedback is not None:
            lines.append({"type": "feedback", "verdict": self.feedback, "at": at})
        return lines

    def _head(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "started": self.started,
            "workspace": self.workspace,
            "agent": self.agent,
            "mode": self.mode,
            "model": self.model,
            "conversation": self.conversation,
            "skills": dict(self.skills),
        }

    def to_jsonl(self) -> str:
        return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in self.to_lines())

    @classmethod
    def from_lines(
        cls, lines: Iterable[Mapping[str, Any]], path: Path | None = None
    ) -> SessionRecord:
        head: Mapping[str, Any] = {}
        request = ""
        steps: list[Step] = []
        tools: list[ToolEntry] = []
        approvals: dict[str, bool] = {}
        outcome: Outcome | None = None
        feedback: str | None = None
        for line in lines:
            kind = line.get("type")
            if kind == "session":
                head = line
            elif kind == "request":
                request = str(line.get("text", ""))
            elif kind == "step":
                calls = tuple(str(c) for c in _list(line.get("calls")))
                steps.append(Step(_int(line.get("n")), str(line.get("text", "")), calls))
            elif kind == "approval":
                approvals[str(line.get("call", ""))] = bool(line.get("approved"))
            elif kind == "tool":
                tools.append(ToolEntry.from_json(line))
            elif kind == "outcome":
                stop = line.get("stop")
                outcome = Outcome(
                    stop=stop if stop in STOPS else "error",
                    text=str(line.get("text") or ""),
                    error=_str_or_none(line.get("error")),
                    ended=_str_or_none(line.get("ended")),
                )
            elif kind == "feedback" and line.get("verdict") in ("good", "bad"):
                feedback = str(line["verdict"])
        tools = [
            replace(t, approved=approvals[t.call_id]) if t.call_id in approvals else t
            for t in tools
        ]
        skills = head.get("skills")
        return cls(
            id=str(head.get("id") or (path.stem if path is not None else "")),
            started=str(head.get("started") or ""),
            request=request,
            workspace=_str_or_none(head.get("workspace")),
            agent=_str_or_none(head.get("agent")),
            mode=str(head.get("mode") or "openclaw"),
            model=_str_or_none(head.get("model")),
            conversation=_str_or_none(head.get("conversation")),
            skills=MappingProxyType({str(k): str(v) for k, v in skills.items()})
            if isinstance(skills, Mapping)
            else _EMPTY,
            steps=tuple(steps),
            tools=tuple(tools),
            outcome=outcome,
            feedback=feedback,
            path=path,
        )

    @classmethod
    def from_jsonl(cls, text: str, path: Path | None = None) -> SessionRecord:
        return cls.from_lines(_parse_lines(text), path)

    def to_json(self) -> dict[str, Any]:
        """The whole session as one object (``sessions show --json``)."""
        return {
            **self._head(),
            "request": self.request,
            "skillsRead": list(self.skills_read),
            "steps": [{"n": s.n, "text": s.text, "calls": list(s.calls)} for s in self.steps],
            "tools": [
                {k: v for k, v in t.to_json().items() if k != "type"} | {"approved": t.approved}
                for t in self.tools
            ],
            "stop": self.stop,
            "outcome": None
            if self.outcome is None
            else {
                "stop": self.outcome.stop,
                "text": self.outcome.text,
                "error": self.outcome.error,
                "ended": self.outcome.ended,
            },
            "feedback": self.feedback,
            "path": str(self.path) if self.path is not None else None,
        }


def _tool_lines(tool: ToolEntry) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if tool.approved is not None:
        out.append({"type": "approval", "call": tool.call_id, "approved": tool.approved})
    out.append(tool.to_json())
    return out


def _parse_lines(text: str) -> list[Mapping[str, Any]]:
    found: list[Mapping[str, Any]] = []
    for raw in text.splitlines():
        try:
            value = json.loads(raw)
        except ValueError:
            continue  # a damaged or cut line: skip it, keep the rest
        if isinstance(value, dict):
            found.append(value)
    return found


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
