"""A sync in a child process, driven by the crash and concurrency tests (not a test module).

``python sync_child.py WORKSPACE TARGET ENV_JSON [--pause-at N] [--log FILE] [--tag T]``

Prints ``skill <done>/<total>`` after each skill and ``swapped`` after the swap, then
``done``. With ``--pause-at N`` it stops after skill N and waits for a line on stdin
(the test decides when it goes on, or kills it there). ``--log`` appends
``<tag> <stage> <done>`` lines to a shared file, so two children's order can be
checked afterwards. The pause lives here, in the test's own child, not in skillbook.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from skillbook.distribution.sync.result import SyncProgress
from skillbook.distribution.sync.workspace import sync_book
from skillbook.pipeline.book import Loader


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("workspace")
    parser.add_argument("target")
    parser.add_argument("env")
    parser.add_argument("--pause-at", type=int, default=None)
    parser.add_argument("--log", default=None)
    parser.add_argument("--tag", default="child")
    args = parser.parse_args()
    env = json.loads(args.env)
    book = Loader(args.workspace, env=env, cwd=Path(args.workspace).parent).load()

    def progress(p: SyncProgress) -> None:
        line = f"skill {p.done}/{p.total}" if p.stage == "skill" else "swapped"
        if args.log:
            fd = os.open(args.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, f"{args.tag} {p.stage} {p.done}\n".encode())
            finally:
                os.close(fd)
        print(line, flush=True)
        if p.stage == "skill" and p.done == args.pause_at:
            sys.stdin.readline()

    print("started", flush=True)
    result = sync_book(book, args.target, progress=progress, env=env)
    print("done" if result.ok else "failed", flush=True)


if __name__ == "__main__":
    main()
