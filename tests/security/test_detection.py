"""Every malicious fixture (one per rule family) is caught, and clean skills stay clean."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixture_tree import EXPECTED, MALICIOUS, materialize

from skillbook.config.paths import PACKAGE_BUNDLED_DIR
from skillbook.security.batch import scan_paths
from skillbook.security.findings import Severity
from skillbook.security.scanner import scan_path


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return materialize(tmp_path_factory.mktemp("fixtures") / "malicious")


def test_every_static_fixture_is_listed() -> None:
    static = {p.name for p in MALICIOUS.iterdir() if p.is_dir()}
    assert static <= set(EXPECTED)


@pytest.mark.parametrize("folder", sorted(EXPECTED))
def test_fixture_is_detected(fixtures: Path, folder: str) -> None:
    rule, least = EXPECTED[folder]
    report = scan_path(fixtures / folder)
    hits = [f for f in report.findings if f.rule == rule]
    assert hits, f"{folder}: {rule} did not fire; got {[f.rule for f in report.findings]}"
    assert max(f.severity.rank for f in hits) >= Severity(least).rank


def test_blocking_fixtures_are_blocked(fixtures: Path) -> None:
    blocked = {r.root.name for r in scan_paths([fixtures]) if r.blocking()}
    expected = {name for name, (_, least) in EXPECTED.items() if least == "critical"}
    assert expected <= blocked


def test_bundled_skills_are_clean() -> None:
    reports = scan_paths([PACKAGE_BUNDLED_DIR])
    assert len(reports) >= 8
    noisy = [(r.root.name, f.rule, f.message) for r in reports for f in r.at_least(Severity.MEDIUM)]
    assert noisy == []
