"""A raw rule match inside one file, before context and masking turn it into a Finding."""

from __future__ import annotations

from dataclasses import dataclass

from skillbook.security.findings import RULESET_SKILLBOOK, Severity


@dataclass(frozen=True, slots=True)
class Hit:
    """What a rule family reports: where (offsets into the text) and how bad."""

    rule: str
    severity: Severity
    start: int
    end: int
    message: str
    #: Context may lower the severity, but never below this (e.g. raw-IP payloads stay high).
    floor: Severity | None = None
    #: False where no context excuses the match (invisible text, hidden instructions).
    demotable: bool = True
    #: Shown instead of the matched line (e.g. the decoded text of Unicode tags).
    excerpt: str | None = None
    ruleset: str = RULESET_SKILLBOOK
    #: A reason that is already known to lower the severity (OpenClaw re-rating).
    demoted_from: Severity | None = None
    demotion: str | None = None
