"""A draft skill built from a successful session.

Input: a :class:`~skillbook.experience.record.SessionRecord` and its
:class:`~skillbook.experience.procedure.Procedure`. Output: a :class:`Draft`, kept as
``draft.json`` in the review queue; :mod:`skillbook.experience.skill_file` writes its
skill file.

The file is a skill in the active spec mode's layout: a folder with ``SKILL.md``
(``openclaw``, ``strict``) or a standalone ``<name>.md`` (``mixed``, ``legacy``). Its
frontmatter passes skills-ref's validator in every mode: ``name`` (the task's slug,
``count-words``, or the name chosen at promotion: what the model and the slash command
show), while the file or folder keeps the id ``<timestamp>-<slug>``; a ``description`` that says when to
use it, and ``metadata`` (strings only) with ``source_session``, ``behavior_fingerprint``,
``created``, ``skills_used``, ``run_count`` and, for a risky run, ``risk``. The body holds
the parameters, the procedure, the checks that showed success, the pitfalls seen and
the tools' hints, and a warning when the run touched user data unapproved.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Final

from skillbook.config.mode import Mode
from skillbook.experience._words import STOPWORDS, when_to_use
from skillbook.experience.params import Parameter
from skillbook.experience.procedure import Pitfall, Procedure, ProcedureStep
from skillbook.experience.record import SessionRecord, iso
from skillbook.experience.risk import RiskFinding

__all__ = [
    "ENV_NAME",
    "Draft",
    "NearDuplicate",
    "RefineTarget",
    "build_draft",
    "draft_slug",
    "request_template",
    "yaml_safe",
]

#: Words of the request kept in the slug.
SLUG_WORDS: Final = 5
SLUG_MAX_CHARS: Final = 40
TITLE_MAX_CHARS: Final = 90
_WORDS: Final = re.compile(r"[a-z0-9]+")
_STAMP_FORMAT: Final = "%Y%m%d-%H%M%S"
#: A variable name the shell takes as is; others (from a hand-edited config) are left out.
ENV_NAME: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True, slots=True)
class NearDuplicate:
    """A draft or skill this draft resembles: ``kind`` is ``steps`` or ``description``."""

    kind: str
    of: str
    similarity: float
    path: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "of": self.of, "similarity": self.similarity, "path": self.path}

    @classmethod
    def from_json(cls, v: Mapping[str, Any]) -> NearDuplicate:
        path = v.get("path")
        return cls(
            str(v.get("kind", "")),
            str(v.get("of", "")),
            float(v.get("similarity") or 0.0),
            path if isinstance(path, str) else None,
        )


@dataclass(frozen=True, slots=True)
class RefineTarget:
    """The skill a *refine* draft changes (:mod:`skillbook.experience.follow` found it).

    ``path`` is its ``SKILL.md``; ``source`` the discovery source label
    (``openclaw-workspace``, ``openclaw-bundled`` …); ``followed`` how the run followed
    it (``read``, ``exec``, ``slash``); ``changes`` what the run did otherwise, one
    sentence each (other arguments, an extra step, a step left out, a mistake fixed).
    """

    name: str
    path: str
    source: str
    followed: tuple[str, ...] = ()
    changes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": self.path,
            "source": self.source,
            "followed": list(self.followed),
            "changes": list(self.changes),
        }

    @classmethod
    def from_json(cls, v: Mapping[str, Any]) -> RefineTarget:
        return cls(
            str(v.get("name", "")),
            str(v.get("path", "")),
            str(v.get("source", "")),
            tuple(str(x) for x in v.get("followed") or ()),
            tuple(str(x) for x in v.get("changes") or ()),
        )


@dataclass(frozen=True, slots=True)
class Draft:
    """A learned skill waiting for review (or decided: ``status``)."""

    id: str
    slug: str
    title: str
    description: str
    mode: str
    fingerprint: str
    source_session: str
    created: str
    request: str
    sessions: tuple[str, ...] = ()
    last_seen: str = ""
    run_count: int = 1
    skills_used: tuple[str, ...] = ()
    params: tuple[Parameter, ...] = ()
    #: The parameter values of each run (newest last).
    examples: tuple[Mapping[str, str], ...] = ()
    steps: tuple[ProcedureStep, ...] = ()
    checks: tuple[str, ...] = ()
    pitfalls: tuple[Pitfall, ...] = ()
    normalised: tuple[str, ...] = ()
    risks: tuple[RiskFinding, ...] = ()
    near_duplicates: tuple[NearDuplicate, ...] = ()
    refined: bool = False
    refine_error: str | None = None
    #: ``pending``, ``promoted`` or ``rejected``.
    status: str = "pending"
    decided: str | None = None
    promoted_to: str | None = None
    rejected_reason: str | None = None
    #: The workspace the run happened in: the replay helper finds its folders relative to
    #: its own location instead (``None`` for drafts from before it was recorded).
    workspace: str | None = None
    #: The name chosen at promotion (``drafts promote --name``); empty: the slug.
    skill_name: str = ""
    #: The skill a refine draft changes; None: a new skill (``kind`` ``new``).
    target: RefineTarget | None = None
    #: The ``skills.entries`` key of the skill whose config gave the commands their
    #: secret variables (``exec`` ran them as that skill), and that skill's ``primaryEnv``
    #: when it is one of them: the learned skill shares that entry (``skillKey``), so it
    #: is ready, and ``exec`` gives it the secrets, exactly when that skill's are set.
    #: Empty: no secret, or several skills gave them (then only ``requires.env``).
    env_skill_key: str = ""
    env_primary: str = ""

    @property
    def kind(self) -> str:
        """``new`` (a skill of its own) or ``refine`` (a change to :attr:`target`)."""
        return "new" if self.target is None else "refine"

    @property
    def name(self) -> str:
        """The skill's name (frontmatter, slash command): short, without the timestamp."""
        return self.skill_name or self.slug or self.id

    @property
    def standalone(self) -> bool:
        """A ``<name>.md`` file (mixed, legacy) rather than a folder with ``SKILL.md``."""
        return Mode.of(self.mode).loads_standalone

    @property
    def skill_filename(self) -> str:
        return f"{self.id}.md" if self.standalone else "SKILL.md"

    @property
    def replay_filename(self) -> str:
        return f"{self.id}.sh"

    @property
    def commands(self) -> tuple[ProcedureStep, ...]:
        return tuple(s for s in self.steps if s.tool == "exec" and s.command is not None)

    @property
    def needs_env(self) -> tuple[str, ...]:
        """The secret variables the commands had, in order (names only: the values are
        never kept): the skill file declares them (``requires.env``), the replay helper
        asks for them."""
        return tuple(
            dict.fromkeys(n for s in self.commands for n in s.secret_env if ENV_NAME.match(n))
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "slug": self.slug,
            "title": self.title,
            "description": self.description,
            "mode": self.mode,
            "behaviorFingerprint": self.fingerprint,
            "sourceSession": self.source_session,
            "sessions": list(self.sessions),
            "created": self.created,
            "lastSeen": self.last_seen,
            "runCount": self.run_count,
            "request": self.request,
            "skillsUsed": list(self.skills_used),
            "params": [p.to_json() for p in self.params],
            "examples": [dict(e) for e in self.examples],
            "steps": [s.to_json() for s in self.steps],
            "checks": list(self.checks),
            "pitfalls": [p.to_json() for p in self.pitfalls],
            "normalised": list(self.normalised),
            "risks": [r.to_json() for r in self.risks],
            "nearDuplicates": [d.to_json() for d in self.near_duplicates],
            "refined": self.refined,
            "refineError": self.refine_error,
            "status": self.status,
            "decided": self.decided,
            "promotedTo": self.promoted_to,
            "rejectedReason": self.rejected_reason,
            "workspace": self.workspace,
            "skillName": self.skill_name,
            "kind": self.kind,
            "envSkillKey": self.env_skill_key,
            "envPrimary": self.env_primary,
            **(
                {"skill": self.target.name, "target": self.target.to_json()}
                if self.target is not None
                else {}
            ),
        }

    @classmethod
    def from_json(cls, v: Mapping[str, Any]) -> Draft:
        def strs(key: str) -> tuple[str, ...]:
            return tuple(str(x) for x in v.get(key) or ())

        def opt(key: str) -> str | None:
            value = v.get(key)
            return value if isinstance(value, str) else None

        return cls(
            id=str(v["id"]),
            slug=str(v.get("slug", "")),
            title=str(v.get("title", "")),
            description=str(v.get("description", "")),
            mode=str(v.get("mode", Mode.OPENCLAW)),
            fingerprint=str(v.get("behaviorFingerprint", "")),
            source_session=str(v.get("sourceSession", "")),
            created=str(v.get("created", "")),
            request=str(v.get("request", "")),
            sessions=strs("sessions"),
            last_seen=str(v.get("lastSeen", "")),
            run_count=int(v.get("runCount") or 1),
            skills_used=strs("skillsUsed"),
            params=tuple(
                Parameter(str(p.get("name")), str(p.get("value")), str(p.get("kind")))
                for p in v.get("params") or ()
            ),
            examples=tuple({str(k): str(x) for k, x in e.items()} for e in v.get("examples") or ()),
            steps=tuple(ProcedureStep.from_json(s) for s in v.get("steps") or ()),
            checks=strs("checks"),
            pitfalls=tuple(Pitfall.from_json(p) for p in v.get("pitfalls") or ()),
            normalised=strs("normalised"),
            risks=tuple(RiskFinding.from_json(r) for r in v.get("risks") or ()),
            near_duplicates=tuple(
                NearDuplicate.from_json(d) for d in v.get("nearDuplicates") or ()
            ),
            refined=bool(v.get("refined")),
            refine_error=opt("refineError"),
            status=str(v.get("status", "pending")),
            decided=opt("decided"),
            promoted_to=opt("promotedTo"),
            rejected_reason=opt("rejectedReason"),
            workspace=opt("workspace"),
            skill_name=opt("skillName") or "",
            env_skill_key=opt("envSkillKey") or "",
            env_primary=opt("envPrimary") or "",
            target=RefineTarget.from_json(target)
            if isinstance(target := v.get("target"), Mapping) and target.get("name")
            else None,
        )

    def seen_again(self, record: SessionRecord, procedure: Procedure) -> Draft:
        """This draft after another run with the same fingerprint (new example values)."""
        example = {p.name: p.value for p in procedure.params}
        examples = self.examples if example in self.examples else (*self.examples, example)
        return replace(
            self,
            run_count=self.run_count + 1,
            last_seen=record.outcome.ended
            if record.outcome and record.outcome.ended
            else record.started,
            sessions=(*self.sessions, record.id),
            examples=examples,
        )


