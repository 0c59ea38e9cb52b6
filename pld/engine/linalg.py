"""Dot products and matrix products that never wake BLAS threads.

OpenBLAS runs a dot product of more than about 10^4 terms, and a matrix product
of more than 2^18 multiply-adds, on all cores. On a loaded machine (the 2-core
reference machine shared by several jobs) waking those threads stalled a call for
10-70 ms, against microseconds of work: 24 ms of every 26 ms composition of a
33 000-point pmf went into the error bounds' dot products. Here dot products run
in numpy's own loops (``einsum``) and matrix products in row blocks below
OpenBLAS's threading threshold. Both compute sums of products in some order, as
BLAS does, so every rounding bound stated for them (``n u`` of the sum of the
absolute terms) holds unchanged.
"""

from __future__ import annotations

import numpy as np

#: Matrix products of at most this many multiply-adds run in one call; OpenBLAS
#: computes those on one thread (its threshold ``65536 * GEMM_MULTITHREAD_THRESHOLD``).
PRODUCT_TERMS = 2**18


def dot(left: np.ndarray, right: np.ndarray) -> float:
    """``sum_i left_i right_i`` of two 1-d float64 arrays, without BLAS."""
    return float(np.einsum("i,i->", left, right))


def products(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``left @ right`` of 2-d float64 arrays, in row blocks of at most ``PRODUCT_TERMS``
    multiply-adds (each entry is still one BLAS sum of products, so the callers'
    bounds, which hold for any summation order, apply)."""
    rows = max(1, PRODUCT_TERMS // max(1, left.shape[1] * right.shape[1]))
    if left.shape[0] <= rows:
        return left @ right
    out = np.empty((left.shape[0], right.shape[1]))
    for start in range(0, left.shape[0], rows):
        np.matmul(left[start : start + rows], right, out=out[start : start + rows])
    return out
