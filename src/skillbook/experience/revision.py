"""The refined version of a skill: what promoting a refine draft writes.

Input: the text of the skill's ``SKILL.md`` and a refine
:class:`~skillbook.experience.draft.Draft`. Output: the new text. Only the body
changes: a section between two markers is added at its end (or replaces the section a
previous refine added), saying what the run changed and the procedure that worked. The
frontmatter stays as it was, byte for byte, except ``name`` when the refined version is
promoted as a new skill. Nothing here does I/O.
"""

from __future__ import annotations

import json
import re
from typing import Final

from skillbook.experience._markdown import code_span
from skillbook.experience.draft import Draft, request_template
from skillbook.experience.skill_file import procedure_lines

__all__ = ["BEGIN", "END", "refined_text", "rename_skill"]

BEGIN: Final = "<!-- skillbook:refined -->"
END: Final = "<!-- /skillbook:refined -->"
_SECTION: Final = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END) + r"\n?", re.S)
_FRONTMATTER: Final = re.compile(r"\A(---\r?\n)(.*?\r?\n)(---[ \t]*(?:\r?\n|\Z))", re.S)
_NAME_LINE: Final = re.compile(r"^name:[^\r\n]*", re.M)


def refined_text(original: str, draft: Draft) -> str:
    """``original`` with the draft's section at the end of the body (module docstring)."""
    section = "\n".join(_section(draft)) + "\n"
    if _SECTION.search(original):
        return _SECTION.sub(lambda _: section, original, count=1)
    base = original if original.endswith("\n") or not original else original + "\n"
    return f"{base}\n{section}" if base else section


def rename_skill(text: str, name: str) -> str:
    """``text`` with its frontmatter's ``name`` set to ``name`` (a new skill's copy)."""
    head = _FRONTMATTER.match(text)
    if head is None:
        return text
    fields = head.group(2)
    line = f"name: {json.dumps(name)}"
    if _NAME_LINE.search(fields):
        fields = _NAME_LINE.sub(lambda _: line, fields, count=1)
    else:
        fields = f"{line}\n{fields}"
    return head.group(1) + fields + head.group(3) + text[head.end() :]


def _section(draft: Draft) -> list[str]:
    target = draft.target
    changes = target.changes if target is not None else ()
    when = draft.last_seen[:10] or draft.created[:10]
    task = request_template(draft.request, draft.params)
    runs = f"{draft.run_count} runs" if draft.run_count > 1 else "a run"
    lines = [
        BEGIN,
        "## Refined from a run",
        "",
        f"Learned by skillbook from {runs} (session `{draft.source_session}`, {when}) that "
        f"followed this skill for: {_inline(task)}",
        "",
    ]
    if changes:
        lines += ["What the run did otherwise:", "", *(f"- {c}" for c in changes), ""]
    if draft.params:
        lines += ["Parameters of the procedure below:", ""]
        for p in draft.params:
            seen = ", ".join(
                dict.fromkeys(code_span(e[p.name]) for e in draft.examples if p.name in e)
            )
            lines.append(f"- {code_span(p.name)} ({p.kind}): e.g. {seen or code_span(p.value)}")
        lines.append("")
    # Reading this very skill is how the run began, not a step to write into it.
    own = target.name if target is not None else None
    steps = [s for s in draft.steps if not (s.tool == "read" and s.skill == own)]
    lines += ["The procedure that worked:", "", *procedure_lines(steps)]
    while lines[-1] == "":
        lines.pop()
    if draft.checks:
        lines += ["", "Checks:", "", *(f"- {c}" for c in draft.checks)]
    lines.append(END)
    return lines


def _inline(text: str) -> str:
    return " ".join(text.split()).replace("`", "'")
