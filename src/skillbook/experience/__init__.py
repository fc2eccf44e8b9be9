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
* :mod:`.usage` — usage counters, stale skills and pins;
* :mod:`.learner`, :mod:`.engine` — the loop from a session to a draft, and
  :class:`Experience`, everything wired for one book.
"""

from __future__ import annotations

from skillbook.experience.behaviour import behavior_fingerprint, normalise_step
from skillbook.experience.draft import Draft, NearDuplicate
from skillbook.experience.engine import Experience
from skillbook.experience.hints import CommandRun, FileRead, ToolHints, UiTarget
from skillbook.experience.learner import Learned, Learner
from skillbook.experience.params import Parameter
from skillbook.experience.procedure import Procedure, reconstruct
from skillbook.experience.promotion import GateReport, Promotion, check_draft, promote, reject
from skillbook.experience.queue import ReviewQueue
from skillbook.experience.record import SessionRecord, ToolEntry
from skillbook.experience.recorder import SessionRecorder
from skillbook.experience.redaction import Redactor, known_secrets
from skillbook.experience.refine import Refinement, refine_draft
from skillbook.experience.replay import render_replay
from skillbook.experience.risk import CAPABILITIES, RiskFinding, find_risks
from skillbook.experience.skill_file import render_skill
from skillbook.experience.store import SessionStore
from skillbook.experience.success import SuccessRule, Verdict, default_success
from skillbook.experience.usage import StaleSkill, UsageStore, stale_skills

__all__ = [
    "CAPABILITIES",
    "CommandRun",
    "Draft",
    "Experience",
    "FileRead",
    "GateReport",
    "Learned",
    "Learner",
    "NearDuplicate",
    "Parameter",
    "Procedure",
    "Promotion",
    "Redactor",
    "Refinement",
    "ReviewQueue",
    "RiskFinding",
    "SessionRecord",
    "SessionRecorder",
    "SessionStore",
    "StaleSkill",
    "SuccessRule",
    "ToolEntry",
    "ToolHints",
    "UiTarget",
    "UsageStore",
    "Verdict",
    "behavior_fingerprint",
    "check_draft",
    "default_success",
    "find_risks",
    "known_secrets",
    "normalise_step",
    "promote",
    "reconstruct",
    "refine_draft",
    "reject",
    "render_replay",
    "render_skill",
    "stale_skills",
]
