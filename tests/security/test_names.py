"""Look-alike and typo names, and where they come from (frontmatter and folder)."""

from __future__ import annotations

from pathlib import Path

import pytest
from factories import write_skill

from skillbook.security.findings import Severity
from skillbook.security.known_names import WELL_KNOWN_NAMES
from skillbook.security.rules_names import check_name, osa_distance, skeleton
from skillbook.security.scanner import scan_path


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [("github", "github", 0), ("githbu", "github", 1), ("githhub", "github", 1),
     ("gthub", "github", 1), ("gitlab", "github", 2), ("abc", "abcdefgh", 3)],
)  # fmt: skip
def test_osa_distance(a: str, b: str, distance: int) -> None:
    assert osa_distance(a, b) == distance


@pytest.mark.parametrize(
    ("name", "rule", "severity"),
    [
        ("wеather", "homoglyph-name", Severity.CRITICAL),  # Cyrillic е
        ("gіthub", "homoglyph-name", Severity.CRITICAL),  # Cyrillic і
        ("weatherｘ", "homoglyph-name", Severity.HIGH),  # fullwidth x: mixed, not a known name
        ("gog-5w7zvby", "name-impersonation", Severity.HIGH),
        ("g1thub", "name-impersonation", Severity.HIGH),
        ("githbu", "name-impersonation", Severity.MEDIUM),
        ("skill_creator", "name-impersonation", Severity.MEDIUM),
        ("summarise", "name-impersonation", Severity.MEDIUM),
    ],
)
def test_imitations(name: str, rule: str, severity: Severity) -> None:
    ((got_rule, got_severity, message),) = check_name(name, WELL_KNOWN_NAMES)
    assert (got_rule, got_severity) == (rule, severity), message


@pytest.mark.parametrize(
    "name",
    ["github", "github-actions", "motion", "weather-station", "gog-calendar", "pdf-tools",
     "天气预报", "café-notes", "notion-sync"],
)  # fmt: skip
def test_distinct_names_pass(name: str) -> None:
    assert check_name(name, WELL_KNOWN_NAMES) == ()


def test_skeleton_maps_look_alikes_to_latin() -> None:
    assert skeleton("gіthub") == "github"
    assert skeleton("ѡeather") != "weather" or True  # no crash on letters without a Latin twin


def test_folder_name_is_checked_when_it_differs(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "githbu", "my-tool", body="")
    report = scan_path(folder)
    assert report.skill_name == "my-tool"
    (finding,) = [f for f in report.findings if f.rule == "name-impersonation"]
    assert finding.file == folder and finding.message.startswith("Folder:")
