"""skillbook.base.once: a value made on first use, then kept."""

from __future__ import annotations

import threading

from skillbook.base.once import Once


def test_made_on_first_use_then_kept() -> None:
    made: list[int] = []

    def make() -> list[int]:
        made.append(1)
        return [len(made)]

    once = Once(make)
    assert made == []
    first = once.get()
    assert once.get() is first and made == [1]


def test_threads_asking_at_once_share_one_make() -> None:
    start = threading.Barrier(8)
    made: list[object] = []

    def make() -> object:
        made.append(object())
        return made[-1]

    once: Once[object] = Once(make)
    got: list[object] = []

    def ask() -> None:
        start.wait()
        got.append(once.get())

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 1
    assert len(got) == 8 and all(g is made[0] for g in got)
