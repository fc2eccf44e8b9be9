"""Child process of the kill -9 test: one download install, printing each progress event.

argv[1] is JSON: {"url", "root", "home", "slow"}. With "slow", every progress step
sleeps a little, so the parent can kill the process in the middle of a phase.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from skillbook.distribution.install.download import DownloadOptions, plan_download, run_download
from skillbook.distribution.install.machine import Machine
from skillbook.distribution.netguard import NetworkPolicy
from skillbook.pipeline.parse.manifest import parse_install_spec


class Printer:
    def __init__(self, slow: bool) -> None:
        self.slow = slow
        self.task = ""
        self.count = 0

    def start(self, task: str, total: int | None = None) -> None:
        self.task, self.count = task.split(" ", 1)[0], 0
        print(f"start {self.task}", flush=True)

    def advance(self, amount: int = 1) -> None:
        self.count += 1
        print(f"advance {self.task} {self.count}", flush=True)
        if self.slow:
            time.sleep(0.005)

    def finish(self) -> None:
        print(f"finish {self.task}", flush=True)


def main() -> None:
    args = json.loads(sys.argv[1])
    home = Path(args["home"])
    spec = parse_install_spec({"kind": "download", "url": args["url"]})
    assert spec is not None
    plan = plan_download(spec, tools_root=Path(args["root"]), home=home, timeout_ms=60_000)
    machine = Machine(platform="linux", env={"PATH": "/usr/bin:/bin", "HOME": str(home)}, home=home)
    result = run_download(
        plan,
        machine=machine,
        options=DownloadOptions(network=NetworkPolicy(allow_private_network=True)),
        progress=Printer(bool(args["slow"])),
    )
    print(f"done {json.dumps(result.to_json())}", flush=True)


if __name__ == "__main__":
    main()
