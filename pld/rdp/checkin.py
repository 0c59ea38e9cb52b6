"""Shuffled and distributed check-in with Gaussian noise, in Rényi DP.

Liew et al. (2022) and Liew and Takahashi (2022).

In each round every one of ``n`` users checks in independently with probability
``gamma``; the ``K ~ Bin(n, gamma)`` participants either send ``x_i + N(0, sigma^2)``
to a shuffler (*shuffled* check-in) or contribute to a sum that only reveals
``sum x_i + N(0, K sigma^2)`` (*distributed* check-in).

Given ``K = k``, the target is among the participants with probability ``k / n``, so
the round is a subsampling without replacement at rate ``k / n`` of a base mechanism
on ``k`` users, and (Liew et al. 2022, Thm 2, eq. 5, App. B.2)

    E[(P/Q)^lam] = sum_{k=0}^{n} Bin(k; n, gamma) E_{q_k}[(p_k/q_k)^lam],

with ``k = 0`` contributing 1 (identical outputs). Liew and Takahashi (2022), eq. 17 starts
the sum at ``k = 1``, dropping the positive ``k = 0`` term, and writes the per-``k`` rate as
``gamma``; the derivation of Liew et al. (2022), App. B.2 gives ``k / n``, which is used here.
The sum is evaluated by :func:`pld.rdp.binomial_mixture.log_binomial_mixture`:
exactly over the binomial bulk, with rigorous envelopes on the tails.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from scipy.special import logsumexp

from pld.numerics import binomial as binom
from pld.rdp.binomial_mixture import log_binomial_mixture
from pld.rdp.orders import integer_orders
from pld.rdp.shuffle import (
    consecutive_log_moment_tables,
    log_moment_table,
    power_of_two_log_moment_tables,
)
from pld.rdp.subsampling import subsampled_log_moments
from pld.validation import in_interval, integer_at_least, positive


def _validate_common(n: object, gamma: object, sigma: object, orders: object):
    n = integer_at_least("n", n, 1)
    gamma = in_interval("gamma", gamma, 0.0, 1.0)
    sigma = positive("sigma", sigma)
    lams = integer_orders(orders)
    return n, gamma, sigma, lams


def shuffled_checkin_gaussian(
    n: int, gamma: float, sigma: float, orders: object, *, tail_probability: float = 1e-16
) -> np.ndarray:
    """RDP of shuffled check-in with the shuffle Gaussian (Liew et al. 2022, eq. 5).

    Liew and Takahashi (2022), eq. 17 with the rate of Liew et al. (2022), App. B.2.

    The per-count moment is the subsampled shuffle Gaussian (Liew and Takahashi 2022, eq. 16, rate
    ``k / n``, ``k`` shuffled users), capped by the unsampled moment. The binomial sum
    is exact over the bulk ``[k_lo, k_hi]`` (each tail has probability
    ``tail_probability``); outside it each block ``[a, b]`` of counts is bounded with
    rate ``b / n`` and the shuffle-Gaussian moments of ``a' <= a`` users (``a'`` the
    bulk edge or a power of two), which is rigorous because those moments do not
    increase with the number of users (see :mod:`pld.rdp.shuffle`: Conjecture 1 of Liew and
    Takahashi (2022) holds).

    It inherits the status of :func:`pld.rdp.shuffle.shuffle_gaussian`: the
    shuffle-Gaussian moments are those of the canonical pair of datasets, which
    Liew et al. (2022), Thm 3 present as a lower bound on the shuffle Gaussian's RDP.

    Parameters
    ----------
    n : int
        Number of users, >= 1.
    gamma : float
        Check-in probability in [0, 1].
    sigma : float
        Noise standard deviation per report (units of the distance between the
        differing records), > 0.
    orders : array_like of int
        Orders ``lam >= 2``.
    tail_probability : float
        Binomial mass left to the tail envelopes on each side (tightness only).

    Returns
    -------
    numpy.ndarray
        ``eps(lam)`` in nats per order, for one round.
    """
    n, gamma, sigma, lams = _validate_common(n, gamma, sigma, orders)
    tail_probability = in_interval("tail_probability", tail_probability, 0.0, 0.5, low_open=True)
    max_order = int(lams.max())
    anchors = power_of_two_log_moment_tables(n, sigma, max_order)

    def exact(lo: int, hi: int) -> np.ndarray:
        tables = consecutive_log_moment_tables(lo, hi, sigma, max_order)
        anchors[lo] = tables[0]
        anchors[hi] = tables[-1]
        return np.array(
            [
                subsampled_log_moments(row, k / n)
                for k, row in zip(range(lo, hi + 1), tables, strict=True)
            ]
        )

    def envelope(a: int, b: int) -> np.ndarray:
        anchor = max(size for size in anchors if size <= a)
        return subsampled_log_moments(anchors[anchor], b / n)

    log_moments = log_binomial_mixture(
        n, gamma, max_order, exact, envelope, tail_probability=tail_probability
    )
    return log_moments[lams] / (lams - 1.0)


def shuffled_checkin_gaussian_conjectured(
    n: int, gamma: float, sigma: float, orders: object, *, deltas: object = None
) -> np.ndarray:
    """The fast shuffled check-in bound of Liew and Takahashi (2022), Thm 3, eq. 18 (conjectural).

    ``eps(lam) = 1/(lam-1) log(f(1) e^{-Delta^2 n gamma / 2} + f((1-Delta) n gamma + 1))``,
    minimised over ``Delta`` in ``deltas`` (default 0.02, 0.04, ..., 0.98), where
    ``f(k) = e^{(lam-1) eps^SSG_{gamma,k}(lam)}`` is the subsampled shuffle Gaussian
    *moment* at the fixed rate ``gamma`` with ``k`` shuffled users. Eq. 18 as printed
    puts ``eps^SSG`` itself where its moment belongs (the proof in App. A.2 bounds the
    terms of eq. 17, which are moments); ``(1 - Delta) n gamma`` is rounded down to an
    integer ``k_0`` and ``Delta`` replaced by ``1 - k_0 / (n gamma)``, as the proof
    requires.

    Warning
    -------
    Not a certified bound. The proof needs Conjecture 1 of Liew and Takahashi (2022) (the shuffle
    Gaussian moment does not increase with the number of users), which the paper leaves
    open; it is true (a Jensen argument, see :mod:`pld.rdp.shuffle`) and is also checked
    numerically in ``tests/rdp/test_rdp_shuffle_gaussian.py``. But eq. 18 uses the rate
    ``gamma`` for every count, as eq. 17 of Liew and Takahashi (2022) does, whereas the
    derivation of Liew et al. (2022) gives ``k / n``: for counts above ``n gamma`` the fixed
    rate understates the per-count moment, and the proof does not show that eq. 18 bounds eq. 5.
    In every setting checked in ``tests/rdp/test_rdp_checkin.py`` it does lie above
    :func:`shuffled_checkin_gaussian` (by factors 1.09 to 2.4), which is the rigorous sum and
    the one to use.

    Returns
    -------
    numpy.ndarray
        ``eps(lam)`` in nats per order, for one round.
    """
    n, gamma, sigma, lams = _validate_common(n, gamma, sigma, orders)
    if deltas is None:
        delta_grid = np.arange(1, 50) / 50.0
    else:
        delta_grid = np.atleast_1d(np.asarray(deltas, dtype=np.float64))
        if delta_grid.ndim != 1 or not np.all((delta_grid >= 0) & (delta_grid <= 1)):
            raise ValueError("deltas must be a 1-d array of values in [0, 1]")
    max_order = int(lams.max())
    mean = n * gamma
    if mean <= 0:
        return np.zeros(lams.shape)

    def log_f(k: int) -> np.ndarray:
        return subsampled_log_moments(log_moment_table(k, sigma, max_order), gamma)

    at_one = log_f(1)
    best = np.full(max_order + 1, np.inf)
    for k0 in sorted({int(math.floor((1.0 - d) * mean)) for d in delta_grid}):
        if k0 < 0 or k0 + 1 > n:
            continue
        delta_eff = 1.0 - k0 / mean
        candidate = np.logaddexp(at_one - delta_eff**2 * mean / 2.0, log_f(k0 + 1))
        best = np.minimum(best, candidate)
    return best[lams] / (lams - 1.0)


def _gaussian_log_moments(sensitivity: float, variance: float, max_order: int) -> np.ndarray:
    """``(j - 1) eps(j) = j (j - 1) Delta^2 / (2 variance)``: Gaussian mechanism (Mironov 2017)."""
    j = np.arange(max_order + 1, dtype=np.float64)
    return j * (j - 1.0) * sensitivity**2 / (2.0 * variance)


def distributed_checkin_gaussian(
    n: int,
    gamma: float,
    sigma: float,
    orders: object,
    *,
    sensitivity: float = 2.0,
    tail_probability: float = 1e-16,
) -> np.ndarray:
    """RDP of distributed check-in with Gaussian noise, replacement DP (Liew et al. 2022, Thm 4).

    Each of the ``K`` participants adds ``N(0, sigma^2)`` to its report and only the
    sum is revealed, so given ``K = k`` the base mechanism is a Gaussian mechanism of
    variance ``k sigma^2`` and replacement sensitivity ``sensitivity`` (2 for reports
    in the unit ball, as in Liew et al. (2022): ``eps_k(j) = 2 j / (k sigma^2)``), subsampled at
    rate ``k / n`` (Wang et al. Thm 9). The binomial sum includes ``k = 0`` (which
    Thm 4 omits) and is evaluated exactly over the bulk, with rigorous envelopes on
    the tails (rate ``b / n`` and variance ``a sigma^2`` on a block ``[a, b]``).
    Revealing ``K`` to the adversary only helps it, so this is an upper bound.

    Parameters
    ----------
    n : int
        Number of users, >= 1.
    gamma : float
        Check-in probability in [0, 1].
    sigma : float
        Noise standard deviation added by each participant, > 0.
    orders : array_like of int
        Orders ``lam >= 2``.
    sensitivity : float
        Largest distance between two users' reports (replacement), > 0.
    tail_probability : float
        Binomial mass left to the tail envelopes on each side (tightness only).

    Returns
    -------
    numpy.ndarray
        ``eps(lam)`` in nats per order, for one round.
    """
    n, gamma, sigma, lams = _validate_common(n, gamma, sigma, orders)
    sensitivity = positive("sensitivity", sensitivity)
    tail_probability = in_interval("tail_probability", tail_probability, 0.0, 0.5, low_open=True)
    max_order = int(lams.max())
    variance = sigma * sigma

    def exact(lo: int, hi: int) -> np.ndarray:
        return np.array(
            [
                subsampled_log_moments(
                    _gaussian_log_moments(sensitivity, k * variance, max_order), k / n
                )
                for k in range(lo, hi + 1)
            ]
        )

    def envelope(a: int, b: int) -> np.ndarray:
        return subsampled_log_moments(
            _gaussian_log_moments(sensitivity, a * variance, max_order), b / n
        )

    log_moments = log_binomial_mixture(
        n, gamma, max_order, exact, envelope, tail_probability=tail_probability
    )
    return log_moments[lams] / (lams - 1.0)


def removal_base_log_moments(k: np.ndarray, sigma: float, orders: np.ndarray) -> np.ndarray:
    """``log E_{p'_k}[(q'_k / p'_k)^l]``, shape ``(len(k), len(orders))``.

    The base moments of Liew et al. (2022, suppl.), Thm 5.

    ``p'_k = N(0, sigma^2 / k)`` is the mean of ``k`` other participants' reports
    (all 0), ``q'_k = N(1 / (k+1), sigma^2 / (k+1))`` the mean when the target (report
    1) joins. The Rényi moment of two Gaussians (Gil, Alajaji and Linder 2013) gives

        log E = 1/2 [l log(k+1) - log(k+l) - (l-1) log k] + l (l-1) k / (2 sigma^2 (k+1)(k+l)).

    Liew et al. (2022, suppl.) print the exponential factor as ``exp(-(l+1) / (sigma^2
    (k+1)))``; that does not follow from the two Gaussians (a factor below 1, although the mean
    shift can only increase the moment) and disagrees with numerical integration; the test suite
    checks the expression above against quadrature. ``k = 0`` follows the convention of Liew et
    al. (2022, suppl.) (``p'_0 = N(0, sigma^2)``, ``q'_0 = N(1, sigma^2)``): ``l (l-1) / (2
    sigma^2)``.
    """
    k = np.asarray(k, dtype=np.float64)[:, None]
    lam = np.asarray(orders, dtype=np.float64)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ratio = 0.5 * (lam * np.log1p(1.0 / k) - np.log1p(lam / k))
        exponent = lam * (lam - 1.0) * k / (2.0 * sigma * sigma * (k + 1.0) * (k + lam))
        values = log_ratio + exponent
    return np.where(k == 0, lam * (lam - 1.0) / (2.0 * sigma * sigma), values)


def distributed_checkin_gaussian_removal(
    n: int,
    gamma: float,
    sigma: float,
    orders: object,
    *,
    method: Literal["exact", "chernoff"] = "exact",
    chernoff_delta: float = 0.5,
) -> np.ndarray:
    """Distributed check-in with a mean aggregate under removal DP (Liew et al. 2022, suppl. Thm 5).

    The server reveals ``(1/K) sum x_i + N(0, sigma^2 / K)`` (each participant adds
    ``N(0, sigma^2)`` and the sum is divided by ``K``); ``D`` has ``n - 1`` users and
    ``D' = D + {target}``; the adversary does not learn ``K``. Liew et al. (2022, suppl.) apply the
    general Poisson-subsampling bound of Zhu and Wang (2019), Thm 6, conditionally on the
    other users' check-ins, ``B(k) = Bin(k; n-1, gamma)``:

        E <= (1-g)^{lam-1} (lam g - g + 1) + C(lam,2) g^2 (1-g)^{lam-2} S(2)
             + 3 sum_{l=3}^{lam} C(lam,l) (1-g)^{lam-l} g^l S(l),
        S(l) = sum_{k=0}^{n-1} B(k) E_{p'_k}[(q'_k/p'_k)^l]        (eq. 12-13)

    with ``g = gamma`` and the moments of :func:`removal_base_log_moments`.
    Corrections to the extracted text: the prefactor is ``1/(lam-1)`` (printed
    ``1/(1-lam)``), the binomial weights are ``g^k (1-g)^{n-1-k}`` (printed
    ``g^k g^{n-1-k}``), and the ``l``-th term carries ``(1-g)^{lam-l} g^l`` as in Zhu and
    Wang's theorem and in the ``l = 2`` term of the same equation (the extraction
    swaps the two exponents in line 13).

    ``method="exact"`` sums over every ``k`` (closed form, ``O(n lam)``);
    ``method="chernoff"`` is the approximation of eq. 14-15 (their Lemma 4, with
    ``Delta = chernoff_delta``): ``S(l) <= max_{k <= k_0} m_k e^{-Delta^2 (n-1) g / 2}
    + max_{k > k_0} m_k``, ``k_0 = floor((1-Delta)(n-1) g)``. Liew et al. (2022, suppl.) replace
    the maxima by ``m_1`` and ``m_{k_0+1}``, assuming the moment decreases in ``k``; it does
    not (it rises up to ``k ~ sqrt(l)``, and ``m_0 > m_1``), so the maxima are taken
    exactly here.

    Warning
    -------
    Not a certified bound: (i) Zhu and Wang's (2019) Thm 6 requires the base RDP in both
    directions, while only ``E_{p'}[(q'/p')^l]`` is used — the other direction
    ``E_{q'}[(p'/q')^l]`` is infinite for ``l >= k + 1`` because ``p'_k`` has the larger
    variance; (ii) the ``k = 0`` convention replaces "no output" by ``N(0, sigma^2)``;
    (iii) the pair (others at 0, target at 1) is taken as the worst case.

    Returns
    -------
    numpy.ndarray
        ``eps(lam)`` in nats per order, for one round.
    """
    n = integer_at_least("n", n, 2)
    gamma = in_interval("gamma", gamma, 0.0, 1.0, low_open=True, high_open=True)
    sigma = positive("sigma", sigma)
    lams = integer_orders(orders)
    if method not in ("exact", "chernoff"):
        raise ValueError(f"method must be 'exact' or 'chernoff' (got {method!r})")
    chernoff_delta = in_interval("chernoff_delta", chernoff_delta, 0.0, 1.0)
    max_order = int(lams.max())
    inner_orders = np.arange(2, max_order + 1)
    counts = np.arange(n)
    base = removal_base_log_moments(counts, sigma, inner_orders)
    if method == "exact":
        log_weights = binom.logpmf(counts, n - 1, gamma)
        log_s = logsumexp(log_weights[:, None] + base, axis=0)
    else:
        mean = (n - 1) * gamma
        k0 = min(int(math.floor((1.0 - chernoff_delta) * mean)), n - 2)
        delta_eff = 1.0 - k0 / mean if mean > 0 else 1.0
        lower = base[: k0 + 1].max(axis=0) - delta_eff**2 * mean / 2.0
        upper = base[k0 + 1 :].max(axis=0)
        log_s = np.logaddexp(lower, upper)
    log_gamma = math.log(gamma)
    log_keep = math.log1p(-gamma)
    result = np.empty(lams.shape)
    for index, lam in enumerate(lams):
        ls = np.arange(2, lam + 1)
        log_binom = (
            math.lgamma(lam + 1.0)
            - np.array([math.lgamma(v + 1.0) for v in ls])
            - np.array([math.lgamma(lam - v + 1.0) for v in ls])
        )
        weights = np.where(ls == 2, 0.0, math.log(3.0))
        terms = weights + log_binom + (lam - ls) * log_keep + ls * log_gamma + log_s[ls - 2]
        first = (lam - 1) * log_keep + math.log(lam * gamma - gamma + 1.0)
        result[index] = logsumexp(np.append(terms, first)) / (lam - 1.0)
    return result
