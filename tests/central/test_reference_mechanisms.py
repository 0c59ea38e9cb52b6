"""Randomised response and the Gaussian mechanism against their exact delta(eps).

The truth must lie inside [lower, upper] (the only hard requirement), and the
bracket must meet the accuracy target of the defaults: (upper - lower) / upper
<= 1 % wherever delta >= 1e-10, for T <= 1000 rounds.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq

import pld
from pld.central.gaussian_mechanism import gaussian_delta
from tests.exact import round_off_floor_expected, rr_delta

# Float noise of the exact sums themselves (binomial pmf, normal CDF in log space).
TRUTH_RTOL = 1e-12
TARGET_RELATIVE_WIDTH = 0.01


def _assert_brackets(lower, upper, truth):
    assert np.all(lower <= truth * (1 + TRUTH_RTOL) + 1e-300)
    assert np.all(upper >= truth * (1 - TRUTH_RTOL))
    assert np.all((0 <= lower) & (lower <= upper) & (upper <= 1))


@pytest.mark.parametrize("rounds", [1, 10, 100, 1000])
@pytest.mark.parametrize("eps0", [0.3, 1.0, 0.3217])
def test_randomized_response_matches_binomial_sum(eps0, rounds):
    # 0.3217 on the 1e-3 grid: atoms off the grid, the lower bound falls back
    # to first-order rounding; only containment is required there.
    step = 1e-3 if eps0 == 0.3217 else None
    composed = pld.randomized_response(eps0, loss_grid_step=step).self_compose(rounds)
    eps = np.linspace(0, min(rounds * eps0, 30), 41)
    truth = rr_delta(eps0, rounds, eps)
    with round_off_floor_expected():  # eps up to T eps0, where delta is 0
        lower, upper = composed.delta_bounds(eps)
    _assert_brackets(lower, upper, truth)
    if step is None:  # default grid: atoms on it, exact up to round-off terms
        width = (upper - lower) / np.maximum(upper, 1e-300)
        assert np.max(width[truth >= 1e-10], initial=0) <= TARGET_RELATIVE_WIDTH
        assert np.max(width[truth >= 1e-3], initial=0) <= 1e-6


def _eps_for(delta, sigma):
    return brentq(lambda e: gaussian_delta(e, sigma) - delta, 0, 1e5)


@pytest.mark.parametrize(
    "sigma, rounds",
    [(1.0, 1), (1.0, 100), (1.0, 1000), (5.0, 10), (5.0, 1000), (20.0, 1000)],
)
def test_gaussian_matches_analytic_formula_and_meets_width_target(sigma, rounds):
    loss = pld.gaussian(sigma)
    composed = loss.self_compose(rounds) if rounds > 1 else loss
    effective = sigma / np.sqrt(rounds)
    targets = [d for d in (1e-1, 1e-3, 1e-6, 1e-10) if d < gaussian_delta(0.0, effective)]
    eps = np.array([_eps_for(d, effective) for d in targets])
    truth = gaussian_delta(eps, effective)
    lower, upper = composed.delta_bounds(eps)
    _assert_brackets(lower, upper, truth)
    assert np.max((upper - lower) / upper) <= TARGET_RELATIVE_WIDTH


@pytest.mark.slow
@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0, 5.0, 20.0])
@pytest.mark.parametrize("rounds", [1, 10, 100, 1000])
def test_gaussian_width_target_full_grid(sigma, rounds):
    test_gaussian_matches_analytic_formula_and_meets_width_target(sigma, rounds)


def test_epsilon_bounds_bracket_the_analytic_epsilon():
    sigma, rounds, delta = 2.0, 100, 1e-6
    composed = pld.gaussian(sigma).self_compose(rounds)
    truth = _eps_for(delta, sigma / np.sqrt(rounds))
    lower, upper = composed.epsilon_bounds(delta)
    assert lower <= truth <= upper
    assert (upper - lower) / upper < 1e-3
    # The reported eps really achieves delta, and a slightly smaller one does not.
    assert composed.delta(upper) <= delta
    assert composed.delta(upper - 1e-6) > delta
    assert composed.delta_bounds(lower - 1e-6)[0] > delta


def test_heterogeneous_composition_matches_enumeration():
    a = pld.randomized_response(0.3)
    b = pld.randomized_response(0.5)
    composed = pld.compose(a, b, a)
    eps = np.linspace(0, 1.2, 25)
    p = lambda e: np.array([np.exp(e), 1.0]) / (1 + np.exp(e))  # noqa: E731
    pairs = [(p(e), p(e)[::-1]) for e in (0.3, 0.5, 0.3)]
    from tests.exact import product_delta

    truth = product_delta(pairs, eps)
    with round_off_floor_expected():  # eps up to 1.1, where delta is 0
        lower, upper = composed.delta_bounds(eps)
    _assert_brackets(lower, upper, truth)
    assert np.max(upper - lower) < 1e-9
