"""The RDP bound of Girgis, Data and Diggavi (2021) for the subsampled shuffle model.

``k`` of ``n`` users are drawn without replacement, each applies a discrete
``eps0``-LDP randomiser and the ``k`` reports are shuffled. Girgis, Data and Diggavi
(2021), Thm 2, as quoted by Liew et al. (2022, suppl.), Lemma 6, eq. 17, bound its RDP for integer
``lam >= 2`` by

    1/(lam-1) log( 1 + 4 C(lam,2) gamma^2 (e^eps0 - 1)^2 / (kbar e^eps0)
                   + sum_{j=3}^{lam} C(lam,j) gamma^j j Gamma(j/2)
                                     (2 (e^{2 eps0} - 1)^2 / (kbar e^{2 eps0}))^{j/2}
                   + Upsilon_k ),

    kbar = floor((k - 1) / (2 e^eps0)) + 1,   gamma = k / n,
    Upsilon_k = ((1 + gamma x)^lam - 1 - lam gamma x) e^{-(k-1) / (8 e^eps0)},
    x = (e^{2 eps0} - 1) / e^eps0.

This is the comparison curve of Koskela et al. (2023), Fig. 3. The constant inside the
``j/2``-th power is taken as printed in Liew et al. (2022, suppl.) (``2 (e^{2 eps0} - 1)^2 /
...``); it has not been checked against Girgis et al.'s own paper (docs/references.md, errata).
``Upsilon_k = sum_{j>=2} C(lam,j) (gamma x)^j e^{-(k-1)/(8 e^eps0)}`` is folded into the
same non-negative series, so everything is summed in log space.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from pld.rdp.kernels import log_binomial_series
from pld.rdp.orders import integer_orders
from pld.validation import integer_at_least, non_negative


def girgis_subsampled_shuffle(n: int, k: int, eps0: float, orders: object) -> np.ndarray:
    """RDP of the subsampled shuffle model with an ``eps0``-LDP randomiser (module docstring).

    Parameters
    ----------
    n : int
        Population size, >= 1.
    k : int
        Users sampled per round (without replacement), 1 <= k <= n.
    eps0 : float
        Local randomiser's pure-DP epsilon (nats), >= 0.
    orders : array_like of int
        Orders ``lam >= 2``.

    Returns
    -------
    numpy.ndarray
        ``eps(lam)`` in nats per order, for one round.
    """
    n = integer_at_least("n", n, 1)
    k = integer_at_least("k", k, 1)
    if k > n:
        raise ValueError(f"k must be an integer in [1, n] = [1, {n}] (got {k})")
    eps0 = non_negative("eps0", eps0)
    lams = integer_orders(orders)
    max_order = int(lams.max())
    if eps0 == 0.0:
        return np.zeros(lams.shape)
    gamma = k / n
    kbar = math.floor((k - 1) / (2.0 * math.exp(eps0))) + 1
    j = np.arange(max_order + 1, dtype=np.float64)
    log_x = math.log(math.expm1(2.0 * eps0)) - eps0
    log_second = math.log(4.0) + 2.0 * math.log(math.expm1(eps0)) - math.log(kbar) - eps0
    log_scale = math.log(2.0) + 2.0 * math.log(math.expm1(2.0 * eps0)) - math.log(kbar) - 2 * eps0
    log_moment_terms = np.full(max_order + 1, -np.inf)
    high = j[3:]
    log_moment_terms[3:] = np.log(high) + gammaln(high / 2.0) + (high / 2.0) * log_scale
    log_moment_terms[2] = log_second
    log_upsilon = j * log_x - (k - 1) / (8.0 * math.exp(eps0))
    log_upsilon[:2] = -np.inf
    log_terms = np.logaddexp(log_moment_terms, log_upsilon)
    log_moments = log_binomial_series(log_terms, math.log(gamma), max_order)
    return log_moments[lams] / (lams - 1.0)
