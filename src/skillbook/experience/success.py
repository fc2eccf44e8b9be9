"""When a recorded run counts as successful, so that it may be learned from.

Input: a :class:`~skillbook.experience.record.SessionRecord`. Output: a :class:`Verdict`.
The default rule, :func:`default_success`, says a run succeeded when all of these hold:

1. the model finished with an answer (``stop`` is ``answer``: not the step limit, not a
   failed or cancelled request, not a slash command that ran without the model);
2. no tool call failed at the end: the calls of the last step that used tools all ran
   and none failed (earlier failures that were retried are fine: they become the
   draft's pitfalls);
3. the user did not reject it (chat's ``/bad``).

Any callable from a record to a :class:`Verdict` can replace it
(``Learner(success=...)``), e.g. to also require a check on the answer text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from skillbook.experience.record import SessionRecord, ToolEntry

__all__ = ["SuccessRule", "Verdict", "default_success"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether a run succeeded, and the reason in words (shown when nothing is learned)."""

    success: bool
    reason: str

    def __bool__(self) -> bool:
        return self.success


SuccessRule = Callable[[SessionRecord], Verdict]


def default_success(record: SessionRecord) -> Verdict:
    """The documented rule (module docstring)."""
    if record.feedback == "bad":
        return Verdict(False, "the user marked the result bad")
    stop = record.stop
    if stop == "dispatched":
        return Verdict(False, "a slash command ran without the model")
    if stop != "answer":
        what = {
            "max-steps": "the agent hit its step limit",
            "error": "the request failed",
            "cancelled": "the request was cancelled",
            "interrupted": "the session was interrupted",
        }.get(stop, f"the run ended with {stop!r}")
        return Verdict(False, f"the model did not finish with an answer ({what})")
    final = _final_calls(record)
    bad = next((t for t in final if not t.ok), None)
    if bad is not None:
        how = "was refused" if bad.declined else "failed"
        return Verdict(False, f"a tool call at the end ({bad.name}) {how}")
    return Verdict(True, "the model answered and no tool call failed at the end")


def _final_calls(record: SessionRecord) -> tuple[ToolEntry, ...]:
    """The calls of the last model step that used tools (they run together)."""
    if not record.tools:
        return ()
    last = record.tools[-1].step
    if last == 0:
        return (record.tools[-1],)
    return tuple(t for t in record.tools if t.step == last)
