"""The flush thread: every job at each interval, and one job sooner when it asks.

A job that wakes the thread early runs alone: the download counter asks after
``FLUSH_BATCH`` downloads, and the rate limiter's counters (flushed with it before)
must still be written once an interval, not at every batch of downloads.
"""

from __future__ import annotations

import threading
from typing import Any

from skillbook.distribution.hub.hot import FLUSH_BATCH, DownloadCounter, Flusher

from .helpers import eventually


class Job:
    def __init__(self) -> None:
        self.runs = 0
        self.ran = threading.Event()

    def __call__(self) -> None:
        self.runs += 1
        self.ran.set()


def test_a_job_that_asks_runs_alone_before_the_interval() -> None:
    downloads, limits = Job(), Job()
    flusher = Flusher(3600, [downloads, limits])
    flusher.ensure_started()
    try:
        flusher.wake(downloads)
        eventually(lambda: downloads.runs == 1, "the job that asked ran")
        flusher.wake(downloads)
        eventually(lambda: downloads.runs == 2, "it ran again when it asked again")
        assert limits.runs == 0
        flusher.wake()  # no job named: every job
        eventually(lambda: limits.runs == 1 and downloads.runs == 3, "every job ran")
    finally:
        flusher.stop()
    # The stop flushes every job once more (shutdown).
    assert (downloads.runs, limits.runs) == (4, 2)


def test_every_job_runs_at_each_interval_and_a_failing_one_stops_nothing() -> None:
    def broken() -> None:
        raise RuntimeError("the database is away")

    first, second = Job(), Job()
    flusher = Flusher(0.05, [first, broken, second])
    flusher.ensure_started()
    try:
        eventually(lambda: first.runs >= 3 and second.runs >= 3, "three intervals")
    finally:
        flusher.stop()


def test_the_download_counter_asks_for_its_own_flush_after_a_batch() -> None:
    asked: list[Any] = []
    counter = DownloadCounter(None, batched=True, wake=asked.append)  # type: ignore[arg-type]
    for i in range(FLUSH_BATCH - 1):
        counter.add(i % 7)
    assert asked == []
    counter.add(1)
    assert asked == [counter.flush]
