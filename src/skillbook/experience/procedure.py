"""A procedure reconstructed from a session's steps: what was run, in order.

Input: a successful :class:`~skillbook.experience.record.SessionRecord`. Output: a
:class:`Procedure`: the steps that worked (commands with the run's varying values as
``${name}`` parameters), the checks that showed success, the pitfalls (attempts that
failed or were refused before something else worked), the tool hints, and the
behaviour fingerprint (:mod:`skillbook.experience.behaviour`). Nothing here does I/O.

Calls that only looked for a skill (:data:`LOOKUP_TOOLS`: selection's ``find_skills``)
stay in the session but are not part of the procedure: the learned skill is what such
a call finds, and the same task run with selection on or off is the same behaviour.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from skillbook.experience._markdown import code_span
from skillbook.experience.behaviour import MAX_STEPS, behavior_fingerprint, normalise_step
from skillbook.experience.params import Parameter, extract_parameters, substitute
from skillbook.experience.record import SessionRecord, ToolEntry

__all__ = ["LOOKUP_TOOLS", "Pitfall", "Procedure", "ProcedureStep", "reconstruct"]

#: Characters of a tool's output kept as evidence in checks and pitfalls.
EVIDENCE_CHARS: Final = 160
#: Tools that look skills up rather than act (``skillbook.runtime.find_skills.FindSkillsTool``;
#: named here so that learning never imports selection).
LOOKUP_TOOLS: Final = frozenset({"find_skills"})
_EMPTY: Final[Mapping[str, Any]] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class ProcedureStep:
    """One step that worked. ``command`` is the command with ``${name}`` parameters."""

    tool: str
    skill: str | None = None
    command: str | None = None
    #: The command exactly as it ran (secrets redacted).
    raw: str | None = None
    path: str | None = None
    arguments: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    cwd: str | None = None
    #: The shell ``exec`` ran the command under; None: a draft from before it was kept.
    shell: str | None = None
    env: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    secret_env: tuple[str, ...] = ()
    output: str = ""
    hints: tuple[Mapping[str, Any], ...] = ()
    #: A sentence saying what the step does (written by ``--refine``).
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "skill": self.skill,
            "command": self.command,
            "raw": self.raw,
            "path": self.path,
            "arguments": dict(self.arguments),
            "cwd": self.cwd,
            "shell": self.shell,
            "env": dict(self.env),
            "secretEnv": list(self.secret_env),
            "output": self.output,
            "hints": [dict(h) for h in self.hints],
            "note": self.note,
        }

    @classmethod
    def from_json(cls, v: Mapping[str, Any]) -> ProcedureStep:
        def text(key: str) -> str | None:
            value = v.get(key)
            return value if isinstance(value, str) else None

        args, env = v.get("arguments"), v.get("env")
        return cls(
            tool=str(v.get("tool", "")),
            skill=text("skill"),
            command=text("command"),
            raw=text("raw"),
            path=text("path"),
            arguments=MappingProxyType(dict(args)) if isinstance(args, Mapping) else _EMPTY,
            cwd=text("cwd"),
            shell=text("shell"),
            env=MappingProxyType({str(k): str(x) for k, x in env.items()})
            if isinstance(env, Mapping)
            else _EMPTY,
            secret_env=tuple(str(x) for x in v.get("secretEnv") or ()),
            output=str(v.get("output") or ""),
            hints=tuple(
                MappingProxyType(dict(h)) for h in v.get("hints") or () if isinstance(h, Mapping)
            ),
            note=str(v.get("note") or ""),
        )


@dataclass(frozen=True, slots=True)
class Pitfall:
    """An attempt that failed (or was refused) before the run found what worked."""

    tool: str
    attempt: str
    error: str
    fixed_by: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "attempt": self.attempt,
            "error": self.error,
            "fixedBy": self.fixed_by,
        }

    @classmethod
    def from_json(cls, v: Mapping[str, Any]) -> Pitfall:
        fixed = v.get("fixedBy")
        return cls(
            str(v.get("tool", "")),
            str(v.get("attempt", "")),
            str(v.get("error", "")),
            fixed if isinstance(fixed, str) else None,
        )


@dataclass(frozen=True, slots=True)
class Procedure:
    steps: tuple[ProcedureStep, ...]
    params: tuple[Parameter, ...]
    checks: tuple[str, ...]
    pitfalls: tuple[Pitfall, ...]
    #: The normalised steps the fingerprint hashes (kept for near-duplicate checks).
    normalised: tuple[str, ...]
    fingerprint: str
    skills_used: tuple[str, ...]


def reconstruct(
    record: SessionRecord, *, home: str | None = None, tmpdir: str | None = None
) -> Procedure:
    """The procedure of ``record`` (see the module docstring)."""
    tools = tuple(t for t in record.tools if t.name not in LOOKUP_TOOLS)
    ok = [t for t in tools if t.ok]
    commands = [t.command for t in ok if t.command is not None]
    params = extract_parameters(record.request, commands)
    steps: list[ProcedureStep] = []
    normalised: list[str] = []
    for entry in ok:
        line = normalise_step(
            entry.name,
            entry.arguments,
            skill=entry.skill,
            params=params,
            skills=record.skills,
            home=home,
            tmpdir=tmpdir,
        )
        if normalised and normalised[-1] == line:
            continue  # the same step again (a re-read): once is enough
        normalised.append(line)
        steps.append(_step(entry, params))
    return Procedure(
        steps=tuple(steps),
        params=params,
        checks=_checks(record, steps),
        pitfalls=_pitfalls(tools),
        normalised=tuple(normalised[:MAX_STEPS]),
        fingerprint=behavior_fingerprint(normalised),
        skills_used=record.skills_used,
    )


def _step(entry: ToolEntry, params: tuple[Parameter, ...]) -> ProcedureStep:
    command = entry.command
    return ProcedureStep(
        tool=entry.name,
        skill=entry.skill,
        command=substitute(command, params) if command is not None else None,
        raw=command,
        path=entry.path,
        arguments=entry.arguments,
        cwd=entry.cwd,
        shell=entry.shell,
        env=entry.env,
        secret_env=entry.secret_env,
        output=_evidence(entry.result),
        hints=entry.hints,
    )


def _checks(record: SessionRecord, steps: list[ProcedureStep]) -> tuple[str, ...]:
    checks: list[str] = []
    runs = [s for s in steps if s.tool == "exec"]
    if runs:
        checks.append(f"Each of the {len(runs)} command(s) exits with status 0.")
        last = runs[-1]
        if last.output and last.output != "(no output)":
            checks.append(f"The last command prints {code_span(last.output)}.")
    others = [s for s in steps if s.tool not in ("exec", "read")]
    for step in others:
        checks.append(f"`{step.tool}` succeeds.")
    answer = _evidence(record.outcome.text if record.outcome is not None else "")
    if answer:
        checks.append(f"The answer reported: {answer}")
    return tuple(checks)


def _pitfalls(tools: tuple[ToolEntry, ...]) -> tuple[Pitfall, ...]:
    found: list[Pitfall] = []
    for index, entry in enumerate(tools):
        if entry.ok:
            continue
        later = next((t for t in tools[index + 1 :] if t.ok and t.name == entry.name), None)
        if later is None:
            continue  # not retried: nothing was learned from it
        attempt = entry.command or entry.path or str(dict(entry.arguments))
        error = ("refused: " if entry.declined else "") + _evidence(entry.result)
        fixed = later.command or later.path
        found.append(Pitfall(entry.name, attempt, error, fixed))
    return tuple(found)


def _evidence(text: str) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= EVIDENCE_CHARS else line[: EVIDENCE_CHARS - 1] + "…"
