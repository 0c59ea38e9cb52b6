"""Test oracle: Algorithm 1 of Liew and Takahashi (2022) (integer partitions), shuffle Gaussian.

Independent of :mod:`pld.rdp.shuffle`: it enumerates the integer partitions
of ``lam`` instead of powering a generating function. Exponential in ``lam``; use it
for ``lam <= 30`` (5604 partitions) in tests and benchmarks only.

Corrections to Algorithm 1 as printed (Liew and Takahashi 2022, §3.1 and App. B.2):

* the multiplicity of a partition with ``l`` non-zero parts must count the zero
  parts too: ``n! / ((n - l)! prod_v kappa_v!)`` ordered ``n``-tuples, where
  ``kappa_v`` counts the parts equal to ``v`` (the paper's ``n! / prod kappa!``
  omits the ``n - l`` zeros, which form one more block of equal values);
* the exponent is ``sum k_i^2 / (2 sigma^2)``, not ``sum k_i^2``;
* the returned value is ``log(sum) / (lam - 1)``, not the sum.

Checked by brute force over all ``n^lam`` sequences for tiny ``n`` and ``lam`` in
``tests/rdp/test_rdp_shuffle_gaussian.py``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from functools import lru_cache

import numpy as np
from scipy.special import logsumexp


def integer_partitions(total: int, max_parts: int) -> Iterator[tuple[int, ...]]:
    """All partitions of ``total`` into at most ``max_parts`` positive parts (non-increasing)."""

    def extend(remaining: int, largest: int, prefix: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
        if remaining == 0:
            yield prefix
            return
        if len(prefix) == max_parts:
            return
        for part in range(min(remaining, largest), 0, -1):
            yield from extend(remaining - part, part, (*prefix, part))

    yield from extend(total, total, ())


@lru_cache(maxsize=64)
def _partition_table(order: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per partition of ``order``: number of parts, ``sum k (k-1)``, and the log of
    ``multinomial(order; k) / prod_v kappa_v!`` (independent of ``n`` and ``sigma``)."""
    n_parts, pair_sums, log_counts = [], [], []
    for parts in integer_partitions(order, order):
        n_parts.append(len(parts))
        pair_sums.append(sum(k * (k - 1) for k in parts))
        log_multinomial = math.lgamma(order + 1.0) - sum(math.lgamma(k + 1.0) for k in parts)
        log_arrangements = -sum(math.lgamma(c + 1.0) for c in Counter(parts).values())
        log_counts.append(log_multinomial + log_arrangements)
    return np.array(n_parts), np.array(pair_sums, dtype=np.float64), np.array(log_counts)


def log_moment_excess_by_partitions(n: int, sigma: float, order: int) -> float:
    """``log(E_G[(Mix/G)^lam] - 1)`` by enumerating the partitions of ``lam = order``.

    The moment is an average of ``prod_i e^{k_i (k_i - 1) / 2 sigma^2}`` under the
    multinomial law of ``k`` (Liew and Takahashi 2022, eq. 14), so ``moment - 1`` is the average of
    ``expm1(sum_i k_i (k_i - 1) / 2 sigma^2)``: non-negative terms, summed in log space.
    """
    n_parts, pair_sums, log_counts = _partition_table(order)
    exponent = pair_sums / (2.0 * sigma * sigma)
    usable = (n_parts <= n) & (exponent > 0)
    if not np.any(usable):
        return -math.inf
    n_parts, exponent, log_counts = n_parts[usable], exponent[usable], log_counts[usable]
    log_excess = exponent + np.log(-np.expm1(-exponent))
    # n! / ((n - l)! n^lam) = prod_{i < l} (1 - i/n) * n^(l - lam)
    cumulative = np.concatenate([[0.0], np.cumsum(np.log1p(-np.arange(min(order, n)) / n))])
    log_weight = log_counts + cumulative[n_parts] + (n_parts - order) * math.log(n)
    return float(logsumexp(log_weight + log_excess))


def shuffle_gaussian_by_partitions(n: int, sigma: float, order: int) -> float:
    """``D_lam(Mix || G)`` of Liew and Takahashi (2022), eq. 1 by their Algorithm 1 (corrected)."""
    log_excess = log_moment_excess_by_partitions(n, sigma, order)
    return float(np.logaddexp(0.0, log_excess)) / (order - 1)
