"""One spec-mode type for every stage (skillbook.config.mode)."""

from __future__ import annotations

import pytest

from skillbook.config.file import Config
from skillbook.config.mode import MODE_NAMES, Mode
from skillbook.errors import ConfigError


def test_values_and_strings_are_interchangeable() -> None:
    assert Mode.of("mixed") is Mode.MIXED
    assert Mode.of(Mode.STRICT) is Mode.STRICT
    assert str(Mode.STRICT) == "strict" and f"{Mode.LEGACY}" == "legacy"
    assert "mixed" in set(Mode)
    assert MODE_NAMES == ("openclaw", "mixed", "legacy", "strict")


def test_unknown_mode_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown mode 'loose'; expected one of openclaw, mixed"):
        Mode.of("loose")


def test_what_each_mode_loads() -> None:
    assert [m for m in Mode if m.loads_standalone] == [Mode.MIXED, Mode.LEGACY]
    assert [m for m in Mode if m.is_strict] == [Mode.STRICT]


def test_config_gives_a_mode_and_names_the_choices() -> None:
    cfg = Config.from_mapping({"skills": {"load": {"mode": "legacy"}}})
    assert cfg.skills.load.mode is Mode.LEGACY
    with pytest.raises(ConfigError) as err:
        Config.from_mapping({"skills": {"load": {"mode": "loose"}}})
    assert str(err.value) == (
        'config: skills.load.mode: expected one of "openclaw", "mixed", "legacy", "strict", '
        'got "loose"'
    )
