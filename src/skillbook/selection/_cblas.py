"""numpy's own OpenBLAS, called through ``ctypes`` without importing numpy.

A fresh ``skillbook select`` answered from a saved selector spent half of its CPU
importing numpy (about 110 ms of Python-level module set-up; the BLAS library itself
loads in about 5 ms). Its arithmetic is a few matrix-vector products (the cosines,
the multilingual encoder's layers for one request) and elementwise steps on
vectors of a few hundred values: the products run here, in the same library numpy
would call (the one its wheel ships in ``numpy.libs``), and the rest in plain Python
(:mod:`skillbook.selection.plain`).

:func:`blas` returns None when the library cannot be found or does not export the
functions (another numpy build, a numpy linked to a system BLAS): the caller then
uses numpy. Buffers are passed by address: ``array('f')`` objects, or writable
buffers such as a copy-on-write ``mmap`` (``mmap.ACCESS_COPY``: nothing is copied
unless written, and nothing here writes to them).
"""

from __future__ import annotations

import ctypes
import os
from array import array
from typing import Any, Final

__all__ = ["Blas", "address", "blas"]

_ROW_MAJOR: Final = 101
_NO_TRANS: Final = 111
_TRANS: Final = 112


def address(buffer: Any, offset: int = 0) -> int:
    """The address of byte ``offset`` of a writable buffer (``array``, ``mmap``, ``bytearray``)."""
    if isinstance(buffer, array):
        return int(buffer.buffer_info()[0]) + offset
    return ctypes.addressof(ctypes.c_char.from_buffer(buffer, offset))


class Blas:
    """``sgemv`` and ``sgemm`` of one OpenBLAS library, row-major float32."""

    def __init__(self, lib: Any, prefix: str, suffix: str, index: Any) -> None:
        self._gemv = getattr(lib, f"{prefix}cblas_sgemv{suffix}")
        self._gemm = getattr(lib, f"{prefix}cblas_sgemm{suffix}")
        c_int, c_float, ptr = ctypes.c_int, ctypes.c_float, ctypes.c_void_p
        self._gemv.restype = None
        self._gemv.argtypes = [
            c_int, c_int, index, index, c_float, ptr, index, ptr, index, c_float, ptr, index,
        ]  # fmt: skip
        self._gemm.restype = None
        self._gemm.argtypes = [
            c_int, c_int, c_int, index, index, index, c_float,
            ptr, index, ptr, index, c_float, ptr, index,
        ]  # fmt: skip

    def matvec(self, a: int, rows: int, cols: int, x: array[float]) -> array[float]:
        """``A @ x`` for the row-major ``rows × cols`` float32 matrix at address ``a``."""
        y = array("f", bytes(4 * rows))
        if rows and cols:
            self._gemv(
                _ROW_MAJOR, _NO_TRANS, rows, cols, 1.0, a, cols, address(x), 1, 0.0, address(y), 1
            )
        return y

    def vecmat(self, x: array[float], a: int, rows: int, cols: int) -> array[float]:
        """``x @ A`` for the row-major ``rows × cols`` float32 matrix at address ``a``."""
        y = array("f", bytes(4 * cols))
        if rows and cols:
            self._gemv(
                _ROW_MAJOR, _TRANS, rows, cols, 1.0, a, cols, address(x), 1, 0.0, address(y), 1
            )
        return y

    def matmul(self, x: array[float], m: int, k: int, b: int, n: int) -> array[float]:
        """``X @ B``: ``X`` an ``m × k`` row-major ``array('f')``, ``B`` a ``k × n``
        row-major float32 matrix at address ``b``; an ``m × n`` ``array('f')``."""
        c = array("f", bytes(4 * m * n))
        if m and n and k:
            self._gemm(
                _ROW_MAJOR, _NO_TRANS, _NO_TRANS, m, n, k, 1.0,
                address(x), k, b, n, 0.0, address(c), n,
            )  # fmt: skip
        return c


_FOUND: list[Blas | None] = []


def blas() -> Blas | None:
    """numpy's bundled OpenBLAS (loaded once per process), or None."""
    if not _FOUND:
        _FOUND.append(_load())
    return _FOUND[0]


def _load() -> Blas | None:
    import importlib.util

    try:
        spec = importlib.util.find_spec("numpy")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    libs = os.path.join(os.path.dirname(next(iter(spec.submodule_search_locations))), "numpy.libs")
    try:
        names = sorted(n for n in os.listdir(libs) if "openblas" in n and ".so" in n)
    except OSError:
        return None
    # numpy's wheels ship scipy-openblas: an ILP64 build whose symbols carry a prefix
    # and a suffix; older ones shipped plain names.
    variants = (
        ("scipy_", "64_", ctypes.c_int64),
        ("", "64_", ctypes.c_int64),
        ("scipy_", "", ctypes.c_int),
        ("", "", ctypes.c_int),
    )
    for name in names:
        try:
            lib = ctypes.CDLL(os.path.join(libs, name))
        except OSError:
            continue
        for prefix, suffix, index in variants:
            try:
                return Blas(lib, prefix, suffix, index)
            except AttributeError:
                continue
    return None
