"""pld.numerics.binomial against scipy.stats.binom: identical values, far tails included.

The module calls the Boost routines that scipy.stats.binom uses, without
importing scipy.stats; any difference (even one ulp) means the support ends or
the argument handling diverged, so the comparison is exact.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from pld.numerics import binomial

TRIALS = [1, 2, 7, 100, 9_999, 10**6, 10**9]
PROBABILITIES = [0.0, 1e-12, 0.01, 0.2689414213699951, 0.5, 0.9, 1.0]


def _counts(n: int) -> np.ndarray:
    near = np.arange(-3, 4)
    mean_region = np.linspace(0, n, 41).round()
    return np.unique(np.concatenate((near, n + near, mean_region, [n / 2 + 0.5, 2.5])))


@pytest.mark.parametrize("n", TRIALS)
@pytest.mark.parametrize("p", PROBABILITIES)
def test_values_identical_to_scipy_stats(n, p):
    k = _counts(n)
    for name in ("pmf", "logpmf", "cdf", "sf"):
        ours = getattr(binomial, name)(k, n, p)
        theirs = getattr(binom, name)(k, n, p)
        np.testing.assert_array_equal(ours, theirs, err_msg=name)
    q = np.array([0.0, 1e-300, 1e-18, 1e-12, 0.3, 0.5, 1 - 1e-12, 1.0])
    for name in ("ppf", "isf"):
        np.testing.assert_array_equal(
            getattr(binomial, name)(q, n, p), getattr(binom, name)(q, n, p), err_msg=name
        )


def test_far_tails_of_clones_sizes():
    """Tails near 1e-18 (where clones cuts its sums) and scalar in, scalar out."""
    n, p = 10_000 - 1, 1 / (1 + np.e)
    k = np.arange(0, 2700)
    tail = binomial.cdf(k, n, p)
    assert tail[0] < 1e-300 and np.any((tail > 1e-19) & (tail < 1e-17))
    np.testing.assert_array_equal(tail, binom.cdf(k, n, p))
    np.testing.assert_array_equal(binomial.sf(n - k, n, p), binom.sf(n - k, n, p))
    scalar = binomial.pmf(3000, n, p)
    assert np.ndim(scalar) == 0 and scalar == binom.pmf(3000, n, p)
    assert binomial.ppf(1e-18, n, p) == binom.ppf(1e-18, n, p)


def test_checked_quantiles_identical_to_scipy_stats():
    """Long arrays take the checked Cornish-Fisher path: same values as Boost's search,
    on random laws and masses (far tails, degenerate p, n = 0, NaN included) and on
    the windows the clones truncation asks for (Bin(c, 1/2) at tail_mass / 4)."""
    rng = np.random.default_rng(5)
    size = 20_000
    n = np.floor(10 ** rng.uniform(0, 7, size))
    p = 10 ** rng.uniform(-6, 0, size)
    p = np.where(rng.random(size) < 0.3, 1 - p, p)
    q = 10 ** rng.uniform(-19, -0.01, size)
    p[:50], p[50:100], n[100:150], q[150:200], p[200:210] = 0.0, 1.0, 0.0, 1e-300, np.nan
    ours = binomial.ppf(q, n, p)
    assert np.count_nonzero(n * p * (1 - p) >= binomial.CHECKED_PPF_VARIANCE) > size / 4
    np.testing.assert_array_equal(ours, binom.ppf(q, n, p))
    clones = np.arange(0, 30_000)
    for tail in (2.5e-13, 2.5e-4, 2.5e-19):
        np.testing.assert_array_equal(binomial.ppf(tail, clones, 0.5), binom.ppf(tail, clones, 0.5))
