"""A draft's skill file: the frontmatter and the Markdown body a person reviews.

Input: a :class:`~skillbook.experience.draft.Draft`. Output: the text of its
``SKILL.md`` (or ``<id>.md``), with frontmatter that passes strict validation and
skills-ref (the six standard keys; the rest under ``metadata`` as strings) and a body
with the parameters, the procedure, the checks, what the run touched, the pitfalls and
the tools' hints, and the risk warning when there is one. Nothing here does I/O.

Text from the run (commands, paths, outputs, values) never escapes its code span or
block: a fence is longer than any run of backticks inside it, every line of a command is
indented into its list item, and an inline span uses more backticks than its text holds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Final

from skillbook.experience._markdown import code_span, fence_for
from skillbook.experience.draft import Draft, yaml_safe
from skillbook.experience.hints import describe_hint
from skillbook.experience.procedure import ProcedureStep
from skillbook.experience.programs import programs_of
from skillbook.experience.replay import helper_path
from skillbook.experience.risk import RiskFinding

__all__ = ["render_skill"]


def render_skill(draft: Draft) -> str:
    """The skill file: frontmatter (strict- and skills-ref-valid) and the body."""
    meta = {
        "source_session": draft.source_session,
        "behavior_fingerprint": draft.fingerprint,
        "created": draft.created,
        "skills_used": ", ".join(draft.skills_used),
        "run_count": str(draft.run_count),
        "generated_by": "skillbook",
    }
    if draft.risks:
        meta["risk"] = ", ".join(dict.fromkeys(r.capability for r in draft.risks))
    lines = [
        "---",
        # Quoted: a slug such as 0e0 or 0x1f would read as a number.
        f"name: {_quote(draft.name)}",
        f"description: {_quote(draft.description)}",
        "metadata:",
        *(f"  {key}: {_quote(value)}" for key, value in meta.items()),
        *_gates(draft),
        "---",
        "",
        f"# {draft.title}",
        "",
    ]
    if draft.risks:
        lines += [_risk_warning(draft.risks), ""]
    runs = f"{draft.run_count} successful runs" if draft.run_count > 1 else "a successful run"
    lines += [
        f"Learned by skillbook from {runs} (session `{draft.source_session}`).",
        "",
        *_replay_lines(draft),
        "",
        f"Original request: {_inline(draft.request)}",
        "",
    ]
    if draft.params:
        lines += ["## Parameters", ""]
        for p in draft.params:
            seen = ", ".join(
                dict.fromkeys(code_span(e[p.name]) for e in draft.examples if p.name in e)
            )
            lines.append(
                f"- {code_span(p.name)} ({p.kind}): values seen {seen or code_span(p.value)}"
            )
        lines.append("")
    lines += ["## Procedure", ""]
    for number, step in enumerate(draft.steps, 1):
        lines += _render_step(number, step)
    lines.append("")
    if draft.checks:
        lines += ["## Checks", "", *(f"- {c}" for c in draft.checks), ""]
    touched = _touched(draft.steps)
    if touched:
        lines += ["## What the run touched", "", *touched, ""]
    if draft.pitfalls:
        lines += ["## Pitfalls", ""]
        for pit in draft.pitfalls:
            fix = f"; what worked: {code_span(pit.fixed_by)}" if pit.fixed_by else ""
            lines.append(f"- {code_span(pit.attempt)} failed ({_inline(pit.error)}){fix}")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def _gates(draft: Draft) -> list[str]:
    """``metadata.openclaw`` for a run whose commands had secret variables: the names
    (``requires.env``), so the catalog lists the skill as ready only when they can be
    had, and the config entry that has them (``skillKey``, ``primaryEnv``), so ``exec``
    gives them to the learned skill's commands as it gave them to the run's. A nested
    mapping: OpenClaw reads ``metadata`` as JSON, where ``openclaw`` must be an object
    (a JSON string there would be no gates at all)."""
    names = draft.needs_env
    if not names:
        return []
    out = ["  openclaw:"]
    if draft.env_skill_key:
        out.append(f"    skillKey: {_quote(draft.env_skill_key)}")
    if draft.env_primary:
        out.append(f"    primaryEnv: {_quote(draft.env_primary)}")
    out += ["    requires:", "      env:", *(f"        - {_quote(n)}" for n in names)]
    return out


def _replay_lines(draft: Draft) -> list[str]:
    """How to run the replay helper with the tools the model has: ``exec`` with this
    skill runs in its folder, where the helper's relative path resolves."""
    command = f"bash {helper_path(draft)}"
    out = [
        "## Replay",
        "",
        f"The helper runs the same commands. Run it with `exec`, passing skill "
        f"{code_span(draft.name)} (so it runs in this skill's folder):",
        "",
        "```sh",
        command + "".join(f" [{p.name}]" for p in draft.params),
        "```",
        "",
    ]
    if draft.params:
        out.append(
            "Give the parameters in this order; one left out takes the value of the run "
            "(see Parameters)."
        )
    else:
        out.append("It takes no arguments.")
    out.append(
        f"It finds the workspace from its own location (`scripts/auto/{draft.replay_filename}` "
        "in the workspace), so it works wherever the workspace is."
    )
    names = ", ".join(code_span(n) for n in draft.needs_env)
    if names and draft.env_skill_key:
        out.append(
            f"It needs {names}: `exec` with this skill sets it from the configuration of "
            f"the skill it was learned with ({code_span('skills.entries.' + draft.env_skill_key)}"
            "), never from this file."
        )
    elif names:
        out.append(f"It needs {names} in the environment; this file never holds the value.")
    return out


