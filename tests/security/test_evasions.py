"""Evasive variants of the attacks in landscape.md §4 are caught at high or critical.

Three sets (see ``evasion_set.py``): the tuning set (62) must be caught in full at its
expected severity. The hold-out set (57) was written after tuning; its first
measurement was 46/57 (80.7 %). The fresh set (50) was written after that, before the
rules were generalised for the hold-out's miss families; its first measurement was
22/50 (44.0 %). The generalised rules (families, not examples) then caught 57/57 and
48/50: those are the floors now, as regression guards, and all sets together must
stay at 90 %. The rates are printed (``pytest -s``); what is still missed is listed in
docs/security.md ("What it does not do").
"""

from __future__ import annotations

from pathlib import Path

import pytest
from evasion_set import Variant, load, worst

from skillbook.security.findings import Severity

TUNE = load("tune.yaml")
HOLDOUT = load("holdout.yaml")
FRESH = load("fresh.yaml")
#: Rates after generalising (before: 46/57 and 22/50, see the module docstring).
HOLDOUT_FLOOR = 57 / 57
FRESH_FLOOR = 48 / 50


def _rates(variants: list[Variant], root: Path) -> tuple[float, float, list[str]]:
    expected = high = 0
    missed: list[str] = []
    for variant in variants:
        got = worst(variant, root)
        high += got.at_least(Severity.HIGH)
        if got.at_least(variant.least):
            expected += 1
        else:
            missed.append(f"{variant.id} ({variant.family}): {got}, wanted {variant.least}")
    return expected / len(variants), high / len(variants), missed


def test_sets_are_big_enough_and_well_formed() -> None:
    assert len(TUNE) >= 60
    assert len(HOLDOUT) >= 50
    assert len(FRESH) >= 40
    ids = [v.id for v in TUNE + HOLDOUT + FRESH]
    assert len(ids) == len(set(ids))
    assert all(v.least.at_least(Severity.HIGH) for v in TUNE + HOLDOUT + FRESH)


def test_tuning_set(tmp_path: Path) -> None:
    at_expected, at_high, missed = _rates(TUNE, tmp_path)
    print(f"\ntuning set: {len(TUNE)} variants, {at_expected:.1%} at the expected severity, "
          f"{at_high:.1%} high or critical")  # fmt: skip
    assert missed == []


def test_holdout_set(tmp_path: Path) -> None:
    at_expected, at_high, missed = _rates(HOLDOUT, tmp_path)
    print(f"\nhold-out set: {len(HOLDOUT)} variants, {at_expected:.1%} at the expected severity, "
          f"{at_high:.1%} high or critical; missed: {missed}")  # fmt: skip
    assert at_high >= HOLDOUT_FLOOR, missed


def test_fresh_set(tmp_path: Path) -> None:
    at_expected, at_high, missed = _rates(FRESH, tmp_path)
    print(f"\nfresh set: {len(FRESH)} variants, {at_expected:.1%} at the expected severity, "
          f"{at_high:.1%} high or critical; missed: {missed}")  # fmt: skip
    assert at_high >= FRESH_FLOOR, missed


def test_all_sets_together_reach_ninety_percent(tmp_path: Path) -> None:
    variants = TUNE + HOLDOUT + FRESH
    _, at_high, missed = _rates(variants, tmp_path)
    print(f"\nall {len(variants)} variants: {at_high:.1%} high or critical")
    assert at_high >= 0.9, missed


@pytest.mark.parametrize("variant", TUNE, ids=[v.id for v in TUNE])
def test_tuning_variant(variant: Variant, tmp_path: Path) -> None:
    got = worst(variant, tmp_path)
    assert got.at_least(variant.least), f"{variant.family}: {got}, wanted {variant.least}"
