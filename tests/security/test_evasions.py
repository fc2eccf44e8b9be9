"""Evasive variants of the attacks in landscape.md §4 are caught at high or critical.

Three sets (see ``evasion_set.py``): the tuning set (62) must be caught in full at its
expected severity. The hold-out set (57) was written after tuning; its first
measurement was 46/57 (80.7 %). The fresh set (50) was written after that, before the
rules were generalised for the hold-out's miss families; its first measurement was
22/50 (44.0 %). The generalised rules (families, not examples) then caught 57/57 and
48/50; a later probe with reverse shells in other idioms (not written from the set)
caught its last two, 50/50: those are the floors now, as regression guards, and all
sets together must stay at 90 %. The rates are printed (``pytest -s``); what is still missed is listed in
docs/security.md ("What it does not do").

Two more sets cover attack families beyond §4 (destruction, privilege escalation,
command hijacking, disabled defences, wiped traces, quieter leaks, typosquatted
installs, agent tampering, covert instructions, spyware, miners): ``families.yaml`` (76, the tuning
set of those rules) must be caught in full; ``families-holdout.yaml`` (52) was written
before the rules were run on it and never tuned on: its first measurement was 40 of 52
at high or critical (39 at the expected severity); the corpus's false positives then
moved writes into agents' skill folders to medium (real READMEs install skills that
way), which cost one entry: 39 of 52 is the floor.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from evasion_set import Variant, load, worst

from skillbook.security.findings import Severity

TUNE = load("tune.yaml")
HOLDOUT = load("holdout.yaml")
FRESH = load("fresh.yaml")
FAMILIES = load("families.yaml")
FAMILIES_HOLDOUT = load("families-holdout.yaml")
#: Rates after generalising (before: 46/57 and 22/50, see the module docstring).
HOLDOUT_FLOOR = 57 / 57
FRESH_FLOOR = 50 / 50
#: The first (and untuned) measurement of the families' hold-out set.
FAMILIES_HOLDOUT_FLOOR = 39 / 52


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
    assert len(FAMILIES) >= 60
    assert len(FAMILIES_HOLDOUT) >= 40
    every = TUNE + HOLDOUT + FRESH + FAMILIES + FAMILIES_HOLDOUT
    ids = [v.id for v in every]
    assert len(ids) == len(set(ids))
    assert all(v.least.at_least(Severity.HIGH) for v in every)


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


def test_families_set(tmp_path: Path) -> None:
    at_expected, at_high, missed = _rates(FAMILIES, tmp_path)
    print(f"\nfamilies set: {len(FAMILIES)} variants, {at_expected:.1%} at the expected severity, "
          f"{at_high:.1%} high or critical")  # fmt: skip
    assert missed == []


def test_families_holdout_set(tmp_path: Path) -> None:
    at_expected, at_high, missed = _rates(FAMILIES_HOLDOUT, tmp_path)
    print(f"\nfamilies hold-out set: {len(FAMILIES_HOLDOUT)} variants, {at_expected:.1%} at the "
          f"expected severity, {at_high:.1%} high or critical; missed: {missed}")  # fmt: skip
    assert at_high >= FAMILIES_HOLDOUT_FLOOR, missed


def test_all_sets_together_reach_ninety_percent(tmp_path: Path) -> None:
    variants = TUNE + HOLDOUT + FRESH
    _, at_high, missed = _rates(variants, tmp_path)
    print(f"\nall {len(variants)} variants: {at_high:.1%} high or critical")
    assert at_high >= 0.9, missed


@pytest.mark.parametrize("variant", TUNE + FAMILIES, ids=[v.id for v in TUNE + FAMILIES])
def test_tuning_variant(variant: Variant, tmp_path: Path) -> None:
    got = worst(variant, tmp_path)
    assert got.at_least(variant.least), f"{variant.family}: {got}, wanted {variant.least}"
