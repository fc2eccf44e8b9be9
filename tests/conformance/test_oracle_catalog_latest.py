"""The public corpus through OpenClaw 2026.9.6 and skillbook's ``openclaw-2026.9`` profile.

The same sandboxes and configurations as :mod:`test_oracle_catalog` (the 2026.4
comparison), run on the oracle's ``latest`` OpenClaw and on
``Loader(compat="openclaw-2026.9")``: the prompt must be byte-identical and the status
report and the slash commands identical as JSON (key order included) for every
configuration, the status of every configuration included (2026.9's report depends on
the agent), and for the defaults the loaded skills (``entries`` op: name, path, source,
order).

Both sides run with ``{"plugins": {"enabled": false}}``: the latest OpenClaw package
ships plugins that are on by default (``browser``, ``canvas``) and publishes their
skills into ``<state>/plugin-skills``; they are OpenClaw's own code, not skills of the
corpus, and skillbook does not ship them. The corpus sources hold no plugins, so
nothing of the corpus is left out. No difference is allowed: under this profile
skillbook has no deliberate difference on the corpus (the two of 2026.4, a BOM and
``always`` with a foreign ``os``, are what 2026.9.6 itself does).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from compat_scenarios import PLUGINS_OFF
from oracle_cases import (
    CORPUS,
    Case,
    OracleLike,
    Sandbox,
    deep_merge,
    diff_json,
    diff_status,
    materialise,
    sources,
)
from test_oracle_catalog import _prompt_diff, build_cases, load_ours

from skillbook.pipeline.book import SkillBook

pytestmark = [pytest.mark.oracle, pytest.mark.corpus]

SOURCES = sources(CORPUS) if CORPUS.is_dir() else []
PROFILE = "openclaw-2026.9"
OPS = ("prompt", "status", "commands")


@dataclass
class LatestRun:
    sandbox: Sandbox
    cases: list[Case]
    #: case id -> op -> result
    oracle: dict[str, dict[str, Any]]


class LatestRunner:
    def __init__(self, oracle: OracleLike, tmp: pytest.TempPathFactory) -> None:
        self._oracle = oracle
        self._tmp = tmp
        self._runs: dict[str, LatestRun] = {}

    def get(self, source: str) -> LatestRun:
        if source not in self._runs:
            sandbox = materialise(CORPUS / source, self._tmp.mktemp(source))
            probe = load_ours(sandbox, Case("probe", sandbox.base_config()), compat=PROFILE)
            cases = [
                Case(c.id, deep_merge(c.config, PLUGINS_OFF), c.agent, c.skill_filter)
                for c in build_cases(sandbox, probe)
            ]
            batch = [c.oracle_request(op, sandbox) for c in cases for op in OPS]
            # The loaded skills themselves (name, path, source, in order), once.
            batch.append(cases[0].oracle_request("entries", sandbox))
            answer = self._oracle.run(batch)
            results: dict[str, dict[str, Any]] = {}
            for req, res in zip(batch, answer["results"], strict=True):
                assert res.get("ok"), f"oracle failed on {req['id']}: {res.get('error')}"
                case_id, op = req["id"].split(":")
                results.setdefault(case_id, {})[op] = res["result"]
            self._runs[source] = LatestRun(sandbox, cases, results)
        return self._runs[source]


@pytest.fixture(scope="module")
def latest_runner(
    latest_oracle: OracleLike, corpus_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> LatestRunner:
    return LatestRunner(latest_oracle, tmp_path_factory)


def compare(run: LatestRun, case: Case, book: SkillBook) -> list[str]:
    label = f"{run.sandbox.layout.source}/{case.id}"
    theirs = run.oracle[case.id]
    out: list[str] = []
    if book.catalog.text != theirs["prompt"]["prompt"]:
        out.append(_prompt_diff(label, book.catalog.text, theirs["prompt"]["prompt"]))
    lines, _ = diff_status(
        book.status.to_json(), theirs["status"]["report"], label=f"{label}/status"
    )
    out += lines
    out += diff_json(book.commands().to_json(), theirs["commands"]["commands"], f"{label}/commands")
    if "entries" in theirs:
        mine = [[s.name, str(s.file_path), s.source] for s in book.skills]
        loaded = [
            [e["skill"]["name"], e["skill"]["filePath"], e["skill"]["source"]]
            for e in theirs["entries"]["entries"]
        ]
        out += diff_json(mine, loaded, f"{label}/entries")
    return out


@pytest.mark.parametrize("source", SOURCES)
def test_prompt_status_and_commands_match_openclaw_2026_9(
    latest_runner: LatestRunner, source: str
) -> None:
    run = latest_runner.get(source)
    problems: list[str] = []
    for case in run.cases:
        problems += compare(run, case, load_ours(run.sandbox, case, compat=PROFILE))
    assert not problems, f"{len(problems)} difference(s):\n" + "\n".join(problems[:80])


@pytest.mark.parametrize("source", SOURCES)
def test_latest_cases_exercise_its_new_paths(latest_runner: LatestRunner, source: str) -> None:
    """Guards the comparison: 2026.9's own wording and budget are what is compared."""
    run = latest_runner.get(source)
    default = run.oracle["default"]["prompt"]["prompt"]
    assert "Read a skill's file at its listed location" in default or "truncated" in default
    tiny = run.oracle["budget-900"]["prompt"]["prompt"]
    assert "compact format" in tiny or "Skills truncated" in tiny
    names = [e["name"] for e in run.oracle["default"]["status"]["report"]["skills"]]
    assert names, f"{source}: no skill loaded at all"
