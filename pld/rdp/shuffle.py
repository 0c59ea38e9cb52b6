"""Rényi divergence of the shuffle Gaussian on the canonical pair of datasets.

Every user adds ``N(0, sigma^2)`` to a scalar in ``[0, 1]`` and a trusted shuffler
permutes the ``n`` reports. Liew and Takahashi (2022), Thm 1, eq. 1 evaluate the
Rényi divergence for ``D = (0, ..., 0)`` and ``D' = (1, 0, ..., 0)``:

* ``M(D) = G = N(0, sigma^2 I_n)``,
* ``M(D') = Mix = (1/n) sum_i N(e_i, sigma^2 I_n)`` (eq. 5-6),

    E_G[(Mix/G)^lam] = e^{-lam/2 sigma^2} / n^lam
                       * sum_{k_1+...+k_n = lam} multinomial(lam; k) e^{sum k_i^2 / 2 sigma^2}.

What this number is
-------------------
* The proof (eq. 8) takes the expectation under ``M(D)``, so eq. 1 is
  ``D_lam(M(D') || M(D)) = D_lam(Mix || G)``, although the theorem labels it
  ``D_lam(M(D) || M(D'))``. Both directions are computed here (``direction``).
* Liew and Takahashi (2022) present eq. 1 as *the* RDP of the shuffle Gaussian, arguing the pair is
  without loss of generality (its footnote 4). Liew et al. (2022), Thm 3, eq. 8, Remark 4
  present the same expression as a **lower bound**: it is the divergence of one
  pair of neighbouring datasets, and the mechanism's RDP is a supremum over all
  pairs. The w.l.o.g. argument does not cover the other users' data (if they hold
  values far from the target's, shuffling hides nothing and the divergence is the
  unshuffled ``lam / 2 sigma^2``). Treat the values as a lower bound on the
  mechanism's RDP and as an upper bound only for this pair; every bound of
  :mod:`pld.rdp` built on them (subsampled shuffle, shuffled check-in) inherits this.

Monotonicity in ``n`` (Conjecture 1 of Liew and Takahashi (2022) holds)
------------------------------------------------------------------------
Under ``G`` the likelihood ratio is ``Mix/G = (1/n) sum_i W_i`` with
``W_i = exp((2 x_i - 1) / 2 sigma^2)`` independent and identically distributed, so
the moment is ``E[(mean of n iid W)^lam]``. For ``m <= n`` the mean of ``n`` variables
is the average, over all ``m``-subsets ``S``, of the subset means, and ``x^lam`` is
convex for ``lam >= 1``; Jensen's inequality gives
``E[(mean_n)^lam] <= avg_S E[(mean_S)^lam] = E[(mean_m)^lam]``. Hence the moment (and
``eps(lam)``) is non-increasing in ``n`` for every ``sigma`` and real ``lam >= 1``:
Conjecture 1 of Liew and Takahashi (2022) is true. The check-in bounds use this to bound tails.

Computation
-----------
Algorithm 1 of Liew and Takahashi (2022) enumerates integer partitions of ``lam`` (exponential in
``lam``). Here the moments of all orders ``0 .. L`` are obtained at once by powering
the exponential generating function ``sum_j e^{j(j-1)/2 sigma^2} (x/n)^j / j!`` to
the ``n``-th power, truncated at degree ``L``: the moment of order ``lam`` is
``lam! [x^lam]`` of the power. Normalised per order, one multiplication of two
groups of users is the binomial Vandermonde identity of
:func:`pld.rdp.kernels.combine_moment_tables`, and ``n`` users take
``O(log n)`` multiplications by repeated squaring: ``O(L^2 log n)`` in total, in log
space with only non-negative terms.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from pld.rdp.kernels import combine_moment_tables
from pld.rdp.orders import integer_orders
from pld.validation import integer_at_least, positive

Direction = Literal["mixture||gaussian", "gaussian||mixture", "max"]
_DIRECTIONS = ("mixture||gaussian", "gaussian||mixture", "max")


def single_user_log_moments(sigma: float, max_order: int) -> np.ndarray:
    """``log M_1(k) = k (k - 1) / (2 sigma^2)`` for ``k = 0 .. max_order``.

    Liew and Takahashi (2022), eq. 13.
    """
    k = np.arange(max_order + 1, dtype=np.float64)
    return k * (k - 1.0) / (2.0 * sigma * sigma)


def log_moment_table(n: int, sigma: float, max_order: int) -> np.ndarray:
    """``log E_G[(Mix/G)^k]`` for ``k = 0 .. max_order`` and ``n`` shuffled users.

    Repeated squaring over the binary digits of ``n`` (``O(max_order^2 log n)``).
    """
    single = single_user_log_moments(sigma, max_order)
    result: np.ndarray | None = None
    result_size = 0
    power = single
    power_size = 1
    remaining = n
    while remaining:
        if remaining & 1:
            if result is None:
                result = power
            else:
                result = combine_moment_tables(result, float(result_size), power, float(power_size))
            result_size += power_size
        remaining >>= 1
        if remaining:
            power = combine_moment_tables(power, float(power_size), power, float(power_size))
            power_size *= 2
    assert result is not None
    return result


def power_of_two_log_moment_tables(
    max_n: int, sigma: float, max_order: int
) -> dict[int, np.ndarray]:
    """Moment tables for ``n = 1, 2, 4, ...`` up to ``max_n`` (``O(max_order^2 log max_n)``)."""
    tables = {1: single_user_log_moments(sigma, max_order)}
    size = 1
    while 2 * size <= max_n:
        tables[2 * size] = combine_moment_tables(
            tables[size], float(size), tables[size], float(size)
        )
        size *= 2
    return tables


def consecutive_log_moment_tables(
    first_n: int, last_n: int, sigma: float, max_order: int
) -> np.ndarray:
    """Moment tables for ``n = first_n .. last_n`` (rows), one user added per step.

    ``O(max_order^2 (log first_n + last_n - first_n))``; used for the binomial bulk of
    the shuffled check-in sums and for checking Conjecture 1 of Liew and Takahashi (2022).
    """
    single = single_user_log_moments(sigma, max_order)
    table = np.empty((last_n - first_n + 1, max_order + 1))
    current = log_moment_table(first_n, sigma, max_order)
    table[0] = current
    for row, size in enumerate(range(first_n, last_n), start=1):
        current = combine_moment_tables(current, float(size), single, 1.0)
        table[row] = current
    return table


def shuffle_gaussian(
    n: int,
    sigma: float,
    orders: object,
    *,
    direction: Direction = "mixture||gaussian",
) -> np.ndarray:
    """Rényi divergence of the shuffle Gaussian, canonical pair (Liew and Takahashi 2022, eq. 1).

    The pair is ``D = (0, ..., 0)``, ``D' = (1, 0, ..., 0)``: ``n`` users, each adding
    ``N(0, sigma^2)`` noise, so ``sigma`` is in units of the distance between the two
    differing records. This is the divergence of one pair, hence a **lower bound** on
    the shuffle Gaussian's RDP (Liew et al. 2022, Thm 3); Liew and Takahashi (2022) present it as
    the RDP itself (see the module docstring). It is at most ``lam / (2 sigma^2)`` (Liew and
    Takahashi 2022, Corollary 1), the unshuffled Gaussian.

    Parameters
    ----------
    n : int
        Number of shuffled users, >= 1.
    sigma : float
        Noise standard deviation per user, > 0.
    orders : array_like of int
        Rényi orders ``lam >= 2`` (integers: eq. 1 is a multinomial expansion).
    direction : {"mixture||gaussian", "gaussian||mixture", "max"}
        ``"mixture||gaussian"`` is ``D_lam(M(D') || M(D))``, the expression of eq. 1
        (its proof, eq. 8, averages over ``M(D)``). ``"gaussian||mixture"`` is
        ``D_lam(M(D) || M(D'))``, computed by
        :func:`pld.rdp.shuffle_reverse.gaussian_vs_mixture`. ``"max"`` is the
        larger of the two, the RDP of the pair.

    Returns
    -------
    numpy.ndarray
        ``eps(lam)`` in nats, one value per order, in the order given.
    """
    n = integer_at_least("n", n, 1)
    sigma = positive("sigma", sigma)
    lams = integer_orders(orders)
    if direction not in _DIRECTIONS:
        raise ValueError(f"direction must be one of {_DIRECTIONS} (got {direction!r})")
    if direction == "gaussian||mixture":
        from pld.rdp.shuffle_reverse import gaussian_vs_mixture

        return gaussian_vs_mixture(n, sigma, lams)
    log_moments = log_moment_table(n, sigma, int(lams.max()))
    forward = log_moments[lams] / (lams - 1.0)
    if direction == "max":
        from pld.rdp.shuffle_reverse import gaussian_vs_mixture

        return np.maximum(forward, gaussian_vs_mixture(n, sigma, lams))
    return forward
