"""Numba kernels of the Rényi-DP path: log-space arithmetic on moment tables.

A *moment table* of a group of ``m`` shuffled users is the array
``u[k] = log M_m(k)``, ``k = 0 .. L``, where ``M_m(k)`` is the ``k``-th Rényi moment
``E_G[(Mix_m / G)^k]`` of the shuffle Gaussian pair of Liew and Takahashi (2022), Thm 1 (``G`` is
the output law on ``D = (0, ..., 0)``, ``Mix_m`` the law on ``D' = (1, 0, ..., 0)``).
``M_m(0) = M_m(1) = 1`` exactly, so ``u[0] = u[1] = 0``.

Two groups of ``a`` and ``b`` users combine by the binomial Vandermonde identity
(Liew and Takahashi 2022, eq. 14 split over which group receives each of the ``k`` factors):

    M_{a+b}(k) = sum_j  Bin(j; k, a/(a+b)) * M_a(j) * M_b(k-j).

Because ``sum_j Bin(j; k, p) = 1`` this is evaluated as
``M_{a+b}(k) - 1 = sum_j Bin(j; k, p) * (M_a(j) M_b(k-j) - 1)``, a sum of non-negative
terms, entirely in log space: no cancellation even when ``M - 1`` is 1e-12 while
``M`` itself is stored as a log, and no overflow when ``M`` is e^(10^6).
"""

from __future__ import annotations

import math

import numba
import numpy as np

_NEG_INF = -np.inf


@numba.njit(cache=True)
def log_expm1(x: float) -> float:
    """``log(exp(x) - 1)`` for ``x >= 0`` without overflow or cancellation (-inf at 0)."""
    if x <= 0.0:
        return _NEG_INF
    if x > 30.0:
        return x + math.log1p(-math.exp(-x))
    return math.log(math.expm1(x))


@numba.njit(cache=True)
def log1p_exp(x: float) -> float:
    """``log(1 + exp(x))`` without overflow (``x = -inf`` gives 0)."""
    if x > 30.0:
        return x + math.log1p(math.exp(-x))
    return math.log1p(math.exp(x))


@numba.njit(cache=True)
def combine_moment_tables(
    log_moment_a: np.ndarray, size_a: float, log_moment_b: np.ndarray, size_b: float
) -> np.ndarray:
    """Moment table of the union of two groups of ``size_a`` and ``size_b`` users.

    Both inputs hold ``log M(k)`` for ``k = 0 .. L``; the output has the same length.
    Cost O(L^2) with three transcendental functions per term.
    """
    length = log_moment_a.shape[0]
    out = np.zeros(length)
    total = size_a + size_b
    log_p = math.log(size_a) - math.log(total)
    log_q = math.log(size_b) - math.log(total)
    log_factorial = np.empty(length)
    for k in range(length):
        log_factorial[k] = math.lgamma(k + 1.0)
    terms = np.empty(length)
    for k in range(2, length):
        peak = _NEG_INF
        for j in range(k + 1):
            excess = log_expm1(log_moment_a[j] + log_moment_b[k - j])
            if excess == _NEG_INF:
                terms[j] = _NEG_INF
                continue
            value = (
                log_factorial[k]
                - log_factorial[j]
                - log_factorial[k - j]
                + j * log_p
                + (k - j) * log_q
                + excess
            )
            terms[j] = value
            if value > peak:
                peak = value
        if peak == _NEG_INF:
            out[k] = 0.0
            continue
        acc = 0.0
        for j in range(k + 1):
            if terms[j] != _NEG_INF:
                acc += math.exp(terms[j] - peak)
        out[k] = log1p_exp(peak + math.log(acc))
    return out


@numba.njit(cache=True)
def log_binomial_series(log_order_terms: np.ndarray, log_rate: float, max_order: int) -> np.ndarray:
    """``log(1 + sum_{j=2}^{lam} C(lam, j) rate^j exp(c_j))`` for ``lam = 0 .. max_order``.

    ``log_order_terms[j] = c_j`` (``-inf`` drops a term; entries 0 and 1 are ignored).
    This is the shape of every subsampling bound of the Rényi path (Liew and Takahashi 2022, eq. 16;
    Liew et al. 2022, Thm 4 and suppl. eq. 17): all terms are non-negative, so the sum
    is done in log space per order. Cost O(max_order^2).
    """
    out = np.zeros(max_order + 1)
    log_factorial = np.empty(max_order + 1)
    for k in range(max_order + 1):
        log_factorial[k] = math.lgamma(k + 1.0)
    terms = np.empty(max_order + 1)
    for lam in range(2, max_order + 1):
        peak = 0.0  # the leading 1 = exp(0)
        for j in range(2, lam + 1):
            c = log_order_terms[j]
            if c == _NEG_INF:
                terms[j] = _NEG_INF
                continue
            value = (
                log_factorial[lam] - log_factorial[j] - log_factorial[lam - j] + j * log_rate + c
            )
            terms[j] = value
            if value > peak:
                peak = value
        rest = 0.0
        for j in range(2, lam + 1):
            if terms[j] != _NEG_INF:
                rest += math.exp(terms[j] - peak)
        if peak == 0.0:
            out[lam] = math.log1p(rest)  # keeps the relative precision of a tiny sum
        else:
            out[lam] = peak + math.log(math.exp(-peak) + rest)
    return out
