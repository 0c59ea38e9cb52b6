"""The shuffled Gaussian at small sigma (sigma of order the input range) against independent truths.

The blanket term's law spans many orders of magnitude there; the library splits
each term at a reach and charges the users beyond by closed forms and a Chernoff
remainder (docs/blanket-continuous.md §4b). Truths: the analytic Gaussian
hockey-stick (n = 1), nested quadrature of eq. (1) from its definition in the
output space (n = 2, 3; the oracle of ``tests/shuffling/test_blanket_continuous.py``), a
Monte-Carlo estimate with a confidence bound (n = 100), the observer lower bound,
the local mechanism (an upper bound on eq. (1) by subadditivity of ``(.)_+``),
and monotonicity in sigma.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

import pld
from pld.central.gaussian_mechanism import gaussian_delta
from pld.shuffling import blanket
from pld.shuffling.blanket.continuous_window import positive_part_window
from tests.shuffling.test_blanket_continuous import _gaussian_truth


def continuous_profile_bounds(randomizer, n, eps, **options):
    """The blanket profile of a continuous randomizer, from its blanket law."""
    return blanket.continuous_profile_bounds(randomizer.blanket_law(), n, eps, **options)


@pytest.mark.parametrize("sigma", [0.3, 0.5, 1.0])
def test_one_user_is_the_local_gaussian_mechanism(sigma):
    eps = np.array([0.0, 0.5, 2.0, 6.0])
    lower, upper = continuous_profile_bounds(pld.randomizers.gaussian(sigma), 1, eps)
    truth = gaussian_delta(eps, sigma)
    assert np.all(lower <= truth * (1 + 1e-12)) and np.all(truth <= upper * (1 + 1e-12))
    # Second-order lattice with the bulk's deviation / 64: measured at most 1.4e-2
    # relative at sigma = 0.3, eps = 0 (its law spans e^{11}); 2.3e-2 at sigma = 1,
    # eps = 6 (delta = 2.8e-9, where the lower side drops the far negative terms).
    assert np.all(upper - lower <= 3e-2 * truth)


@pytest.mark.parametrize(("sigma", "width"), [(0.3, 2e-4), (0.5, 1e-4), (1.0, 3e-5)])
def test_two_users_against_quadrature(sigma, width):
    """Measured upper - truth: 1.1e-4 (0.3), 4.2e-5 (0.5), 9.7e-6 (1.0) relative."""
    lower, upper = continuous_profile_bounds(pld.randomizers.gaussian(sigma), 2, [0.5])
    truth = _gaussian_truth(sigma, 2, 0.5)
    # The quadrature is accurate to ~1e-9 relative.
    assert lower[0] <= truth * (1 + 1e-7) and truth <= upper[0] * (1 + 1e-7)
    assert upper[0] - truth <= width * truth


@pytest.mark.slow
@pytest.mark.parametrize("sigma", [0.5, 1.0])
def test_three_users_against_quadrature(sigma):
    eps = 0.5
    lower, upper = continuous_profile_bounds(pld.randomizers.gaussian(sigma), 3, [eps])
    truth = _gaussian_truth(sigma, 3, eps)
    assert lower[0] <= truth * (1 + 1e-6) and truth <= upper[0] * (1 + 1e-6)
    assert upper[0] - truth <= 1e-3 * truth


def _monte_carlo(sigma, n, eps, sums, seed):
    """``(1/(n gamma)) E[(sum B_i Z_i)_+]`` sampled from the definition (inputs [0, 1]).

    ``Y ~ omega`` by rejection from ``N(1/2, sigma^2)``: ``min(phi(y), phi(y - 1)) /
    phi(y - 1/2) <= 1``. Returns the mean and its standard error.
    """
    rng = np.random.default_rng(seed)
    gamma = 2 * norm.cdf(-0.5 / sigma)
    alpha = math.exp(eps)
    values = np.empty(sums)
    for start in range(0, sums, 1000):
        block = min(1000, sums - start)
        count = rng.binomial(n, gamma, size=block)
        total = np.zeros(block)
        needed = int(count.sum())
        ys = []
        while needed > 0:
            y = rng.normal(0.5, sigma, size=2 * needed + 100)
            log_min = np.minimum(norm.logpdf(y, 0, sigma), norm.logpdf(y, 1, sigma))
            keep = np.log(rng.uniform(size=y.size)) < log_min - norm.logpdf(y, 0.5, sigma)
            ys.append(y[keep][:needed])
            needed -= ys[-1].size
        y = np.concatenate(ys)
        log_min = np.minimum(norm.logpdf(y, 0, sigma), norm.logpdf(y, 1, sigma))
        z = gamma * (
            np.exp(norm.logpdf(y, 1, sigma) - log_min)
            - alpha * np.exp(norm.logpdf(y, 0, sigma) - log_min)
        )
        owner = np.repeat(np.arange(block), count)
        total += np.bincount(owner, weights=z, minlength=block)
        values[start : start + block] = np.maximum(total, 0.0) / (n * gamma)
    return float(values.mean()), float(values.std() / math.sqrt(sums))


def test_hundred_users_against_monte_carlo():
    """sigma = 1, n = 100: the certified bracket against 40 000 sampled sums.

    Measured: eps = 0, bracket [0.0668128, 0.0668156]; the Monte-Carlo mean lies
    within 4.5 standard errors (a failure probability below 1e-5 per side).
    """
    sigma, n, eps = 1.0, 100, 0.0
    lower, upper = continuous_profile_bounds(pld.randomizers.gaussian(sigma), n, [eps])
    mean, error = _monte_carlo(sigma, n, eps, 40_000, seed=11)
    assert upper[0] >= mean - 4.5 * error
    assert lower[0] <= mean + 4.5 * error
    assert error < 0.02 * mean  # the check has teeth


@pytest.mark.parametrize(
    ("sigma", "n"), [(0.5, 100), (1.0, 100), pytest.param(1.0, 10_000, marks=pytest.mark.slow)]
)
def test_observer_lower_bound_below_and_local_mechanism_above(sigma, n):
    randomizer = pld.randomizers.gaussian(sigma)
    eps = np.linspace(0.0, 3.0, 6) / math.sqrt(n) * 3
    lower, upper = continuous_profile_bounds(randomizer, n, eps)
    assert np.all(lower <= upper)
    observed = pld.shuffle_observer(randomizer, n).delta_bounds(eps)[0]
    assert np.all(observed <= upper + 1e-15)
    # (sum)_+ <= sum of positive parts: eq. (1) is at most the local hockey stick.
    assert np.all(upper <= gaussian_delta(eps, sigma) * (1 + 1e-3) + 1e-15)


def test_monotone_in_sigma():
    """More noise never gives a larger delta: brackets must not contradict it."""
    eps = np.array([0.0, 0.3, 1.0])
    previous = None
    for sigma in (0.5, 0.75, 1.0, 2.0):
        lower, upper = continuous_profile_bounds(pld.randomizers.gaussian(sigma), 100, eps)
        if previous is not None:
            assert np.all(lower <= previous[1] * (1 + 1e-12))
        previous = (lower, upper)


@settings(max_examples=8, deadline=None, derandomize=True)
@given(
    sigma=st.floats(0.5, 3.0),
    n=st.integers(1, 3000),
    eps=st.floats(0.0, 2.0),
)
def test_property_bracket_between_observer_and_local(sigma, n, eps):
    randomizer = pld.randomizers.gaussian(sigma)
    lower, upper = continuous_profile_bounds(randomizer, n, [eps])
    assert 0.0 <= lower[0] <= upper[0] <= 1.0
    assert upper[0] <= gaussian_delta(np.array([eps]), sigma)[0] * (1 + 1e-3) + 1e-15
    assert pld.shuffle_observer(randomizer, n).delta_bounds([eps])[0][0] <= upper[0] + 1e-15


@pytest.mark.slow
def test_best_shuffle_gaussian_beats_the_local_mechanism_at_sigma_one():
    """sigma = 1, n = 100: eps(1e-6) one round, measured 0.94 (local mechanism 4.89,
    observer lower bound 0.40); before the tail split, "best" was the local mechanism."""
    randomizer = pld.randomizers.gaussian(1.0)
    eps_upper = pld.shuffle(randomizer, 100, num_points=24).epsilon_bounds(1e-6)[1]
    lower = pld.shuffle_observer(randomizer, 100).epsilon_bounds(1e-6)[0]
    local = pld.gaussian(1.0).epsilon_bounds(1e-6)[0]
    assert lower <= eps_upper <= 0.4 * local


@pytest.mark.parametrize("scale", [0.1, 0.05])
def test_laplace_small_scale_one_user(scale):
    """The Laplace's atom beyond the reach enters by closed form: small b is evaluable."""
    eps = np.array([0.0, 2.0, 5.0])
    lower, upper = continuous_profile_bounds(pld.randomizers.laplace(scale), 1, eps)
    truth = 1 - np.exp((eps - 1 / scale) / 2)
    assert np.all(lower <= truth * (1 + 1e-12)) and np.all(truth <= upper * (1 + 1e-12))


def test_positive_part_far_light_tail_does_not_overflow():
    """A lattice law with a far, light upper tail used to overflow the tilted normaliser
    (a bare OverflowError); the bound is finite and at most the one-term bound."""
    z = np.arange(-2000, 5000)
    masses = np.exp(-4.0 * np.log1p(np.abs(z) / 2.0) ** 2)
    masses /= masses.sum()
    one_term = float(np.dot(masses, np.maximum(z, 0)))
    for side in ("upper", "lower"):
        value = positive_part_window(
            -2000, masses, 100, 1.0, side, mass_error=1e-13, position_error=0.0
        )
        assert math.isfinite(value) and 0.0 <= value <= one_term * (1 + 1e-9)
