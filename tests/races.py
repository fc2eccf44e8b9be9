"""A folder swapped for a symlink to an outside folder, over and over, in a thread.

The stress tests of the file readers (discovery, the MCP server, the agent's ``read``
tool) run a bounded number of reads while a :class:`FolderSwapper` churns one folder
on their path, and assert that no read ever returns the outside folder's content.
Now and then they also read with the folder held in place (:meth:`FolderSwapper.in_place`)
and assert that those reads succeed: the churn around them breaks nothing, and the
test is not passing only because every read failed.
"""

from __future__ import annotations

import contextlib
import os
import random
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

#: Text that only the outside folder holds; a read that returns it escaped.
OUTSIDE_MARKER = "OUTSIDE-THE-SKILL"
#: A safety stop for the swapping thread (the readers' loops are what is bounded).
MAX_SWAPS = 1_000_000
#: How often a reader waiting for the folder checks that the swapping thread lives.
POLL_S = 1.0
#: While swapping, threads take turns this often (seconds) instead of every 5 ms, so
#: the swaps interleave with the readers' system calls rather than with whole reads.
SWITCH_INTERVAL_S = 1e-5
#: The symlink is held for up to this many system calls (the real folder for up to
#: ``real_hold`` times as many): swaps fall at every phase of a reader's
#: check-then-open sequence, and whole reads still get through between them.
MAX_HOLD_CALLS = 40


class FolderSwapper:
    """Swaps ``target`` for a symlink to ``outside`` and back until the block ends.

    Each round: the real folder is renamed aside, a symlink to ``outside`` takes its
    name, the symlink is removed and the folder is renamed back. The folder is always
    restored on exit.
    """

    def __init__(self, target: Path, outside: Path, *, seed: int = 0, real_hold: int = 10) -> None:
        self.target = target
        self.outside = outside
        self.aside = target.with_name(target.name + ".aside")
        self.swaps = 0
        self._random = random.Random(seed)
        self._real_hold = real_hold * MAX_HOLD_CALLS
        self._pause = threading.Event()
        self._paused = threading.Event()
        self._resume = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="folder-swapper", daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set() and self.swaps < MAX_SWAPS:
            if self._pause.is_set():
                self._paused.set()
                self._resume.wait()
                self._resume.clear()
                continue
            os.rename(self.target, self.aside)
            try:
                os.symlink(self.outside, self.target, target_is_directory=True)
                self.swaps += 1
                self._hold(MAX_HOLD_CALLS)
                os.unlink(self.target)
            finally:
                os.rename(self.aside, self.target)
            self._hold(self._real_hold)

    @contextlib.contextmanager
    def in_place(self) -> Iterator[None]:
        """The real folder, held in place for the block; the swapping resumes after."""
        self._pause.set()
        while self._thread.is_alive() and not self._paused.wait(POLL_S):
            pass
        try:
            yield
        finally:
            self._pause.clear()
            self._paused.clear()
            self._resume.set()

    def _hold(self, most: int) -> None:
        for _ in range(self._random.randint(0, most)):
            os.lstat(self.target.parent)

    def __enter__(self) -> FolderSwapper:
        self._interval = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._resume.set()
        self._thread.join()
        sys.setswitchinterval(self._interval)
        if not self.target.is_dir() or self.target.is_symlink():  # the thread died mid-swap
            with contextlib.suppress(OSError):
                self.target.unlink()
            os.rename(self.aside, self.target)


def outside_copy(folder: Path, outside: Path) -> None:
    """Mirror ``folder``'s files under ``outside`` with the marker as their content."""
    for path in folder.rglob("*"):
        if path.is_file():
            twin = outside / path.relative_to(folder)
            twin.parent.mkdir(parents=True, exist_ok=True)
            if path.name == "SKILL.md":
                text = path.read_text().replace("description: ", f"description: {OUTSIDE_MARKER} ")
                twin.write_text(text + f"\n{OUTSIDE_MARKER}\n")
            else:
                twin.write_text(f"{OUTSIDE_MARKER}\n")