def build_draft(
    record: SessionRecord,
    procedure: Procedure,
    *,
    mode: Mode | str,
    now: datetime,
    risks: Sequence[RiskFinding] = (),
) -> Draft:
    """A new draft from a successful session (the module docstring has the layout)."""
    slug = draft_slug(record.request, procedure.params)
    template = request_template(record.request, procedure.params)
    title = _first_sentence(template)
    return Draft(
        id=f"{now.strftime(_STAMP_FORMAT)}-{slug}",
        slug=slug,
        title=title,
        description=_description(record.request, procedure),
        mode=str(Mode.of(mode)),
        fingerprint=procedure.fingerprint,
        source_session=record.id,
        created=iso(now),
        request=record.request,
        sessions=(record.id,),
        last_seen=iso(now),
        skills_used=procedure.skills_used,
        params=procedure.params,
        examples=({p.name: p.value for p in procedure.params},) if procedure.params else (),
        steps=procedure.steps,
        checks=procedure.checks,
        pitfalls=procedure.pitfalls,
        normalised=procedure.normalised,
        risks=tuple(risks),
        workspace=record.workspace,
    )


def request_template(request: str, params: Sequence[Parameter]) -> str:
    """The request with each parameter value shown as ``{name}``."""
    out = " ".join(request.split())
    for param in sorted(params, key=lambda p: len(p.value), reverse=True):
        out = out.replace(param.value, "{" + param.name + "}")
    return out


