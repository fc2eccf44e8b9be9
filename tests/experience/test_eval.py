"""The experience eval (``benchmarks/eval_experience.py``) on a few of its tasks.

The same runs as the benchmark, in process: a scripted model on a stand-in server on
127.0.0.1, the real runtime and learner, one shared workspace. It asserts what the
benchmark's table reports: one draft per task from two runs with varied inputs (the
second a duplicate avoided), the draft's words written by the model, the helper
replaying in a moved copy of the workspace, ``select`` ranking the learned skill first
for a paraphrase, and no canary secret in any file written. What "following a skill"
should leave (no draft, or one ``refine`` draft) is asserted once ``drafts list --json``
says which kind a draft is.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

import pytest
from benchmark_scripts import benchmark_script

TASKS = ("git-commit", "keyed-check", "follow-linecount-extra")


def load_eval() -> ModuleType:
    return benchmark_script("eval_experience")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Any:
    ev = load_eval()
    tasks = [t for t in ev.TASKS if t.name in TASKS]
    assert len(tasks) == len(TASKS)
    return ev.run_eval(tasks, tmp_path_factory.mktemp("exp-eval"), refine=True)


def rows(report: Any, *, following: bool) -> list[Any]:
    return [r for r in report.rows if bool(r.task.follows) == following]


def test_one_draft_per_task_written_in_words_and_replayed_elsewhere(report: Any) -> None:
    new = rows(report, following=False)
    assert len(new) == 2
    for row in new:
        name = row.task.name
        # Two runs with varied inputs: one draft, the second run updated it.
        assert row.actions == ["created", "updated"], (name, row.actions)
        assert row.refined is True, name
        assert row.replay == "yes", (name, row.replay)
        assert row.select_first == row.promoted, (name, row.select_first)


def test_no_secret_in_any_written_file(report: Any) -> None:
    assert report.secret_hits == []
    assert report.files_searched > 50


def test_the_table_has_a_row_per_task_and_the_totals(report: Any) -> None:
    ev = sys.modules["eval_experience"]
    lines = ev.table(report)
    assert lines[0].startswith("| task | area | drafts created (runs + paraphrase) |")
    assert sum(line.startswith(f"| {t} |") for t in TASKS for line in lines) == len(TASKS)
    assert any(line.startswith("- secrets written: 0 file(s)") for line in lines)


def test_following_a_skill_leaves_no_draft_or_a_refine_one(report: Any) -> None:
    kinds = [k for r in report.rows for k in r.kinds]
    if not kinds or all(k.startswith("n/a") for k in kinds):
        pytest.skip("drafts list --json does not say a draft's kind yet (new or refine)")
    for row in rows(report, following=False):
        # The paraphrase run followed the learned skill exactly: no new draft. For
        # keyed-check that takes the key keyed's config gives: the learned skill declares
        # it (requires.env, skillKey), so exec sets it and the helper runs.
        assert row.created == 1, (row.task.name, row.kinds)
        assert row.paraphrase_action == "followed-skill", (row.task.name, row.paraphrase_action)
    (extra,) = rows(report, following=True)
    assert extra.kinds == ["refine"]
