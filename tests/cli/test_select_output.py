"""``skillbook select``'s text when nothing is selected: how far off the best skill was,
and which of the two thresholds (``minScore`` or the null-skill floor) stopped it."""

from __future__ import annotations

import json
from types import SimpleNamespace

from factories import write_skill

from cli.conftest import Shell
from skillbook.cli.select_output import render
from skillbook.selection.plain import Candidate, Selection


def rendered(*ranked: Candidate, threshold: float = 0.18, floor: float | None = None) -> list[str]:
    """``select``'s text for a ranking (the plain path's twin of the selector's)."""
    selection = Selection("weather in Paris", "hybrid", threshold, ranked, (), (), floor)
    lines = render(
        "weather in Paris",
        selection,  # type: ignore[arg-type]
        channels=("bm25",),
        default_top=5,
        top=None,
        why={},
        blocked=(),
        diagnostics=(),
        include_ineligible=False,
        as_json=False,
    )
    assert isinstance(lines, list)
    return lines


def none_line(threshold: float, floor: float | None) -> str:
    best = Candidate(SimpleNamespace(name="weather"), 1, 0.338, {"bm25": 1.6}, ())
    return rendered(best, threshold=threshold, floor=floor)[2]


def test_an_empty_selection_names_the_best_score_and_the_null_floor() -> None:
    assert none_line(0.3944, 0.3944) == (
        "Selected: none (no skill reaches the threshold 0.39; the best, weather, scored "
        "0.338; the null-skill floor set it: the request reads close to small talk "
        "(docs/selection.md, The null skill; skills.selection.nullSkill: false turns it off))"
    )


def test_an_empty_selection_under_min_score_names_the_setting() -> None:
    assert none_line(0.39, 0.1) == (
        "Selected: none (no skill reaches the threshold 0.39; the best, weather, scored "
        "0.338; skills.selection.minScore sets it)"
    )


def test_select_on_the_command_line_says_how_far_off_the_best_was(shell: Shell) -> None:
    write_skill(shell.project / "skills" / "weather", description="Weather forecasts for a city.")
    config = shell.project / "c.json"
    selection = {"backend": "bm25", "minScore": 0.99, "indexDir": str(shell.project / "i")}
    config.write_text(json.dumps({"skills": {"selection": selection}}), encoding="utf-8")
    result = shell.run("-c", str(config), "select", "weather forecast for Paris")
    assert result.exit_code == 0, result.output
    line = result.stdout.splitlines()[2]
    assert line.startswith("Selected: none (no skill reaches the threshold 0.99; the best, weather")
    assert line.endswith("skills.selection.minScore sets it)")


def test_a_learned_order_says_so_above_the_list() -> None:
    """The learned ranker may place a lower fused score above a higher one: the list
    says what orders it and what the threshold reads."""
    a = Candidate(SimpleNamespace(name="a"), 1, 0.20, {"bm25": 1.0, "learned": 0.6}, ())
    b = Candidate(SimpleNamespace(name="b"), 2, 0.25, {"bm25": 1.2, "learned": 0.3}, ())
    lines = rendered(a, b)
    at = lines.index(
        "Ordered by the learned ranker (learned=); score= is what the threshold reads:"
    )
    assert lines[at + 1].startswith("   1. a  score=0.200")
    plain = Candidate(SimpleNamespace(name="a"), 1, 0.20, {"bm25": 1.0}, ())
    assert not any(line.startswith("Ordered by") for line in rendered(plain))
