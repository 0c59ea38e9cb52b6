"""Shuffled check-in with a generic (eps0, delta0)-LDP randomiser (Liew et al. 2022, §3.1 and §3.3).

Building blocks (Liew et al. 2022, App. A eq. 10-11 and App. B.1 eq. 12-16):

* :func:`shuffle_dp`: Feldman, McMillan and Talwar (2021), Thm 3.8: shuffling ``m`` reports of
  an (eps0, delta0)-LDP randomiser is (eps, delta1 + (e^eps + 1) (1 + e^-eps0 / 2) m delta0)-DP
  with ``eps = log(1 + (e^eps0 - 1)/(e^eps0 + 1) (8 sqrt(e^eps0 log(4/delta1)) / sqrt(m)
  + 8 e^eps0 / m))`` when ``eps0 <= log(m / (16 log(2/delta1)))``. Eq. 11 of Liew et al. (2022)
  prints ``(e^eps0 + 1)`` in the delta term; its eq. 14 and 16 and Liew and Takahashi (2022),
  §5.1 use the shuffled ``eps``, as Feldman et al. do, which is used here. Outside the condition
  nothing is amplified and the output is (eps0, delta0)-DP (post-processing of the target's own
  report), as Liew et al. (2022, suppl.), App. D does.
* :func:`subsampled_shuffle_dp`: subsampling ``m`` of ``n`` without replacement
  (Balle, Barthe and Gaboardi 2018, eq. 12): ``(log(1 + (m/n)(e^eps - 1)), (m/n) delta)``.
  Combined with the shuffle bound this is eq. 15-16; Liew et al. (2022) print the factor
  ``(e^eps0 - 1)/e^eps0`` in eq. 15 and Thm 1, but composing eq. 13 with eq. 12 gives
  ``(e^eps0 - 1)/(e^eps0 + 1)``, which is used here.

Accountants (all return per-round RDP curves):

* :func:`checkin_baseline` — the first-cut bound (Liew et al. 2022, Thm 1): fix the number of
  check-ins at ``l`` with ``P(Bin(n, gamma) >= l) <= beta``; one round is
  ``(eps_l, delta_l + beta)``-DP, converted to RDP by Lemma 1.
* :func:`checkin_approach1` — shuffle DP -> RDP (Lemma 1) -> subsampled RDP at rate
  ``k/n`` (Wang, Balle and Kasiviswanathan 2019, Thm 9) -> binomial mixture (eq. 5).
* :func:`checkin_approach2` — subsampled shuffle DP (eq. 15-16) -> RDP (Lemma 1) ->
  binomial mixture (eq. 5).

Warning
-------
All three rest on the DP -> RDP conversion of Liew et al. (2022), Lemma 1
(:func:`pld.rdp.conversions.from_dp`), which is **not** an upper bound: an
(eps, delta)-DP mechanism with delta > 0 can have infinite RDP. Their outputs are
reproductions of the method of Liew et al. (2022), not privacy guarantees.
"""

from __future__ import annotations

import math

import numpy as np

from pld.numerics import binomial as binom
from pld.rdp.binomial_mixture import log_binomial_mixture
from pld.rdp.conversions import from_dp_arrays
from pld.rdp.orders import integer_orders
from pld.rdp.subsampling import subsampled_log_moments
from pld.validation import in_interval, integer_at_least, non_negative


def shuffle_dp(eps0: float, delta0: float, m: int, delta1: float) -> tuple[float, float]:
    """(eps, delta) of shuffling ``m`` (eps0, delta0)-LDP reports (Feldman et al. Thm 3.8).

    Liew et al. (2022), eq. 10-11 (see the module docstring for the delta term). Returns
    ``(eps0, delta0)`` when the theorem's condition
    ``eps0 <= log(m / (16 log(2 / delta1)))`` fails.
    """
    if m < 1 or eps0 > math.log(m / (16.0 * math.log(2.0 / delta1))):
        return eps0, delta0
    amplification = math.expm1(eps0) / (math.exp(eps0) + 1.0)
    eps = math.log1p(
        amplification
        * (
            8.0 * math.sqrt(math.exp(eps0) * math.log(4.0 / delta1)) / math.sqrt(m)
            + 8.0 * math.exp(eps0) / m
        )
    )
    delta = delta1 + (math.exp(eps) + 1.0) * (1.0 + math.exp(-eps0) / 2.0) * m * delta0
    return min(eps, eps0), min(delta, 1.0)


def subsampled_shuffle_dp(
    eps0: float, delta0: float, m: int, n: int, delta1: float
) -> tuple[float, float]:
    """(eps, delta) of shuffling ``m`` of ``n`` users drawn without replacement (eq. 15-16)."""
    eps, delta = shuffle_dp(eps0, delta0, m, delta1)
    rate = m / n
    return math.log1p(rate * math.expm1(eps)), rate * delta


def _validate(n: object, gamma: object, eps0: object, delta0: object, delta1: object):
    n = integer_at_least("n", n, 1)
    gamma = in_interval("gamma", gamma, 0.0, 1.0)
    eps0 = non_negative("eps0", eps0)
    delta0 = in_interval("delta0", delta0, 0.0, 1.0, high_open=True)
    delta1 = in_interval("delta1", delta1, 0.0, 1.0, low_open=True, high_open=True)
    return n, gamma, eps0, delta0, delta1


