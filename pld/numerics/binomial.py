"""Binomial pmf, log-pmf, cdf, sf, ppf and isf without importing ``scipy.stats``.

``scipy.stats`` costs about 0.6 s to import, more than a typical command's work.
Its ``binom`` evaluates the pmf, cdf, sf, ppf and isf with Boost's binomial
routines, which ``scipy.special`` exposes as ufuncs (``_binom_pmf``, ...); the
functions here call the same ufuncs with the same handling of the support's
ends as ``scipy.stats.binom`` (``tests/numerics/test_binomial.py`` checks the values are
identical, tails near 1e-18 included). ``scipy.special.bdtr`` (Cephes) is not
a substitute: it is off by ~5e-9 relatively in the far tails.

Inputs broadcast; a scalar result is returned as a numpy scalar, as scipy does.
Counts ``n`` must be non-negative integers and ``p`` in ``[0, 1]`` (callers
validate them).
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln, ndtri, xlog1py, xlogy

try:
    from scipy.special._ufuncs import (
        _binom_cdf,
        _binom_isf,
        _binom_pmf,
        _binom_ppf,
        _binom_sf,
    )
except ImportError:  # pragma: no cover - a scipy without them: the public, slower path
    from scipy.stats import binom as _binom

    def _binom_pmf(k, n, p):
        return _binom.pmf(k, n, p)

    def _binom_cdf(k, n, p):
        return _binom.cdf(k, n, p)

    def _binom_sf(k, n, p):
        return _binom.sf(k, n, p)

    def _binom_ppf(q, n, p):
        return _binom.ppf(q, n, p)

    def _binom_isf(q, n, p):
        return _binom.isf(q, n, p)


def _arrays(x, n, p) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x, n, p = np.broadcast_arrays(
        np.asarray(x, dtype=np.float64),
        np.asarray(n, dtype=np.float64),
        np.asarray(p, dtype=np.float64),
    )
    return x, n, p


def pmf(k, n, p) -> np.ndarray:
    """P(X = k) for X ~ Bin(n, p); 0 off the support or at non-integer k."""
    k, n, p = _arrays(k, n, p)
    inside = (k >= 0) & (k <= n) & (np.floor(k) == k)
    out = np.zeros(k.shape)
    if np.any(inside):
        out[inside] = np.clip(_binom_pmf(k[inside], n[inside], p[inside]), 0.0, 1.0)
    return out[()]


def logpmf(k, n, p) -> np.ndarray:
    """log P(X = k) by log-gamma functions (scipy.stats' formula); ``-inf`` off the support."""
    k, n, p = _arrays(k, n, p)
    inside = (k >= 0) & (k <= n) & (np.floor(k) == k)
    out = np.full(k.shape, -np.inf)
    if np.any(inside):
        kk, nn, pp = k[inside], n[inside], p[inside]
        combinations = gammaln(nn + 1) - (gammaln(kk + 1) + gammaln(nn - kk + 1))
        out[inside] = combinations + xlogy(kk, pp) + xlog1py(nn - kk, -pp)
    return out[()]


def cdf(k, n, p) -> np.ndarray:
    """P(X <= k): 0 below 0, 1 from n on."""
    k, n, p = _arrays(k, n, p)
    inside = (k >= 0) & (k < n)
    out = np.where(k >= n, 1.0, 0.0)
    if np.any(inside):
        out[inside] = np.clip(_binom_cdf(np.floor(k[inside]), n[inside], p[inside]), 0.0, 1.0)
    return out[()]


def sf(k, n, p) -> np.ndarray:
    """P(X > k): 1 below 0, 0 from n on."""
    k, n, p = _arrays(k, n, p)
    inside = (k >= 0) & (k < n)
    out = np.where(k < 0, 1.0, 0.0)
    if np.any(inside):
        out[inside] = np.clip(_binom_sf(np.floor(k[inside]), n[inside], p[inside]), 0.0, 1.0)
    return out[()]


def ppf(q, n, p) -> np.ndarray:
    """Smallest k with P(X <= k) >= q (as a float); -1 at q = 0 and n at q = 1.

    Arrays of at least ``CHECKED_PPF_SIZE`` quantiles of wide laws are found from a
    Cornish-Fisher guess moved by units until :func:`cdf` (Boost's) confirms
    ``P(X <= k - 1) < q <= P(X <= k)``: about two cdf evaluations each, a third
    of the cost of Boost's quantile search, which takes the few that are not
    confirmed within ``PPF_MOVES`` moves (and the short arrays). Boost's ppf is
    that same smallest k by its own cdf: ``tests/numerics/test_binomial.py`` checks the
    values are identical.
    """
    q, n, p = _arrays(q, n, p)
    inside = (q > 0) & (q < 1)
    out = np.where(q == 0, -1.0, np.where(q == 1, n, np.nan))
    if np.any(inside):
        q_in, n_in, p_in = q[inside], n[inside], p[inside]
        spread = n_in * p_in * (1.0 - p_in) >= CHECKED_PPF_VARIANCE
        if np.count_nonzero(spread) < CHECKED_PPF_SIZE:
            out[inside] = _binom_ppf(q_in, n_in, p_in)
        else:
            values = np.empty(q_in.shape)
            values[spread] = _checked_ppf(q_in[spread], n_in[spread], p_in[spread])
            narrow = ~spread
            values[narrow] = _binom_ppf(q_in[narrow], n_in[narrow], p_in[narrow])
            out[inside] = values
    return out[()]


#: Arrays with at least this many quantiles of laws whose variance is at least
#: ``CHECKED_PPF_VARIANCE`` solve those by :func:`_checked_ppf` (its guess is then
#: within a unit or two; Boost's search is cheap on narrower laws).
CHECKED_PPF_SIZE = 16
CHECKED_PPF_VARIANCE = 25.0
#: Unit moves from the guess that :func:`_checked_ppf` tries before Boost's search.
PPF_MOVES = 4


def _checked_ppf(q: np.ndarray, n: np.ndarray, p: np.ndarray) -> np.ndarray:
    """:func:`ppf` inside ``0 < q < 1`` by a checked guess (see there).

    The guess is the Cornish-Fisher expansion of the quantile to third order
    (skewness and excess kurtosis), rounded to the nearest integer. A move up
    reuses P(X <= k) as the new P(X <= k - 1), a move down the converse, so each
    move costs one cdf evaluation.
    """
    mean = n * p
    variance = mean * (1.0 - p)
    deviation = np.sqrt(variance)
    z = ndtri(q)
    with np.errstate(divide="ignore", invalid="ignore"):
        skew = np.where(variance > 0.0, (1.0 - 2.0 * p) / deviation, 0.0)
        kurtosis = np.where(variance > 0.0, (1.0 - 6.0 * p * (1.0 - p)) / variance, 0.0)
    z3 = z * z * z
    expansion = (
        z
        + skew * (z * z - 1.0) / 6.0
        + kurtosis * (z3 - 3.0 * z) / 24.0
        - skew * skew * (2.0 * z3 - 5.0 * z) / 36.0
    )
    k = np.minimum(np.maximum(np.floor(mean + deviation * expansion + 0.5), 0.0), n)
    at, before = cdf(k, n, p), cdf(k - 1.0, n, p)
    pending = np.arange(q.shape[0])
    for move in range(PPF_MOVES + 1):
        up = at[pending] < q[pending]
        down = ~up & (before[pending] >= q[pending])
        pending, up, down = pending[up | down], up[up | down], down[up | down]
        if pending.size == 0:
            return k
        if move == PPF_MOVES:
            break
        rising, falling = pending[up], pending[down]
        k[rising] += 1.0
        before[rising] = at[rising]
        at[rising] = cdf(k[rising], n[rising], p[rising])
        k[falling] -= 1.0
        at[falling] = before[falling]
        before[falling] = cdf(k[falling] - 1.0, n[falling], p[falling])
    k[pending] = _binom_ppf(q[pending], n[pending], p[pending])
    return k


def isf(q, n, p) -> np.ndarray:
    """Smallest k with P(X > k) <= q (as a float); -1 at q = 1 and n at q = 0."""
    q, n, p = _arrays(q, n, p)
    inside = (q > 0) & (q < 1)
    out = np.where(q == 1, -1.0, np.where(q == 0, n, np.nan))
    if np.any(inside):
        out[inside] = _binom_isf(q[inside], n[inside], p[inside])
    return out[()]


def window(tail, n, p) -> tuple[np.ndarray, np.ndarray]:
    """The central window ``[lo, hi]`` of ``X ~ Bin(n, p)`` leaving less than ``tail`` per side.

    ``lo`` is the smallest k with ``P(X <= k) >= tail`` (so ``P(X < lo) < tail``) and
    ``hi = n - ppf(tail; n, 1 - p)`` (so ``P(X > hi) < tail``), clipped to
    ``lo <= hi <= n``. The upper end is the lower quantile of the complementary count:
    Boost's ``isf`` goes through ``1 - tail`` and returns ``n`` for tails below ~1e-16.
    Integer arrays (integer scalars for scalar input).
    """
    trials = np.asarray(n)
    lo = np.clip(ppf(tail, trials, p), 0, trials)
    hi = np.clip(trials - ppf(tail, trials, 1.0 - np.asarray(p, dtype=np.float64)), lo, trials)
    return lo.astype(np.int64)[()], hi.astype(np.int64)[()]
