"""``skillbook.base.locks.locked``: one holder at a time, across open files and threads."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from skillbook.base.locks import locked

pytestmark = pytest.mark.skipif(os.name != "posix", reason="flock")


def test_a_second_holder_waits_for_the_first(tmp_path: Path) -> None:
    lock = tmp_path / "deep" / "state.lock"
    order: list[str] = []
    trying = threading.Event()

    def second() -> None:
        trying.set()
        with locked(lock):
            order.append("second")

    with locked(lock):
        assert lock.exists()  # created, parents included
        worker = threading.Thread(target=second)
        worker.start()
        trying.wait()
        order.append("first")
    worker.join()
    assert order == ["first", "second"]
