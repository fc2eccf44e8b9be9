"""Each difference between OpenClaw 2026.4.12 and 2026.9.6, pinned against both releases.

Every scenario of :mod:`compat_scenarios` builds a small workspace and runs the
``prompt``, ``status`` and ``commands`` ops on the baseline oracle and on the latest one,
and :class:`skillbook.pipeline.book.Loader` under the matching compat profile. Three things must
hold: the two OpenClaw releases really differ on the ops the scenario names (so the
difference exists upstream), skillbook's ``openclaw-2026.4`` result equals 2026.4.12's
and its ``openclaw-2026.9`` result equals 2026.9.6's, byte for byte (the status and
commands as JSON, key order included). The one listed exception under 2026.4 is the
deliberate BOM fix (docs/oracle-differences.md).

The machinery is in :mod:`compat_oracle`; this file checks every other scenario
(:func:`compat_oracle.shard` 0), ``test_compat_oracle_shard1.py`` the rest, so that two
xdist workers share the oracle processes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from compat_differences import DELIBERATE_2026_4, DIFFERENCES, SAME
from compat_oracle import SHARDS, VERSIONS, Runs, check_difference_exists, check_profile, shard
from compat_scenarios import SCENARIOS, Scenario, World
from oracle_support import Oracle

from skillbook.config.file import Config
from skillbook.config.profile import OPENCLAW_2026_4, OPENCLAW_2026_9
from skillbook.pipeline.book import Loader
from skillbook.pipeline.parse.skill_file import parse_skill_text

pytestmark = pytest.mark.oracle

MINE = shard(0)


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


def test_the_shards_hold_every_scenario_once() -> None:
    """Guards the split between the two files: no scenario is left out or run twice."""
    ids = [s.id for i in range(SHARDS) for s in shard(i)]
    assert sorted(ids) == sorted(s.id for s in SCENARIOS)
    assert len(set(ids)) == len(ids)


def test_every_scenario_pins_a_listed_difference() -> None:
    ids = {d.id for d in DIFFERENCES} | set(SAME)
    assert {s.difference for s in SCENARIOS} <= ids
    assert {s.id for s in SCENARIOS} >= DELIBERATE_2026_4
    assert all(not s.differs for s in SCENARIOS if s.id in SAME)


def test_latest_oracle_is_the_release_the_profile_names(latest_oracle: Oracle) -> None:
    # One OpenClaw process for both questions (a batch answers each in order).
    out = latest_oracle.run([{"op": "reserved"}, {"op": "info"}])
    assert out["ok"]
    reserved, info = out["results"]
    assert reserved["ok"] and info["ok"]
    assert frozenset(reserved["result"]["names"]) == OPENCLAW_2026_9.commands.reserved_names
    # The package behind `latest` is 2026.9.6 (the version the profile is checked against).
    assert out["meta"]["openclawVersion"] == OPENCLAW_2026_9.openclaw_version


def test_builtin_reserved_names_per_profile(oracle: Oracle) -> None:
    out = oracle.run({"op": "reserved"})
    assert frozenset(out["result"]["names"]) == OPENCLAW_2026_4.commands.reserved_names


def test_setup_and_any_config_are_not_fields_of_either_release(
    oracle: Oracle, latest_oracle: Oracle
) -> None:
    """The issue expected 2026.9 to read ``setup`` and ``requires.anyConfig``; 2026.9.6
    reads neither (nor does 2026.4.12). skillbook keeps them unused under both profiles
    and says so (``parse.newer-field``); the gate is the same as OpenClaw's."""
    text = (
        '---\nname: a\ndescription: d\nmetadata: {"openclaw": {"setup": "./setup.sh", '
        '"requires": {"anyConfig": ["x.y"], "bins": ["b"]}}}\n---\n'
    )
    request = {"op": "frontmatter", "text": text, "omitMeta": True}
    for version, runner in (("baseline", oracle), ("latest", latest_oracle)):
        meta = runner.run(request)["result"]["metadata"]
        assert meta == {"requires": {"bins": ["b"], "anyBins": [], "env": [], "config": []}}, (
            version
        )
        parsed = parse_skill_text(text, rules=VERSIONS[version].frontmatter)
        assert parsed.metadata is not None
        assert parsed.metadata.to_json() == meta
        assert sum(d.code == "parse.newer-field" for d in parsed.diagnostics) == 2


def test_plugin_skills_under_2026_9_differ_only_as_listed(
    latest_oracle: Oracle, tmp_path: Path
) -> None:
    """Not modelled (docs/oracle-differences.md): 2026.9.6 reads plugin skills through
    the links it publishes in ``<state>/plugin-skills/<folder>``, and its own default-on
    plugins (browser, canvas) add skills. Leaving those out, the same skills load, and
    each path differs exactly by that link folder."""
    world = World(tmp_path)
    plugin = world.state / "extensions" / "gplug"
    plugin.mkdir(parents=True)
    (plugin / "openclaw.plugin.json").write_text(
        '{"id": "gplug", "skills": ["./skills"], "configSchema": {}}', encoding="utf-8"
    )
    (plugin / "index.js").write_text("export default {}\n", encoding="utf-8")
    world.skill(plugin / "skills" / "g-skill", "g-skill")
    world.skill(world.skills / "local", "local")
    request = {
        "op": "entries",
        "workspace": str(world.ws),
        "home": str(world.home),
        "stateDir": str(world.state),
        "bundledDir": str(world.bundled),
        "cwd": str(world.base),
        "omitMeta": True,
    }
    out = latest_oracle.run(request)
    package = (latest_oracle.root / "latest").resolve()
    theirs = [
        (e["skill"]["name"], e["skill"]["filePath"])
        for e in out["result"]["entries"]
        if not Path(e["skill"]["filePath"]).resolve().is_relative_to(package)
    ]
    book = Loader(
        world.ws,
        config=Config.from_mapping({}),
        env={
            "HOME": str(world.home),
            "SKILLBOOK_STATE_DIR": str(world.state),
            "SKILLBOOK_BUNDLED_SKILLS_DIR": str(world.bundled),
            "PATH": str(world.bin),
        },
        cwd=world.base,
        compat=OPENCLAW_2026_9,
    ).load()
    mine = [(s.name, str(s.file_path)) for s in book.skills]
    published = world.state / "plugin-skills"
    assert theirs == [
        (name, str(published / Path(path).parent.name / "SKILL.md"))
        if Path(path).is_relative_to(plugin)
        else (name, path)
        for name, path in mine
    ]
    assert ("g-skill", str(plugin / "skills" / "g-skill" / "SKILL.md")) in mine
