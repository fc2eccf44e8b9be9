"""A value made on first use, then kept: :class:`Once`.

Used where a result is often not needed at all (a book's status report, which a
prompt never reads). Threads asking at the same time wait for one ``make()``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar, cast

__all__ = ["Once"]

T = TypeVar("T")


class Once(Generic[T]):
    """``make()`` called on the first :meth:`get`, its result returned from then on."""

    __slots__ = ("_lock", "_make", "_value")

    def __init__(self, make: Callable[[], T]) -> None:
        self._make: Callable[[], T] | None = make
        self._value: object = None
        self._lock = threading.Lock()

    def get(self) -> T:
        if self._make is not None:
            with self._lock:
                make = self._make
                if make is not None:
                    self._value = make()
                    self._make = None  # dropped with what it held on to
        return cast(T, self._value)
