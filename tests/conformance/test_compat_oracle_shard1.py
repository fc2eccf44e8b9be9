"""The second half of :mod:`test_compat_oracle`'s scenarios (:func:`compat_oracle.shard` 1).

The same two checks per scenario as there; a file of its own so that another xdist
worker runs these oracle processes (``--dist loadfile`` keeps a file on one worker).
"""

from __future__ import annotations

import pytest
from compat_oracle import VERSIONS, Runs, check_difference_exists, check_profile, shard
from compat_scenarios import Scenario
from oracle_support import Oracle

pytestmark = pytest.mark.oracle

MINE = shard(1)


@pytest.fixture(scope="module")
def runs(oracle: Oracle, latest_oracle: Oracle, tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return Runs(oracle, latest_oracle, tmp_path_factory)


@pytest.mark.parametrize("scenario", MINE, ids=[s.id for s in MINE])
def test_the_difference_exists_upstream(runs: Runs, scenario: Scenario) -> None:
    check_difference_exists(runs, scenario)


@pytest.mark.parametrize("version", list(VERSIONS))
@pytest.mark.parametrize("scenario", MINE, ids=[s.id for s in MINE])
def test_each_profile_matches_its_release(runs: Runs, scenario: Scenario, version: str) -> None:
    check_profile(runs, scenario, version)
