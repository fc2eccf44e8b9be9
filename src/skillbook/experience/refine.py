"""A draft's words written by a model: name, description, what each step is for, checks.

Input: a :class:`~skillbook.experience.draft.Draft` (built from the redacted session) and
a :class:`~skillbook.runtime.providers.ChatModel` (the run's own model: on by default
when one is configured, ``skills.experience.refine``, ``--refine/--no-refine``). Output:
a :class:`Refinement` with the refined draft, or the template draft and the reason when
the model failed or answered something unusable.

The model sees the recorded trace: the request, the parameters, each step (its command,
the skill it ran as, the first line it printed), the checks and the pitfalls. It answers
JSON with ``slug``, ``title``, ``description``, ``triggers`` (how a user asks for it),
one ``notes`` sentence per step and ``checks`` (how to tell success from failure). Only
those texts change: the commands, parameters, fingerprint and files read are the
draft's own, whatever the model says. The answer is refused, and the template kept, when:

* the slug breaks the name rules, or the title is empty or too long;
* the description does not say when to use the skill, has no trigger phrase, or is over
  1024 characters;
* there is not one note per step, or a note only repeats its command;
* there is no check;
* the refined skill file gets a security finding (low or worse) the template's has not.

Every known secret is redacted from what is sent (``redactor``) and from the answer.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

from skillbook.experience.draft import Draft, yaml_safe
from skillbook.experience.procedure import ProcedureStep
from skillbook.experience.redaction import Redactor
from skillbook.runtime import ModelNotConfigured
from skillbook.runtime.providers.base import ChatModel, Message, ModelEvent, TextDelta

if TYPE_CHECKING:
    from skillbook.runtime.tools import Tool

__all__ = [
    "MISSING_MODEL",
    "REFINE_INSTRUCTIONS",
    "Refinement",
    "refine_draft",
    "refine_model",
    "refine_prompt",
]

REFINE_INSTRUCTIONS: Final = (
    "You write the words of a skill that was learned from a successful agent run, so that "
    "a person would keep it and a model would know when and how to use it. You get the "
    "recorded trace as JSON. Reply with one JSON object and nothing else: "
    '{"slug": "kebab-case-name-of-at-most-5-words", "title": "short imperative title", '
    '"description": "what the skill does and, starting with \'Use when\', when to use it '
    '(at most 300 characters)", '
    '"triggers": ["2 to 5 short phrases a user would type to ask for this task"], '
    '"notes": ["one sentence per step, in order, saying what the step is for"], '
    '"checks": ["1 to 4 sentences: how to tell that it worked, and what failure looks '
    'like"]}. Use ${name} for the parameters. Never change, add or remove commands: they '
    "are kept exactly as they ran."
)
_SLUG: Final = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
#: A description says when to use the skill (the promotion gate's test, and "use for").
_WHEN: Final = re.compile(
    r"\b(?:use (?:it |this )?(?:when|for|to|if)|when (?:the user|asked|you))\b", re.I
)
MAX_SLUG_CHARS: Final = 40
MAX_TITLE_CHARS: Final = 120
MAX_DESCRIPTION_CHARS: Final = 1024
MAX_TRIGGERS: Final = 6
MAX_TRIGGER_CHARS: Final = 100
MAX_NOTE_CHARS: Final = 300
MAX_CHECKS: Final = 6
#: Characters of a step's output shown to the model (the first line, as in the checks).
MAX_OUTPUT_CHARS: Final = 160
#: Scanner findings the model's words add refuse them, down to low: a frontmatter value is
#: quoted, and the scanner lowers what is quoted (an example of the phrasing).
_SCAN_SEVERITIES: Final = frozenset({"critical", "high", "medium", "low"})


@dataclass(frozen=True, slots=True)
class Refinement:
    draft: Draft
    #: Why the draft was kept unrefined, or None when it was refined.
    error: str | None = None


class _MissingModel:
    """Stands for "no model configured" where ``refine: always`` (or ``--refine``) wants
    one: asking it fails, so the template draft records why (``experience.refine-failed``)."""

    @property
    def name(self) -> str:
        return "(none)"

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[Tool], system: str
    ) -> AsyncIterator[ModelEvent]:
        raise ModelNotConfigured(
            "no model is configured to write the draft's words; set SKILLBOOK_MODEL and "
            "SKILLBOOK_BASE_URL (or pass --model), or set skills.experience.refine to auto"
        )
        yield  # an async generator, like every model's stream


#: The model asked when ``refine: always`` or ``--refine`` wants one and none is configured.
MISSING_MODEL: Final[ChatModel] = _MissingModel()


def refine_model(
    setting: str, model: ChatModel | None, flag: bool | None = None
) -> ChatModel | None:
    """The model a new draft's words are asked of, or None for the template.

    ``setting`` is ``skills.experience.refine``: ``auto`` (the run's model when there is
    one), ``always`` (the same, and without one the draft says why) or ``never``.
    ``flag`` is ``--refine`` (True) or ``--no-refine`` (False), which win for one call."""
    if flag is False or (flag is None and setting == "never"):
        return None
    if model is not None:
        return model
    return MISSING_MODEL if flag or setting == "always" else None


def refine_prompt(draft: Draft, redactor: Redactor | None = None) -> str:
    """What the model is sent: the recorded trace of the draft, secrets redacted."""
    trace = {
        "request": draft.request,
        "parameters": [{"name": p.name, "kind": p.kind, "value": p.value} for p in draft.params],
        "skillsUsed": list(draft.skills_used),
        "steps": [_step_trace(n, s) for n, s in enumerate(draft.steps, 1)],
        "checks": list(draft.checks),
        "pitfalls": [
            {"attempt": p.attempt, "error": p.error, "fixedBy": p.fixed_by} for p in draft.pitfalls
        ],
        "current": {"slug": draft.slug, "title": draft.title, "description": draft.description},
    }
    text = json.dumps(trace, ensure_ascii=False, indent=2)
    return redactor.text(text) if redactor is not None else text


def _step_trace(number: int, step: ProcedureStep) -> dict[str, Any]:
    out: dict[str, Any] = {"n": number, "tool": step.tool}
    if step.skill:
        out["skill"] = step.skill
    if step.command is not None:
        out["command"] = step.command
    elif step.path is not None:
        out["path"] = step.path
    else:
        out["arguments"] = dict(step.arguments)
    if step.output:
        out["printed"] = step.output[:MAX_OUTPUT_CHARS]
    return out


async def refine_draft(
    draft: Draft, model: ChatModel, *, redactor: Redactor | None = None
) -> Refinement:
    """Ask ``model`` for the draft's words; never raises for a failing or confused model."""
    prompt = refine_prompt(draft, redactor)
    try:
        parts: list[str] = []
        async for event in model.stream((Message.user(prompt),), (), REFINE_INSTRUCTIONS):
            if isinstance(event, TextDelta):
                parts.append(event.text)
    except Exception as exc:  # a model failure keeps the template draft
        return Refinement(draft, f"the model request failed: {type(exc).__name__}: {exc}")
    answer = "".join(parts)
    if redactor is not None:
        # A model may know a secret from elsewhere; it never reaches a file.
        answer = redactor.text(answer)
    try:
        refined = _apply(draft, _parse(answer))
        _scan(draft, refined)
    except ValueError as exc:
        return Refinement(draft, str(exc))
    return Refinement(refined)


