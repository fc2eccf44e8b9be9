"""Child of the kill -9 test: one install or update that announces its phases.

argv[1] is JSON: {"registry", "root", "state", "mode", "phase"}. The child prints a line
at each phase (download progress, before the swap, after it, after the lock write) and
sleeps long after the one named ``phase``, so the parent kills it inside that phase.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import skillbook.distribution.registry.workdir as workdir_module
from skillbook.distribution.registry import lockfile
from skillbook.distribution.registry.endpoint import Endpoint
from skillbook.distribution.registry.installer import Installer, InstallOptions
from skillbook.distribution.registry.updater import update_skills
from skillbook.distribution.registry.workdir import Workdir
from skillbook.distribution.swap import replace_tree as swap


def main() -> None:
    args = json.loads(sys.argv[1])
    phase = args["phase"]

    def mark(name: str) -> None:
        print(name, flush=True)
        if name == phase:
            time.sleep(30)

    class Printer:
        def start(self, task: str, total: int | None = None) -> None:
            return None

        def advance(self, amount: int = 1) -> None:
            mark("download")

        def finish(self) -> None:
            return None

    write_lock = lockfile.write_lock

    def replace_tree(staged: Path, dest: Path, **kw: Any) -> str:
        mark("before-swap")
        how = swap(staged, dest, **kw)
        mark("after-swap")
        return how

    def lock_writer(lock: Any) -> None:
        write_lock(lock)
        mark("lock-written")

    # The workdir module calls these by their names in its namespace.
    setattr(workdir_module, "replace_tree", replace_tree)  # noqa: B010
    setattr(workdir_module, "write_lock", lock_writer)  # noqa: B010
    installer = Installer(
        Workdir(Path(args["root"])), Endpoint(args["registry"]), progress=Printer()
    )
    options = InstallOptions(state_dir=Path(args["state"]), force=True)
    if args["mode"] == "install":
        installer.install("demo", options)
    else:
        update_skills(installer, "demo", options)
    print("done", flush=True)


if __name__ == "__main__":
    main()