def checkin_baseline(
    n: int,
    gamma: float,
    eps0: float,
    delta0: float,
    orders: object,
    *,
    delta1: float,
    beta: float,
) -> np.ndarray:
    """Per-round RDP of the first-cut check-in bound of Liew et al. (2022) (Thm 1 + Lemma 1).

    ``l`` is the smallest count with ``P(Bin(n, gamma) >= l) <= beta``; the round is
    ``(eps_l, delta_l + beta)``-DP by eq. 15-16 and converted with
    :func:`pld.rdp.conversions.from_dp` (not a valid upper bound, see the module
    docstring).

    Parameters
    ----------
    n, gamma : int, float
        Users and check-in probability.
    eps0, delta0 : float
        The local randomiser's (eps0, delta0).
    orders : array_like of int
        Orders ``lam >= 2``.
    delta1 : float
        The delta of the shuffling bound (eq. 10), in (0, 1).
    beta : float
        Probability that more than ``l`` users check in, in (0, 1).
    """
    n, gamma, eps0, delta0, delta1 = _validate(n, gamma, eps0, delta0, delta1)
    beta = in_interval("beta", beta, 0.0, 1.0, low_open=True, high_open=True)
    lams = integer_orders(orders)
    l_count = max(1, int(binom.isf(beta, n, gamma)) + 1)
    l_count = min(l_count, n)
    eps_l, delta_l = subsampled_shuffle_dp(eps0, delta0, l_count, n, delta1)
    return from_dp_arrays(eps_l, min(delta_l + beta, 1.0 - 1e-12), lams.astype(np.float64))


def _mixture(
    n: int, gamma: float, lams: np.ndarray, per_count_log_moments, envelope_count
) -> np.ndarray:
    max_order = int(lams.max())

    def exact(lo: int, hi: int) -> np.ndarray:
        return np.array([per_count_log_moments(k) for k in range(lo, hi + 1)])

    def envelope(a: int, b: int) -> np.ndarray:
        return envelope_count(b)

    log_moments = log_binomial_mixture(n, gamma, max_order, exact, envelope)
    return log_moments[lams] / (lams - 1.0)


def checkin_approach2(
    n: int, gamma: float, eps0: float, delta0: float, orders: object, *, delta1: float
) -> np.ndarray:
    """Per-round RDP of Approach 2 of Liew et al. (2022), §3.3 (subsampled shuffling conversion).

    For each count ``k`` the round is ``(eps_k, delta_k)``-DP by eq. 15-16 (rate
    ``k / n``), converted by Lemma 1 and mixed over ``k ~ Bin(n, gamma)`` (eq. 5).
    Tails of the binomial use the count's unamplified (subsampled-only) (eps, delta)
    at the block's largest count. Not a valid upper bound (Lemma 1).
    """
    n, gamma, eps0, delta0, delta1 = _validate(n, gamma, eps0, delta0, delta1)
    lams = integer_orders(orders)
    max_order = int(lams.max())
    all_orders = np.arange(max_order + 1, dtype=np.float64)
    inner = all_orders[2:]

    def log_moments_for(eps: float, delta: float) -> np.ndarray:
        out = np.zeros(max_order + 1)
        out[2:] = (inner - 1.0) * from_dp_arrays(eps, min(delta, 1.0 - 1e-12), inner)
        return out

    def per_count(k: int) -> np.ndarray:
        return log_moments_for(*subsampled_shuffle_dp(eps0, delta0, k, n, delta1))

    def envelope(b: int) -> np.ndarray:
        rate = b / n
        amplified = subsampled_shuffle_dp(eps0, delta0, b, n, delta1)
        return log_moments_for(
            max(math.log1p(rate * math.expm1(eps0)), amplified[0]),
            max(rate * delta0, amplified[1]),
        )

    return _mixture(n, gamma, lams, per_count, envelope)


def checkin_approach1(
    n: int, gamma: float, eps0: float, delta0: float, orders: object, *, delta1: float
) -> np.ndarray:
    """Per-round RDP of Approach 1 of Liew et al. (2022), §3.3 (shuffling conversion).

    For each count ``k``: shuffle DP (eq. 10-11, ``k`` users) -> RDP by Lemma 1 ->
    subsampled RDP at rate ``k / n`` (Wang et al. Thm 9 with ``eps(inf) = inf``) ->
    mixture over ``k ~ Bin(n, gamma)`` (eq. 5). Not a valid upper bound (Lemma 1).
    """
    n, gamma, eps0, delta0, delta1 = _validate(n, gamma, eps0, delta0, delta1)
    lams = integer_orders(orders)
    max_order = int(lams.max())
    inner = np.arange(2, max_order + 1, dtype=np.float64)

    def subsampled_for(eps: float, delta: float, rate: float) -> np.ndarray:
        base = np.zeros(max_order + 1)
        base[2:] = (inner - 1.0) * from_dp_arrays(eps, min(delta, 1.0 - 1e-12), inner)
        return subsampled_log_moments(base, rate)

    def per_count(k: int) -> np.ndarray:
        return subsampled_for(*shuffle_dp(eps0, delta0, k, delta1), k / n)

    def envelope(b: int) -> np.ndarray:
        amplified = shuffle_dp(eps0, delta0, b, delta1)
        return subsampled_for(max(eps0, amplified[0]), max(delta0, amplified[1]), b / n)

    return _mixture(n, gamma, lams, per_count, envelope)
