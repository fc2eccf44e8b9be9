"""The comparison machinery of ``test_compat_oracle*.py`` (not a test module).

:class:`Runs` asks both oracles about one :mod:`compat_scenarios` scenario (once per
worker), :func:`ours` loads the same world under a compat profile, :func:`differences`
lists every place where the two disagree, and :func:`check_difference_exists` /
:func:`check_profile` are the two checks each scenario goes through.

Why two test files: each scenario costs two OpenClaw processes (one per release, about
4 s of CPU together), 33 scenarios about 160 s on one xdist worker (``--dist loadfile``
keeps a file on one worker), the longest file of the rest lane. :func:`shard` splits the
scenarios between ``test_compat_oracle.py`` and ``test_compat_oracle_shard1.py`` so two
workers share them; each scenario still goes through both checks exactly once.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
from compat_differences import DELIBERATE_2026_4, SAME
from compat_scenarios import OPS, PLUGINS_OFF, SCENARIOS, Scenario, World, scenario_env
from oracle_cases import deep_merge, diff_json, diff_status
from oracle_support import Oracle

from skillbook.config.file import Config
from skillbook.config.profile import OPENCLAW_2026_4, OPENCLAW_2026_9, Profile
from skillbook.pipeline.book import OPENCLAW_CHECK_COMMAND, Loader, SkillBook
from skillbook.pipeline.gating.gate import StaticRemote

#: How many test files share the scenarios.
SHARDS = 2


def shard(index: int) -> tuple[Scenario, ...]:
    """The scenarios of test file ``index`` (every SHARDS-th, so both files get a mix)."""
    return SCENARIOS[index::SHARDS]


VERSIONS = {"baseline": OPENCLAW_2026_4, "latest": OPENCLAW_2026_9}


def oracle_requests(world: World, scenario: Scenario) -> list[dict[str, Any]]:
    common: dict[str, Any] = {
        "workspace": str(world.ws),
        "home": str(world.home),
        "stateDir": str(world.state),
        "bundledDir": str(world.bundled),
        "path": [str(world.bin)],
        "env": scenario_env(scenario, world),
        "cwd": str(world.base),
        "config": deep_merge(scenario.config, PLUGINS_OFF),
        "omitMeta": True,
    }
    if scenario.agent is not None:
        common["agentId"] = scenario.agent
    if scenario.remote is not None:
        common["eligibility"] = {"remote": scenario.remote}
    ops = (*OPS, "snapshot") if scenario.snapshot else OPS
    return [{"op": op, "id": op, **common} for op in ops]


def ours(world: World, scenario: Scenario, profile: Profile) -> SkillBook:
    remote = None
    if scenario.remote is not None:
        r = scenario.remote
        remote = StaticRemote(tuple(r["platforms"]), frozenset(r["bins"]), r.get("note"))
    return Loader(
        world.ws,
        config=Config.from_mapping(deep_merge(scenario.config, PLUGINS_OFF)),
        agent=scenario.agent,
        env={
            "HOME": str(world.home),
            "SKILLBOOK_STATE_DIR": str(world.state),
            "SKILLBOOK_BUNDLED_SKILLS_DIR": str(world.bundled),
            "PATH": str(world.bin),
            **scenario_env(scenario, world),
        },
        cwd=world.base,
        remote=remote,
        check_command=OPENCLAW_CHECK_COMMAND,
        legacy_manifest_keys=False,
        compat=profile,
    ).load()


def differences(book: SkillBook, theirs: dict[str, Any], label: str) -> list[str]:
    """Every place where skillbook's prompt, status or commands differ from OpenClaw's."""
    out: list[str] = []
    if book.catalog.text != theirs["prompt"]["prompt"]:
        out.append(
            f"{label}/prompt: ours={book.catalog.text!r}\n  oracle={theirs['prompt']['prompt']!r}"
        )
    lines, _ = diff_status(
        book.status.to_json(), theirs["status"]["report"], label=f"{label}/status"
    )
    out += lines
    out += diff_json(book.commands().to_json(), theirs["commands"]["commands"], f"{label}/commands")
    if "snapshot" in theirs:
        resolved = [s.name for s in book.snapshot().resolved_skills]
        expected = [s["name"] for s in theirs["snapshot"]["snapshot"]["resolvedSkills"]]
        if resolved != expected:
            out.append(f"{label}/snapshot.resolvedSkills: ours={resolved} oracle={expected}")
    return out


class Runs:
    """Both oracles' answers per scenario, each computed once per :class:`Runs`."""

    def __init__(self, baseline: Oracle, latest: Oracle, tmp: pytest.TempPathFactory) -> None:
        self.oracles = {"baseline": baseline, "latest": latest}
        self.tmp = tmp

    @functools.cache  # noqa: B019 (one Runs per test file; scenarios are few)
    def get(self, scenario_id: str) -> tuple[World, dict[str, dict[str, Any]]]:
        scenario = next(s for s in SCENARIOS if s.id == scenario_id)
        world = World(
            self.tmp.mktemp(scenario.id),
            default_state=scenario.default_state,
            workspace=scenario.workspace,
        )
        scenario.build(world)
        answers: dict[str, dict[str, Any]] = {}
        for version, oracle in self.oracles.items():
            out = oracle.run(oracle_requests(world, scenario))
            answers[version] = {}
            for result in out["results"]:
                assert result["ok"], (version, result.get("error"))
                answers[version][result["id"]] = result["result"]
        return world, answers


def _view(version: str, op: str, result: dict[str, Any]) -> Any:
    return result["prompt"] if op == "prompt" else result["report"] if op == "status" else result


def check_difference_exists(runs: Runs, scenario: Scenario) -> None:
    """Guards the scenarios: 2026.4.12 and 2026.9.6 disagree on the ops named."""
    _, answers = runs.get(scenario.id)
    if scenario.id in SAME:
        base = answers["baseline"]["status"]["report"]["skills"]
        latest = answers["latest"]["status"]["report"]["skills"]
        same = ("name", "eligible", "blockedByAllowlist", "missing")
        assert [[e[k] for k in same] for e in base] == [[e[k] for k in same] for e in latest]
    for op in scenario.differs:
        base = _view("baseline", op, answers["baseline"][op])
        latest = _view("latest", op, answers["latest"][op])
        assert base != latest, f"{scenario.id}: {op} is the same on both releases"


def check_profile(runs: Runs, scenario: Scenario, version: str) -> None:
    """skillbook under the release's profile gives that release's prompt, status and
    commands (2026.4's deliberate differences must still show)."""
    world, answers = runs.get(scenario.id)
    book = ours(world, scenario, VERSIONS[version])
    found = differences(book, answers[version], f"{scenario.id}/{VERSIONS[version]}")
    if version == "baseline" and scenario.id in DELIBERATE_2026_4:
        assert found, f"{scenario.id}: the deliberate difference is gone; update the docs"
        return
    assert not found, "\n".join(found)
