"""Calibration: the value returned meets the target with the upper bound, one lattice step
more generous does not, and both agree with independent truths.

Truths: the Gaussian mechanism's delta in closed form; T-fold randomised response by
its exact binomial sum (tests/exact.py); one round of the clones pair by the grid-free
row sums of Feldman et al. (pld.shuffling.clones.mechanism.clones_delta_bounds, no grid, no
FFT); shuffled k-RR by brute-force enumeration of the adversary's view
(tests/oracles/krr_views.py).

Accuracy argument used below: the engine's upper bound is within 1 % of the exact
delta with the default grid (README, "The guarantee"), so the calibrated value can
be more conservative than the exact optimum only by the parameter change that moves
delta by 1 %, plus one lattice step.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.optimize import brentq

import pld
from pld.calibration import PARAMETERS
from pld.central.gaussian_mechanism import gaussian_delta
from pld.shuffling.clones.mechanism import clones_delta_bounds
from tests.exact import rr_delta
from tests.oracles import krr_views

ENGINE_ACCURACY = 0.01  # relative width of the upper bound over the exact delta


def _upper_after(mechanism, rounds, eps, **kwargs):
    loss = mechanism(**kwargs)
    return float((loss.self_compose(rounds) if rounds > 1 else loss).delta(eps))


def test_gaussian_sigma_matches_the_closed_form():
    eps, delta, rounds, tol = 1.0, 1e-5, 10, 1e-3
    result = pld.calibrate(
        pld.gaussian, "sigma", target_eps=eps, target_delta=delta, rounds=rounds, tolerance=tol
    )
    assert result.param == "sigma" and result.rounds == rounds and result.tolerance == tol
    # Meets the target with the upper bound (rebuilt here, not taken from the result) ...
    assert _upper_after(pld.gaussian, rounds, eps, sigma=result.value) <= delta
    assert result.delta_upper <= delta and result.eps_upper <= eps
    # ... and one lattice step less noise does not.
    assert result.rejected == pytest.approx(result.value / (1 + tol), rel=1e-12)
    assert _upper_after(pld.gaussian, rounds, eps, sigma=result.rejected) > delta

    # Truth: the smallest sigma with exact delta <= target, and the one where a
    # 1 %-pessimistic bound would just meet it.
    def exact_excess(sigma, factor=1.0):
        return factor * gaussian_delta(eps, sigma / math.sqrt(rounds)) - delta

    sigma_exact = brentq(exact_excess, 1.0, 100.0, xtol=1e-12)
    sigma_margin = brentq(exact_excess, 1.0, 100.0, args=(1 + ENGINE_ACCURACY,), xtol=1e-12)
    assert result.value >= sigma_exact  # otherwise the exact delta exceeds the target
    assert result.value <= sigma_margin * (1 + tol)


def test_largest_number_of_rounds_of_randomised_response_is_exact():
    eps0, eps, delta = 0.02, 1.0, 1e-6  # T = 142 rounds
    result = pld.calibrate(
        pld.randomized_response, "rounds", eps0=eps0, target_eps=eps, target_delta=delta
    )
    assert isinstance(result.value, int) and result.rounds == result.value
    assert result.rejected == result.value + 1
    rounds = np.arange(1, 2 * result.value + 10)
    exact = np.array([rr_delta(eps0, int(t), [eps])[0] for t in rounds])
    largest_exact = int(rounds[exact <= delta].max())
    largest_margin = int(rounds[exact * (1 + ENGINE_ACCURACY) <= delta].max())
    assert largest_margin <= result.value <= largest_exact
    assert _upper_after(pld.randomized_response, result.value, eps, eps0=eps0) <= delta
    assert _upper_after(pld.randomized_response, result.value + 1, eps, eps0=eps0) > delta


def test_clones_eps0_against_the_grid_free_delta():
    n, eps, delta, tol = 2000, 0.5, 1e-6, 1e-3
    result = pld.calibrate(pld.clones, "eps0", n=n, target_eps=eps, target_delta=delta)
    assert result.rejected == pytest.approx(result.value * (1 + tol), rel=1e-12)
    assert _upper_after(pld.clones, 1, eps, n=n, eps0=result.value) <= delta
    assert _upper_after(pld.clones, 1, eps, n=n, eps0=result.rejected) > delta
    lower, _ = clones_delta_bounds(n, result.value, eps)
    assert lower[0] <= delta  # the true delta at the returned eps0 meets the target
    # Two steps more generous, even the grid-free upper bound misses it: the
    # calibration is at most one step conservative (delta grows ~3 % per step here).
    _, upper = clones_delta_bounds(n, result.value * (1 + tol) ** 2, eps)
    assert upper[0] > delta


def test_smallest_number_of_users():
    eps0, eps, delta = 3.0, 0.5, 1e-6
    result = pld.calibrate(pld.clones, "n", eps0=eps0, target_eps=eps, target_delta=delta)
    n = result.value
    assert isinstance(n, int) and result.rejected == n - 1
    assert _upper_after(pld.clones, 1, eps, n=n, eps0=eps0) <= delta
    assert _upper_after(pld.clones, 1, eps, n=n - 1, eps0=eps0) > delta
    assert clones_delta_bounds(n, eps0, eps)[0][0] <= delta
    assert clones_delta_bounds(n - 2, eps0, eps)[1][0] > delta


@pytest.mark.parametrize("adversary", ["strong", "weak"])
def test_krr_gamma_against_brute_force(adversary):
    n, k, eps, delta, tol = 5, 3, 1.0, 0.2, 1e-3
    result = pld.calibrate(
        pld.krr, "gamma", n=n, k=k, adversary=adversary, target_eps=eps, target_delta=delta
    )
    assert result.rejected == pytest.approx(result.value / (1 + tol), rel=1e-12)

    def oracle(gamma):
        return krr_views.delta(n, k, Fraction(gamma), adversary, [eps])[0]

    assert oracle(result.value) <= delta
    gamma_exact = brentq(lambda g: oracle(g) - delta, 1e-3, 1.0, xtol=1e-10)
    assert gamma_exact <= result.value <= gamma_exact * (1 + tol) ** 2


def test_rounds_of_a_composed_shuffle():
    # The largest T for n = 2000 users at eps0 = 1: T and T + 1 rebuilt independently.
    result = pld.calibrate(
        pld.clones, "rounds", n=2000, eps0=1.0, target_eps=1.0, target_delta=1e-6
    )
    loss = pld.clones(n=2000, eps0=1.0)
    assert loss.self_compose(result.value).delta(1.0) <= 1e-6
    assert loss.self_compose(result.value + 1).delta(1.0) > 1e-6
    assert result.eps_upper == loss.self_compose(result.value).epsilon(1e-6)


def test_unreachable_target_reports_the_best_reachable_pair():
    with pytest.raises(ValueError) as failure:
        pld.calibrate(
            pld.randomized_response, "rounds", eps0=1.0, target_eps=0.5, target_delta=1e-9
        )
    message = str(failure.value)
    best = pld.randomized_response(1.0)
    assert "no rounds in [1, 1e+07] meets the target (eps=0.5, delta=1e-09)" in message
    assert f"delta_upper={best.delta(0.5):.4g} at eps=0.5" in message
    assert f"eps_upper={best.epsilon(1e-9):.4g} at delta=1e-09" in message

    with pytest.raises(ValueError, match=r"no sigma in \[0.5, 2\] .* the most private, sigma=2,"):
        pld.calibrate(pld.gaussian, "sigma", target_eps=0.1, target_delta=1e-9, bounds=(0.5, 2.0))


def test_generous_end_of_the_range_is_returned_when_it_meets_the_target():
    result = pld.calibrate(
        pld.randomized_response, "eps0", target_eps=1.0, target_delta=1e-6, bounds=(0.01, 0.5)
    )
    assert result.value == 0.5 and result.rejected is None


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"param": "p"}, "param must be one of"),
        ({"param": "eps0", "eps0": 1.0}, "eps0 is the calibrated parameter"),
        ({"param": "rounds", "rounds": 3}, "rounds is the calibrated parameter"),
        ({"target_delta": 0.0}, "target_delta must lie in"),
        ({"target_delta": 1.0}, "target_delta must lie in"),
        ({"target_eps": -1.0}, "target_eps must be >= 0"),
        ({"tolerance": 0.0}, "tolerance must lie in"),
        ({"bounds": (2.0, 1.0)}, "bounds"),
        ({"rounds": 0}, "rounds must be an integer >= 1"),
        ({"mechanism": "clones"}, "mechanism must be a callable"),
        ({"mechanism": pld.gaussian}, "no parameter 'eps0'"),
    ],
)
def test_bad_arguments_name_the_parameter(kwargs, fragment):
    arguments = {
        "mechanism": pld.randomized_response,
        "param": "eps0",
        "target_eps": 1.0,
        "target_delta": 1e-6,
        **kwargs,
    }
    mechanism, param = arguments.pop("mechanism"), arguments.pop("param")
    with pytest.raises(ValueError, match=fragment):
        pld.calibrate(mechanism, param, **arguments)


def test_every_parameter_has_a_direction_and_a_range():
    for name, spec in PARAMETERS.items():
        assert spec.private_when in ("smaller", "larger"), name
        assert 0 < spec.low < spec.high and spec.low <= spec.start <= spec.high, name
