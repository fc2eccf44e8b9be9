"""One BLAS thread per call: numpy's matrix products without thread oversubscription.

OpenBLAS starts one thread per core for every product. On a machine whose cores
are busy (two cores shared with other work), those threads spin waiting for each
other: measured here, a request's 10,000 × 512 cosine product took 15.5 ms with
two threads and 2.1 ms with one, and encoding 1,000 descriptions 29 s against
9.7 s. The selector's products are small or many (the encoder parallelises over
batches itself), so they run on one BLAS thread, through ``threadpoolctl``. The
limit is process-wide while it holds, and the previous setting is restored after.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

TYPE_CHECKING = False  # not `typing` at run time: a fresh `select` imports this module
if TYPE_CHECKING:
    from typing import Any

__all__ = ["one_blas_thread", "start_single_threaded"]

#: True when this process started BLAS with one thread (:func:`start_single_threaded`).
_single = False


def start_single_threaded() -> None:
    """Have OpenBLAS start with one thread, when numpy is not imported yet and the
    user asked for no other count. At import OpenBLAS starts a thread per core, whose
    spinning cost as much CPU as the rest of numpy's import (measured in a fresh
    ``select``: 190 ms against 90 ms); a process whose products all run on one thread
    anyway (:func:`one_blas_thread`) then needs neither them nor ``threadpoolctl``."""
    global _single
    import os
    import sys

    if "numpy" not in sys.modules and os.environ.get("OPENBLAS_NUM_THREADS", "1") == "1":
        os.environ["OPENBLAS_NUM_THREADS"] = "1"
        _single = True


def one_blas_thread() -> Callable[[], AbstractContextManager[Any]]:
    """A factory of context managers that hold BLAS to one thread (no-op without
    ``threadpoolctl``, or when BLAS started with one). Build it once: finding the BLAS
    libraries takes milliseconds."""
    if _single:
        return nullcontext
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return nullcontext
    controller = ThreadpoolController()

    def limit() -> AbstractContextManager[Any]:
        return controller.limit(limits=1, user_api="blas")  # type: ignore[no-any-return]

    return limit
