"""The list of 2026.4 → 2026.9 differences stays complete (fast lane, no oracle needed).

A rule added to one profile without an entry in :mod:`compat_differences` fails here,
as does an entry whose rule is not a real profile field, one without a scenario that
pins it against both oracles, or one that ``docs/oracle-differences.md`` does not list.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from compat_differences import DELIBERATE_2026_4, DIFFERENCES, SAME
from compat_scenarios import SCENARIOS

from skillbook.config.profile import OPENCLAW_2026_4, OPENCLAW_2026_9, PROFILES, Profile

DOC = Path(__file__).resolve().parents[2] / "docs" / "oracle-differences.md"


def _fields(value: Any, prefix: str = "") -> dict[str, Any]:
    """Every leaf field of a profile as ``section.field`` → value."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(value):
        item = getattr(value, f.name)
        path = f"{prefix}{f.name}"
        if dataclasses.is_dataclass(item) and not isinstance(item, type):
            out.update(_fields(item, path + "."))
        else:
            out[path] = item
    return out


def test_every_rule_that_differs_is_listed() -> None:
    old, new = _fields(OPENCLAW_2026_4), _fields(OPENCLAW_2026_9)
    differing = {k for k in old if old[k] != new[k]} - {"name", "openclaw_version"}
    listed = {rule for d in DIFFERENCES for rule in d.rules}
    assert differing <= listed, f"not in compat_differences: {sorted(differing - listed)}"
    assert listed <= set(old), f"no such profile field: {sorted(listed - set(old))}"


def test_every_difference_is_pinned_by_a_scenario() -> None:
    scenarios = {s.difference for s in SCENARIOS}
    missing = [d.id for d in DIFFERENCES if d.id not in scenarios and d.test is None]
    assert not missing, f"differences without a scenario: {missing}"
    for d in DIFFERENCES:
        if d.test is not None:
            file, function = d.test.split("::")
            text = (Path(__file__).parents[1] / file).read_text(encoding="utf-8")
            assert f"def {function}(" in text, d.test
    assert len({d.id for d in DIFFERENCES}) == len(DIFFERENCES)


def test_the_docs_list_every_difference() -> None:
    text = DOC.read_text(encoding="utf-8")
    missing = [d.id for d in DIFFERENCES if f"`{d.id}`" not in text]
    assert not missing, f"docs/oracle-differences.md does not list: {missing}"
    for profile in PROFILES:
        assert f"## Profile `{profile}`" in text
    for deliberate in DELIBERATE_2026_4:
        assert f"`{deliberate}`" in text
    for same in SAME:
        assert f"`{same}`" in text


def test_profiles_are_values() -> None:
    assert all(isinstance(p, Profile) for p in PROFILES.values())
    assert hash(OPENCLAW_2026_9) != hash(OPENCLAW_2026_4)
    assert OPENCLAW_2026_9.catalog.default_max_chars == 18_000
    assert OPENCLAW_2026_4.catalog.default_max_chars == 30_000
