"""Dot products and matrix products that never wake BLAS threads.

OpenBLAS runs a dot product of more than about 10^4 terms, and a matrix product
of more than 2^18 multiply-adds, on all cores. On a loaded machine (the 2-core
reference machine shared by several jobs) waking those threads stalled a call for
10-70 ms, against microseconds of work: 24 ms of every 26 ms composition of a
33 000-point pmf went into the error bounds' dot products. Here dot products run
in numpy's own loops (``einsum``). Matrix products run as one BLAS call on the
calling thread when numpy's bundled OpenBLAS can be told so for this thread alone
(``openblas_set_num_threads_local``, OpenBLAS >= 0.3.27; the previous setting is
restored after the call), else in row blocks below OpenBLAS's threading
threshold, which costs 2-3 times as much (a (162, 768) @ (768, 48) product:
0.23 ms in one single-threaded call, 0.62 ms in 23 row blocks). Both compute sums
of products in some order, as BLAS does, so every rounding bound stated for them
(``n u`` of the sum of the absolute terms) holds unchanged.
"""

from __future__ import annotations

import ctypes
import functools
import glob
import os
from collections.abc import Callable

import numpy as np

#: Matrix products of at most this many multiply-adds run in one call; OpenBLAS
#: computes those on one thread (its threshold ``65536 * GEMM_MULTITHREAD_THRESHOLD``).
PRODUCT_TERMS = 2**18


def dot(left: np.ndarray, right: np.ndarray) -> float:
    """``sum_i left_i right_i`` of two 1-d float64 arrays, without BLAS."""
    return float(np.einsum("i,i->", left, right))


@functools.cache
def _thread_local_setter() -> Callable[[int], int] | None:
    """``openblas_set_num_threads_local`` of the OpenBLAS bundled with numpy's wheel
    (``numpy.libs`` or ``numpy/.dylibs``), or None when numpy links another BLAS or
    an OpenBLAS without it (then :func:`products` splits its rows instead)."""
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]
    except (KeyError, TypeError):
        return None
    if blas != "scipy-openblas":
        return None
    here = os.path.dirname(np.__file__)
    for path in glob.glob(here + ".libs/*openblas*") + glob.glob(f"{here}/.dylibs/*openblas*"):
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for name in ("openblas_set_num_threads_local", "scipy_openblas_set_num_threads_local64_"):
            setter = getattr(library, name, None)
            if setter is not None:
                setter.argtypes, setter.restype = [ctypes.c_int], ctypes.c_int
                return setter
    return None


def products(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``left @ right`` of 2-d float64 arrays on the calling thread: one BLAS call told
    to use this thread alone, or row blocks of at most ``PRODUCT_TERMS`` multiply-adds
    (each entry is one BLAS sum of products either way, so the callers' bounds, which
    hold for any summation order, apply)."""
    rows = max(1, PRODUCT_TERMS // max(1, left.shape[1] * right.shape[1]))
    if left.shape[0] <= rows:
        return left @ right
    setter = _thread_local_setter()
    if setter is not None:
        previous = setter(1)
        try:
            return left @ right
        finally:
            setter(previous)
    out = np.empty((left.shape[0], right.shape[1]))
    for start in range(0, left.shape[0], rows):
        np.matmul(left[start : start + rows], right, out=out[start : start + rows])
    return out