def draft_slug(request: str, params: Sequence[Parameter] = ()) -> str:
    """Up to five telling words of the request, kebab-case: ``count-words-notes``."""
    text = request.lower()
    for param in params:
        text = text.replace(param.value.lower(), " ")
    words = [w for w in _WORDS.findall(text) if w not in STOPWORDS and not w.isdigit()]
    slug = "-".join(words[:SLUG_WORDS])[:SLUG_MAX_CHARS].strip("-")
    return re.sub(r"-{2,}", "-", slug) or "task"


def _first_sentence(text: str) -> str:
    head = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0].rstrip(" .!?")
    head = head[:1].upper() + head[1:]
    return head if len(head) <= TITLE_MAX_CHARS else head[: TITLE_MAX_CHARS - 1] + "…"


def _description(request: str, procedure: Procedure) -> str:
    """The template's description: when to use it, in the request's words (the
    parameters as ``FILE``, ``TOP``), then what it runs. A model rewrites it
    (:mod:`skillbook.experience.refine`) when there is one."""
    tools = []
    for step in procedure.steps:
        if step.tool == "exec" and step.raw:
            word = step.raw.split()[0] if step.raw.split() else step.raw
            tools.append(f"`{word}`")
        elif step.tool not in ("read", "exec"):
            tools.append(f"`{step.tool}`")
    via = ", ".join(dict.fromkeys(tools)) or "the tools it used"
    skills = (
        f" with the {', '.join(procedure.skills_used)} skill(s)" if procedure.skills_used else ""
    )
    when = when_to_use(request, [(p.name, p.value) for p in procedure.params])
    return yaml_safe(f"{when} It runs {via}{skills}.")[:1024]


def yaml_safe(text: str) -> str:
    # skills-ref ends the frontmatter at any "---": never write one in a value.
    return re.sub(r"-{3,}", "—", " ".join(text.split()))
