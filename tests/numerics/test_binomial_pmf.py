"""Loader's binomial pmf (pld/numerics/binomial_pmf.py) against 50-digit values, up to n = 2e9.

The claimed bound ``LOG_PMF_ERROR (1 + |log P|)`` must cover the error at every
point drawn (counts up to 12 standard deviations from the mean, n from 10 to 2e9,
p = 1/2 and random p); the largest error measured while writing it was 19 u (1 + |log P|).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from pld.numerics import binomial
from pld.numerics.binomial_pmf import LOG_PMF_ERROR, half_pmf, log_pmf, log_pmfs


def _exact(k: int, n: int, p: float) -> float:
    with mpmath.workdps(50):
        prob = mpmath.mpf(p)
        return float(
            mpmath.log(mpmath.binomial(n, k)) + k * mpmath.log(prob) + (n - k) * mpmath.log1p(-prob)
        )


def _draws(seed: int, count: int, half: bool) -> list[tuple[int, int, float]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        n = int(10 ** rng.uniform(1, math.log10(2e9)))
        p = 0.5 if half else float(rng.uniform(1e-4, 1 - 1e-4))
        sd = math.sqrt(n * p * (1 - p))
        k = int(round(n * p + rng.uniform(-12, 12) * sd))
        out.append((min(max(k, 0), n), n, p))
    return out


@pytest.mark.parametrize("half", [True, False])
def test_log_pmf_within_its_bound_against_mpmath(half: bool) -> None:
    worst = 0.0
    for k, n, p in _draws(7 if half else 11, 150, half):
        exact = _exact(k, n, p)
        got = log_pmf(float(k), float(n), p)
        error = abs(got - exact) / (1.0 + abs(exact))
        worst = max(worst, error)
        assert error <= LOG_PMF_ERROR, (k, n, p, got, exact)
    assert worst > 0.0  # the comparison saw rounding (it is not vacuous)


def test_half_pmf_is_exp_of_log_pmf_and_matches_boost_at_small_n() -> None:
    n = 1000
    k = np.arange(n + 1, dtype=np.float64)
    ours = np.exp(log_pmfs(k, np.full(k.size, float(n)), np.full(k.size, 0.5)))
    boost = binomial.pmf(k, n, 0.5)
    big = boost > 1e-250
    assert np.max(np.abs(ours[big] / boost[big] - 1)) < 1e-12
    assert half_pmf(500.0, 1000.0) == pytest.approx(float(boost[500]), rel=1e-14)


def test_ends_of_the_support() -> None:
    assert log_pmf(-1.0, 10.0, 0.3) == -math.inf
    assert log_pmf(11.0, 10.0, 0.3) == -math.inf
    assert log_pmf(0.0, 10.0, 0.3) == pytest.approx(10 * math.log(0.7), rel=1e-15)
    assert log_pmf(10.0, 10.0, 0.3) == pytest.approx(10 * math.log(0.3), rel=1e-15)
    assert log_pmf(0.0, 10.0, 0.0) == 0.0
    assert log_pmf(3.0, 10.0, 0.0) == -math.inf
    assert log_pmf(10.0, 10.0, 1.0) == 0.0
