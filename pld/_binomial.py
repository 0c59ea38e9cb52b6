"""Binomial pmf, log-pmf, cdf, sf, ppf and isf without importing ``scipy.stats``.

``scipy.stats`` costs about 0.6 s to import, more than a typical command's work.
Its ``binom`` evaluates the pmf, cdf, sf, ppf and isf with Boost's binomial
routines, which ``scipy.special`` exposes as ufuncs (``_binom_pmf``, ...); the
functions here call the same ufuncs with the same handling of the support's
ends as ``scipy.stats.binom`` (``tests/test_binomial.py`` checks the values are
identical, tails near 1e-18 included). ``scipy.special.bdtr`` (Cephes) is not
a substitute: it is off by ~5e-9 relatively in the far tails.

Inputs broadcast; a scalar result is returned as a numpy scalar, as scipy does.
Counts ``n`` must be non-negative integers and ``p`` in ``[0, 1]`` (callers
validate them).
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln, xlog1py, xlogy

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
    """Smallest k with P(X <= k) >= q (as a float); -1 at q = 0 and n at q = 1."""
    q, n, p = _arrays(q, n, p)
    inside = (q > 0) & (q < 1)
    out = np.where(q == 0, -1.0, np.where(q == 1, n, np.nan))
    if np.any(inside):
        out[inside] = _binom_ppf(q[inside], n[inside], p[inside])
    return out[()]


def isf(q, n, p) -> np.ndarray:
    """Smallest k with P(X > k) <= q (as a float); -1 at q = 1 and n at q = 0."""
    q, n, p = _arrays(q, n, p)
    inside = (q > 0) & (q < 1)
    out = np.where(q == 1, -1.0, np.where(q == 0, n, np.nan))
    if np.any(inside):
        out[inside] = _binom_isf(q[inside], n[inside], p[inside])
    return out[()]
