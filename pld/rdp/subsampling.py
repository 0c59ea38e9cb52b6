"""RDP amplification by subsampling without replacement (Wang, Balle and Kasiviswanathan 2019).

Theorem 9 of Wang et al. (2019) (quoted in Liew and Takahashi (2022), App. A.1, and Liew et al.
(2022), Definition 5 and below): if a mechanism on datasets of size ``m`` satisfies
``(j, eps(j))``-RDP for every integer ``j`` (replace-one neighbours), then running it on ``m``
records drawn without replacement from ``n`` (``gamma = m/n``) satisfies, for integer
``lam >= 2``,

    eps'(lam) <= 1/(lam-1) log( 1 + gamma^2 C(lam,2) min{4 (e^{eps(2)} - 1),
                                                  e^{eps(2)} min{2, (e^{eps(inf)} - 1)^2}}
                                + sum_{j=3}^{lam} gamma^j C(lam,j) e^{(j-1) eps(j)}
                                                  min{2, (e^{eps(inf)} - 1)^j} ).

Liew and Takahashi (2022) print ``(e^{eps(inf) - 1})``; the exponent placement is an
extraction error (Wang et al. write ``(e^{eps(inf)} - 1)``). With ``eps(inf) = inf``
(Gaussian noise) the bound is Liew and Takahashi (2022), eq. 16. The subsampled mechanism is also
never less private than the base mechanism (the output is a mixture, with equal weights
under both datasets, of base outputs on identical or neighbouring subsets, and the
Rényi moment is jointly convex), so the minimum of the two bounds is returned; at
``gamma = 1`` this is the base RDP itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from pld.rdp.kernels import log_binomial_series
from pld.rdp.orders import integer_orders
from pld.rdp.shuffle import log_moment_table
from pld.validation import in_interval, integer_at_least, non_negative, positive


def subsampled_log_moments(
    base_log_moments: np.ndarray, gamma: float, eps_infinity: float = math.inf
) -> np.ndarray:
    """Log Rényi moments ``(lam - 1) eps'(lam)``, ``lam = 0 .. L``, of Wang et al.'s Thm 9.

    ``base_log_moments[j] = (j - 1) eps(j)`` for ``j = 0 .. L`` (entries 0, 1 unused);
    ``gamma`` and ``eps_infinity`` are validated by the caller. Returns
    ``min(Thm 9 bound, base)`` per order.
    """
    max_order = base_log_moments.shape[0] - 1
    j = np.arange(max_order + 1, dtype=np.float64)
    if math.isinf(eps_infinity):
        log_cap = np.full(max_order + 1, math.log(2.0))
    else:
        log_cap = np.minimum(math.log(2.0), j * math.log(math.expm1(eps_infinity)))
    log_terms = base_log_moments + log_cap
    if max_order >= 2:
        eps2 = base_log_moments[2]
        log_second = min(
            math.log(4.0) + math.log(math.expm1(eps2)) if eps2 > 0 else -math.inf,
            eps2 + float(log_cap[2]),
        )
        log_terms[2] = log_second
    if gamma <= 0.0:
        return np.zeros(max_order + 1)
    bound = log_binomial_series(log_terms, math.log(gamma), max_order)
    return np.minimum(bound, base_log_moments)


def subsampled(
    base_rdp: Callable[[np.ndarray], np.ndarray],
    gamma: float,
    orders: object,
    *,
    eps_infinity: float = math.inf,
) -> np.ndarray:
    """RDP of a mechanism run on a without-replacement subsample (Wang et al. 2019, Thm 9).

    Parameters
    ----------
    base_rdp : callable
        ``base_rdp(orders)`` returns the base mechanism's RDP ``eps(j)`` (nats) at the
        integer orders ``j = 2 .. max(orders)`` passed to it (replace-one neighbours).
    gamma : float
        Sampling ratio ``m / n`` in [0, 1].
    orders : array_like of int
        Orders ``lam >= 2``.
    eps_infinity : float
        ``eps(inf)`` of the base mechanism (its pure-DP epsilon), ``inf`` if unbounded.

    Returns
    -------
    numpy.ndarray
        ``eps'(lam)`` in nats per order (the minimum of Thm 9 and the base RDP).
    """
    lams = integer_orders(orders)
    gamma = in_interval("gamma", gamma, 0.0, 1.0)
    if not math.isinf(eps_infinity):
        eps_infinity = non_negative("eps_infinity", eps_infinity)
    max_order = int(lams.max())
    inner = np.arange(2, max_order + 1)
    base = np.asarray(base_rdp(inner), dtype=np.float64)
    if base.shape != inner.shape or np.any(np.isnan(base)) or np.any(base < 0):
        raise ValueError("base_rdp must return one RDP value >= 0 per order it is given")
    base_log_moments = np.zeros(max_order + 1)
    base_log_moments[2:] = (inner - 1.0) * base
    log_moments = subsampled_log_moments(base_log_moments, gamma, eps_infinity)
    return log_moments[lams] / (lams - 1.0)


def subsampled_shuffle_gaussian(n: int, m: int, sigma: float, orders: object) -> np.ndarray:
    """Subsampled shuffle Gaussian (Liew and Takahashi 2022, eq. 16; Liew et al. 2022, Thm 5).

    ``m`` of ``n`` users are drawn without replacement; each adds ``N(0, sigma^2)`` and
    the ``m`` reports are shuffled. Eq. 16 is Thm 9 of Wang et al. (2019) applied to
    :func:`pld.rdp.shuffle.shuffle_gaussian` with ``m`` users and
    ``eps(inf) = inf``.

    Inherits the status of the shuffle-Gaussian expression: it bounds the subsampled
    mechanism only for pairs of datasets on which the canonical pair of Liew and Takahashi (2022)
    Thm 1 is the worst case (Liew et al. 2022, presents that expression as a lower bound).

    Parameters
    ----------
    n : int
        Population size, >= 1.
    m : int
        Number of sampled users, 1 <= m <= n (gamma = m / n).
    sigma : float
        Noise standard deviation per user (units of the distance between the
        differing records), > 0.
    orders : array_like of int
        Orders ``lam >= 2``.

    Returns
    -------
    numpy.ndarray
        ``eps(lam)`` in nats per order.
    """
    n = integer_at_least("n", n, 1)
    m = integer_at_least("m", m, 1)
    if m > n:
        raise ValueError(f"m must be an integer in [1, n] = [1, {n}] (got {m})")
    sigma = positive("sigma", sigma)
    lams = integer_orders(orders)
    base_log_moments = log_moment_table(m, sigma, int(lams.max()))
    log_moments = subsampled_log_moments(base_log_moments, m / n)
    return log_moments[lams] / (lams - 1.0)
