"""The experience engine: skills written from successful runs, reviewed before use.

A part above the runtime and distribution (the runtime knows only the
:class:`~skillbook.runtime.recording.TurnRecorder` protocol, which the engine implements). One concept per module:

* :mod:`.record`, :mod:`.recorder`, :mod:`.store` — sessions as JSON Lines under
  ``<state dir>/sessions``;
* :mod:`.redaction` — every known secret, redacted from all the engine writes or prints;
* :mod:`.success` — when a run counts as successful (documented, replaceable);
* :mod:`.params`, :mod:`.fingerprint`, :mod:`.procedure`, :mod:`.hints`, :mod:`.risk` —
  what a run did, as a procedure with parameters, its behaviour fingerprint, tool hints
  and the risk marker;
* :mod:`.draft`, :mod:`.skill_file`, :mod:`.replay`, :mod:`.refine` — the draft, its
  skill file, its replay helper and the optional model refinement;
* :mod:`.queue`, :mod:`.similarity`, :mod:`.promotion` — the review queue,
  near-duplicates, the promotion gate, promotion and rejection;
* :mod:`.follow`, :mod:`.owner`, :mod:`.revision`, :mod:`.refining` — new or refine: the
  skill a run followed and what it changed, whose that skill is, its refined text, and
  a refine draft's promotion (edit in place, local override, or a new skill);
* :mod:`.usage` — usage counters, stale skills and pins;
* :mod:`.learner`, :mod:`.engine` — the loop from a session to a draft, and
  :class:`~skillbook.experience.engine.Experience`, everything wired for one book.

This ``__init__`` holds the package's exceptions.
"""

from __future__ import annotations

from typing import Any

from skillbook.errors import SkillbookError


class ExperienceError(SkillbookError):
    """A session or draft operation of :mod:`skillbook.experience` was refused.

    ``.code`` says why (``promotion-refused``, ``no-workspace``, ``target-exists``,
    ``not-pending``, ``invalid-reason``, ``invalid-name``, ``name-taken``, and for refine
    drafts ``skill-gone``, ``cannot-override``, ``refine-draft``, ``not-refine``);
    ``.diagnostics`` holds the failed checks of a
    refused promotion, each with a stable code, so they can be shown one by one.
    """

    def __init__(self, message: str, *, code: str, diagnostics: tuple[Any, ...] = ()) -> None:
        super().__init__(message)
        self.code = code
        self.diagnostics = diagnostics


class ExperienceNotFound(ExperienceError, LookupError):
    """No recorded session or draft matches the id (or id prefix) asked for."""

    def __init__(self, message: str, *, code: str = "not-found") -> None:
        super().__init__(message, code=code)
