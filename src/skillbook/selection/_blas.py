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
from typing import Any

__all__ = ["one_blas_thread"]


def one_blas_thread() -> Callable[[], AbstractContextManager[Any]]:
    """A factory of context managers that hold BLAS to one thread (no-op without
    ``threadpoolctl``). Build it once: finding the BLAS libraries takes milliseconds."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return nullcontext
    controller = ThreadpoolController()

    def limit() -> AbstractContextManager[Any]:
        return controller.limit(limits=1, user_api="blas")  # type: ignore[no-any-return]

    return limit
