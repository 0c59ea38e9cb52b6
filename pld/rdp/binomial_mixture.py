"""Binomial mixtures of Rényi moments with rigorously bounded tails.

The check-in bounds (Liew et al. 2022, Thm 2 eq. 5 and Thm 4; Liew and Takahashi 2022, eq. 17) are
sums

    sum_{k=0}^{n} Bin(k; n, gamma) * M_k(lam)

of per-count Rényi moments ``M_k(lam)``. Evaluating ``M_k`` for every ``k`` costs
``O(n L^2)``; instead ``M_k`` is evaluated exactly over the binomial bulk
``[k_lo, k_hi]`` (tail probability ``tail_probability`` on each side) and the tails
are split into blocks ``[a, b]`` with ``b <= a (1 + 1/block_resolution)`` on which a
caller-supplied envelope bounds ``max_{a <= k <= b} M_k(lam)`` from above. Each block
contributes ``P(a <= K <= b) * envelope(a, b)``, so the result is an upper bound on the
full sum whatever the tail probability; the bulk only decides how tight it is.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.special import logsumexp

from pld.numerics import binomial as binom


def _tail_blocks(first: int, last: int, resolution: int) -> list[tuple[int, int]]:
    """Blocks covering ``[first, last]`` (1 <= first) with ``b <= a + a // resolution``."""
    blocks = []
    a = first
    while a <= last:
        b = min(last, a + max(a // resolution, 0))
        blocks.append((a, b))
        a = b + 1
    return blocks


def log_binomial_mixture(
    n_trials: int,
    gamma: float,
    max_order: int,
    exact: Callable[[int, int], np.ndarray],
    envelope: Callable[[int, int], np.ndarray],
    *,
    log_moment_at_zero: np.ndarray | None = None,
    tail_probability: float = 1e-16,
    block_resolution: int = 64,
) -> np.ndarray:
    """``log sum_k Bin(k; n_trials, gamma) M_k(lam)`` for ``lam = 0 .. max_order``.

    ``M_0`` is ``exp(log_moment_at_zero)``, by default 1 (nobody checks in: both
    datasets give the same output).

    Parameters
    ----------
    exact : callable
        ``exact(lo, hi)`` returns ``log M_k(lam)``, shape ``(hi - lo + 1, max_order + 1)``.
    envelope : callable
        ``envelope(a, b)`` returns an upper bound on ``max_{a<=k<=b} log M_k(lam)``,
        shape ``(max_order + 1,)``; it must be valid for every ``1 <= a <= b <= n_trials``.

    Returns
    -------
    numpy.ndarray
        The log of the mixture, one value per order ``0 .. max_order``.
    """
    width = max_order + 1
    at_zero = np.zeros(width) if log_moment_at_zero is None else log_moment_at_zero
    if gamma <= 0.0:
        return at_zero.copy()
    k_all = np.arange(n_trials + 1)
    log_pmf = binom.logpmf(k_all, n_trials, gamma)
    k_lo = max(1, int(binom.ppf(tail_probability, n_trials, gamma)))
    k_hi = max(k_lo, int(binom.isf(tail_probability, n_trials, gamma)))
    k_hi = min(k_hi, n_trials)
    # the binomial weights sum to 1, so sum_k P(k) M_k = 1 + sum_k P(k) (M_k - 1):
    # summing the non-negative excesses keeps the relative precision of tiny RDPs
    parts = [log_pmf[0] + _log_expm1(at_zero)]
    bulk = exact(k_lo, k_hi)
    parts.append(logsumexp(log_pmf[k_lo : k_hi + 1, None] + _log_expm1(bulk), axis=0))
    tail_parts = []
    blocks = _tail_blocks(1, k_lo - 1, block_resolution) + _tail_blocks(
        k_hi + 1, n_trials, block_resolution
    )
    for a, b in blocks:
        log_block = float(logsumexp(log_pmf[a : b + 1]))
        tail_parts.append(log_block + _log_expm1(envelope(a, b)))
    if tail_parts:
        parts.append(logsumexp(np.array(tail_parts), axis=0))
    log_excess = logsumexp(np.array(parts), axis=0)
    return np.logaddexp(0.0, log_excess)


def _log_expm1(log_moment: np.ndarray) -> np.ndarray:
    """``log(M - 1)`` from ``log M >= 0`` (``-inf`` where ``M = 1``)."""
    x = np.maximum(np.asarray(log_moment, dtype=np.float64), 0.0)
    with np.errstate(divide="ignore"):
        return np.where(
            x > 30.0,
            x + np.log1p(-np.exp(-np.maximum(x, 30.0))),
            np.log(np.expm1(np.minimum(x, 30.0))),
        )
