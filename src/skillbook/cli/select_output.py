"""What ``skillbook select`` prints, for the command and for its fast path.

Both :mod:`skillbook.cli.select_cmd` (a selector built from the loaded book) and
:mod:`skillbook.cli.select_fast` (a saved selector, see
:mod:`skillbook.selection.saved`) render a ranking through :func:`render` and write
it through :func:`write`, so the two outputs are the same bytes. Imports nothing
heavy: the fast path must not pay for click or the pipeline.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence

TYPE_CHECKING = False  # not `typing` at run time: a fresh `select` imports this module

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from skillbook.diagnostics import Diagnostic
    from skillbook.model import Skill
    from skillbook.selection.eligibility import NotEligible
    from skillbook.selection.selector import Selection, Selector

__all__ = ["MIN_SHOWN", "clean", "offer", "offered", "render", "write"]

#: What a recorded ``select`` command built (see :func:`offer`), for
#: :mod:`skillbook.cli.select_fast` to save once the command has succeeded.
offered: list[Any] = []


def offer(
    selector: Selector,
    everyone: Selector | None,
    eligible: Sequence[Skill],
    why: Mapping[str, NotEligible],
    problems: Sequence[Diagnostic],
) -> None:
    """Called by the ``select`` command while it is recorded: what to save."""
    offered[:] = [selector, everyone, eligible, why, problems]


#: Rankings list at least this many skills (the selected ones and their neighbours).
MIN_SHOWN = 10

# The same escapes skillbook.cli.render strips: skill text must not drive the terminal.
_ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: str) -> str:
    return _CONTROL_RE.sub("", _ANSI_RE.sub("", text))


def _sanitize(value: Any) -> Any:
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, list):
        return [_sanitize(v) for v in value]
    if isinstance(value, dict):
        return {k: _sanitize(v) for k, v in value.items()}
    return value


def render(
    request: str,
    selection: Selection,
    *,
    channels: Sequence[str],
    default_top: int,
    top: int | None,
    why: dict[str, NotEligible],
    blocked: Sequence[tuple[float, NotEligible]],
    diagnostics: Sequence[Diagnostic],
    include_ineligible: bool,
    as_json: bool,
) -> dict[str, Any] | list[str]:
    """The JSON document (``as_json``) or the lines of one ranking."""
    shown = max(top or default_top, MIN_SHOWN)
    if as_json:
        out = selection.to_json(top=shown)
        # To the precision of every other printed score: the null floor it may be is
        # a float32 cosine's, which the plain path (skillbook.selection.plain) computes
        # to float32 noise, not to the last bit of a double.
        out["threshold"] = round(out["threshold"], 4)
        if include_ineligible:
            # Only eligible skills reach the model: "selected" says what it would see.
            out["selected"] = [n for n in out["selected"] if n not in why]
            for entry in out["ranked"]:
                entry["eligible"] = entry["name"] not in why
        out["ineligible"] = [{**w.to_json(), "score": round(score, 4)} for score, w in blocked]
        out["channels"] = list(channels)
        out["diagnostics"] = [d.to_dict() for d in diagnostics]
        return out
    lines = [
        f"Request: {request}",
        f"Backend: {selection.backend} ({', '.join(channels)}); threshold {selection.threshold:.2f}",
    ]
    chosen = [n for n in selection.names() if not (include_ineligible and n in why)]
    if chosen:
        lines.append("Selected: " + ", ".join(chosen))
    elif blocked:
        lines.append("Selected: none eligible (see below)")
    elif selection.ranked:
        # The first thing one asks of an empty answer is how far off the best was,
        # and which setting moves the line.
        best = selection.ranked[0]
        floor = selection.floor
        setter = (
            "the null-skill floor set it: the request reads close to small talk "
            "(docs/selection.md, The null skill; skills.selection.nullSkill: false turns it off)"
            if floor is not None and floor >= selection.threshold
            else "skills.selection.minScore sets it"
        )
        lines.append(
            f"Selected: none (no skill reaches the threshold {selection.threshold:.2f}; the "
            f"best, {best.name}, scored {best.score:.3f}; {setter})"
        )
    else:
        lines.append("Selected: none (no skill reaches the threshold)")
    lines.append("")
    if any("learned" in c.parts for c in selection.ranked[:shown]):
        # The learned ranker orders; the fused score decides what is selected. Without
        # this line a score lower than the one below it reads as a sorting bug.
        lines.append(
            "Ordered by the learned ranker (learned=); score= is what the threshold reads:"
        )
    for c in selection.ranked[:shown]:
        mark = "*" if c.name in chosen else " "
        parts = "  ".join(f"{k}={v:.3f}" for k, v in c.parts.items() if not k.endswith("Squashed"))
        extra = f"  triggers: {', '.join(c.triggers)}" if c.triggers else ""
        if include_ineligible and c.name in why:
            extra += f"  [not eligible: {why[c.name].status}]"
        lines.append(f"{mark}{c.rank:>3}. {c.name}  score={c.score:.3f}  {parts}{extra}")
    if selection.vetoed:
        lines.append("Vetoed by a trigger hint: " + ", ".join(selection.vetoed))
    if blocked:
        lines.append("")
        lines.append("Matching but not eligible on this host (the model is not shown them):")
        for score, w in blocked:
            lines.append(f"  {w.name}  score={score:.3f}  {w.status}: {'; '.join(w.reasons)}")
    lines.extend(d.format() for d in diagnostics)
    return lines


def write(output: dict[str, Any] | list[str], color: str = "auto") -> None:
    """Print :func:`render`'s output as the command line prints text and JSON: cleaned
    of control characters, then in the stream's characters and colours."""
    from skillbook.cli.style import Style

    style = Style.detect(color)
    if isinstance(output, dict):
        text = json.dumps(_sanitize(output), indent=2, ensure_ascii=style.ascii)
    else:
        text = "\n".join(style.render(line) for line in clean("\n".join(output)).split("\n"))
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