def _parse(text: str) -> dict[str, Any]:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("the model did not answer with a JSON object")
    try:
        value = json.loads(text[start : end + 1])
    except json.JSONDecodeError as exc:
        raise ValueError(f"the model's answer is not valid JSON ({exc.msg})") from None
    if not isinstance(value, dict):
        raise ValueError("the model's answer is not a JSON object")
    return value


#: A fence opener (three backticks or tildes) in a sentence would swallow the Markdown
#: after it, hiding steps from a reviewer: such runs become one quote.
_FENCE: Final = re.compile(r"`{3,}|~{3,}")


def _flat(value: object) -> str:
    """One line of text: no "---" (it would end the frontmatter), no fence opener."""
    text = str(value) if isinstance(value, str | int | float) else ""
    return _FENCE.sub("'", yaml_safe(text))


def _strings(answer: dict[str, Any], key: str) -> list[str]:
    value = answer.get(key)
    if not isinstance(value, list):
        return []
    return [t for t in (_flat(v) for v in value) if t]


def _apply(draft: Draft, answer: dict[str, Any]) -> Draft:
    slug = _flat(answer.get("slug")).lower()
    if not _SLUG.match(slug) or len(slug) > MAX_SLUG_CHARS:
        raise ValueError(f"the model's slug {slug!r} breaks the name rules")
    title = _flat(answer.get("title"))
    if not title or len(title) > MAX_TITLE_CHARS:
        raise ValueError("the model's title is empty or too long")
    description = _flat(answer.get("description"))
    if not description or not _WHEN.search(description):
        raise ValueError("the model's description is empty or does not say when to use the skill")
    triggers = [t for t in _strings(answer, "triggers") if len(t) <= MAX_TRIGGER_CHARS]
    if not triggers:
        raise ValueError("the model gave no trigger phrase (how a user asks for the task)")
    described = description.lower()
    missing = [t for t in dict.fromkeys(triggers[:MAX_TRIGGERS]) if t.lower() not in described]
    if missing:
        quoted = ", ".join('"' + t.replace('"', "'") + '"' for t in missing)
        description = f"{description.rstrip()} Trigger phrases: {quoted}."
    if len(description) > MAX_DESCRIPTION_CHARS:
        raise ValueError(f"the model's description is over {MAX_DESCRIPTION_CHARS} characters")
    steps = _noted(draft.steps, _strings(answer, "notes"))
    checks = [c[:MAX_NOTE_CHARS] for c in _strings(answer, "checks")][:MAX_CHECKS]
    if not checks:
        raise ValueError("the model gave no check that tells success from failure")
    stamp = draft.id[:15]
    return replace(
        draft,
        id=f"{stamp}-{slug}",
        slug=slug,
        title=title,
        description=description,
        steps=steps,
        # The model's checks say what to look for; the run's own evidence follows them.
        checks=tuple(dict.fromkeys((*checks, *draft.checks))),
        refined=True,
        refine_error=None,
    )