def _render_step(number: int, step: ProcedureStep) -> list[str]:
    """One numbered step. With a note (what the step is for, written by the model) the
    note leads and the command follows; without, the step says what it runs."""
    out: list[str] = []
    note = " ".join(step.note.split())
    if step.tool == "read":
        owner = f" of the {code_span(step.skill)} skill" if step.skill else ""
        name = (step.path or "").rsplit("/", 1)[-1]
        read = f"Read {code_span(name)}{owner}: {code_span(step.path or '')}."
        out.append(
            f"{number}. {note} ({read[:1].lower()}{read[1:-1]})" if note else f"{number}. {read}"
        )
    elif step.tool == "exec" and step.command is not None:
        where = f" as skill {code_span(step.skill)} (in its folder)" if step.skill else ""
        fence = fence_for(step.command)
        # Every line indented into the list item (a line at the margin would end it).
        body = [f"   {line}" for line in re.split(r"\r\n|\r|\n", step.command)]
        if not note:
            head = [f"{number}. Run{where}:"]
        elif where:
            head = [f"{number}. {note}", "", f"   Run{where}:"]
        else:  # the note says what it is for; the command follows
            head = [f"{number}. {note}"]
        out += [*head, "", f"   {fence}sh", *body, f"   {fence}", ""]
        if step.secret_env:
            names = ", ".join(code_span(n) for n in step.secret_env)
            out.append(f"   Needs {names} in the environment (the skill's configured secret).")
    else:
        args = json.dumps(dict(step.arguments), ensure_ascii=False, sort_keys=True)
        call = f"Call {code_span(step.tool)} with {code_span(args)}."
        out.append(
            f"{number}. {note} ({call[:1].lower()}{call[1:-1]})" if note else f"{number}. {call}"
        )
    for hint in step.hints:
        if hint.get("kind") not in _BUILTIN_HINTS:  # those are the step itself
            out.append(f"   - Hint: {describe_hint(hint)}")
    return out


#: Hints of the built-in tools: summed up in "What the run touched", not per step.
_BUILTIN_HINTS: Final = frozenset({"file_read", "command"})


def _touched(steps: Sequence[ProcedureStep]) -> list[str]:
    """The built-in tools' hints: the files read and the commands run, once each."""
    files = dict.fromkeys(
        str(h.get("path")) for s in steps for h in s.hints if h.get("kind") == "file_read"
    )
    programs = dict.fromkeys(
        program
        for s in steps
        for h in s.hints
        if h.get("kind") == "command"
        for program in programs_of(str(h.get("command") or ""))
    )
    out: list[str] = []
    if files:
        out.append("- Files read: " + ", ".join(code_span(f) for f in files))
    if any(programs):
        out.append("- Programs run: " + ", ".join(code_span(p) for p in programs if p))
    return out


def _risk_warning(risks: Sequence[RiskFinding]) -> str:
    what = "; ".join(r.describe() for r in risks)
    return (
        f"> ⚠️ **Warning:** the run this was learned from {what}, and no approval step took "
        "place. Review every step before using or promoting it "
        "(`skillbook drafts promote --accept-risk`)."
    )


def _quote(value: str) -> str:
    # A JSON string is a YAML double-quoted scalar that strictyaml reads back as is.
    return json.dumps(yaml_safe(value), ensure_ascii=False)


def _inline(text: str) -> str:
    flat = " ".join(text.split())
    return flat.replace("`", "'")


def procedure_lines(steps: Sequence[ProcedureStep]) -> list[str]:
    """The numbered steps of a procedure as the draft's body shows them (a refine draft's
    section in the refined skill uses them too)."""
    lines: list[str] = []
    for number, step in enumerate(steps, 1):
        lines += _render_step(number, step)
    return lines
