"""Child of the ``update --for`` kill -9 test: one update that announces its phases.

argv[1] is JSON: {"home", "project", "phase"}. The child updates "My Skill" for Claude
Code and Windsurf (two copies), prints a line before and after each copy is swapped in
and after the lock is written, and sleeps long after the line named ``phase`` so that
the parent kills it there.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import skillbook.distribution.agents.layout as layout
import skillbook.distribution.agents.update as update
from skillbook.distribution.agents.table import AgentEnv, get_agent


def main() -> None:
    args = json.loads(sys.argv[1])
    project = Path(args["project"])
    swaps = [0]

    def mark(name: str) -> None:
        print(name, flush=True)
        if name == args["phase"]:
            time.sleep(60)

    swap_in = layout._swap_in
    write_lock = update.update_lock  # type: ignore[attr-defined]

    def swap(staged: Path, target: Path) -> None:
        if project not in target.parents:  # the preview copy in a scratch folder
            swap_in(staged, target)
            return
        swaps[0] += 1
        mark(f"before-swap-{swaps[0]}")
        swap_in(staged, target)
        mark(f"after-swap-{swaps[0]}")

    def lock_writer(*a: Any, **kw: Any) -> Path:
        path = write_lock(*a, **kw)
        mark("lock-written")
        return path

    # The modules call these by their names in their namespaces.
    setattr(layout, "_swap_in", swap)  # noqa: B010
    setattr(update, "update_lock", lock_writer)  # noqa: B010
    chosen = tuple(a for a in (get_agent("claude-code"), get_agent("windsurf")) if a)
    where = AgentEnv({"HOME": args["home"]}, project)
    [result] = update.update_for(
        "My Skill", chosen, where, global_=False, force=False, fetcher=None
    )
    print(json.dumps(result.to_json()), flush=True)


if __name__ == "__main__":
    main()