def _noted(steps: tuple[ProcedureStep, ...], notes: list[str]) -> tuple[ProcedureStep, ...]:
    if len(notes) != len(steps):
        raise ValueError(
            f"the model gave {len(notes)} step note(s) for {len(steps)} step(s); "
            "each step needs one saying what it is for"
        )
    out = []
    for number, (step, note) in enumerate(zip(steps, notes, strict=True), 1):
        said = note.strip("` .").strip()
        if len(re.findall(r"[A-Za-z]{2,}", note)) < 2 or said in (step.command, step.raw):
            raise ValueError(f"the model's note for step {number} does not say what it is for")
        out.append(replace(step, note=note[:MAX_NOTE_CHARS]))
    return tuple(out)


def _scan(before: Draft, after: Draft) -> None:
    """Refuse words that make the skill file look hostile to the security scanner."""
    from skillbook.experience.skill_file import render_skill
    from skillbook.security.scanner import analyze

    def findings(draft: Draft) -> Counter[str]:
        found = analyze(render_skill(draft), "SKILL.md")
        return Counter(f.rule for f in found if str(f.severity) in _SCAN_SEVERITIES)

    added = findings(after) - findings(before)
    if added:
        raise ValueError(
            "the model's words raise security findings the template has not: "
            + ", ".join(sorted(added))
        )
