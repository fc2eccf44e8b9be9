"""Legitimate security skills (an auditor, a secret scanner, a pentest checklist) are not blocked.

The fixtures under ``fixtures/benign`` quote the very payloads the rules look for — as
detection patterns, IOC tables, negated advice and cheat-sheet examples — the way real
security skills do (clawhub#1060, #1084, #2094: false positives that blocked them).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skillbook.security.findings import Severity
from skillbook.security.scanner import scan_path

BENIGN = Path(__file__).with_name("fixtures") / "benign"
SKILLS = ["pentest-checklist", "secret-scanner", "skill-auditor"]
#: Ordinary skills that share words with the rules of rules_system, rules_leak and
#: rules_agent: a runbook that warns about ``rm -rf ~`` and checks sudoers, a guide that
#: explains prompt injection with examples, a docker workflow, an API client that sends
#: each key to its own API.
LOOK_ALIKES = ["api-client", "docker-dev", "ops-runbook", "prompt-safety-guide"]


def test_there_are_benign_fixtures() -> None:
    assert sorted(p.name for p in BENIGN.iterdir() if p.is_dir()) == sorted(SKILLS + LOOK_ALIKES)


@pytest.mark.parametrize("name", LOOK_ALIKES)
def test_look_alikes_get_nothing_at_high(name: str) -> None:
    report = scan_path(BENIGN / name)
    loud = [(f.rule, f.location(report.root), f.message) for f in report.at_least(Severity.HIGH)]
    assert loud == []


@pytest.mark.parametrize("name", SKILLS)
def test_security_skill_is_not_blocked(name: str) -> None:
    report = scan_path(BENIGN / name)
    assert report.blocking() == ()
    # The patterns are still reported, demoted, so a reviewer sees them.
    assert any(f.demoted_from is not None for f in report.findings)


@pytest.mark.parametrize("name", ["secret-scanner", "skill-auditor"])
def test_detection_lists_and_teaching_stay_below_high(name: str) -> None:
    report = scan_path(BENIGN / name)
    loud = [(f.rule, f.location(report.root), f.severity) for f in report.at_least(Severity.HIGH)]
    # Raw-IP payloads never drop below high, even when quoted as examples.
    assert all(
        rule in ("raw-ip-url", "remote-fetch-exec", "encoded-exec") for rule, _, _ in loud
    ), loud


def test_pentest_reverse_shells_are_demoted_to_medium() -> None:
    report = scan_path(BENIGN / "pentest-checklist")
    shells = [f for f in report.findings if f.rule == "reverse-shell"]
    assert shells and all(f.severity is Severity.MEDIUM for f in shells)
    assert all(f.demoted_from is Severity.CRITICAL for f in shells)
