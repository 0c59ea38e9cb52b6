"""Bad input raises ValueError naming the parameter; oversized grids are refused."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pld


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: pld.randomized_response(0.0), "eps0"),
        (lambda: pld.randomized_response(math.nan), "eps0"),
        (lambda: pld.gaussian(-1.0), "sigma"),
        (lambda: pld.gaussian(1.0, loss_grid_step=0.0), "loss_grid_step"),
        (lambda: pld.randomized_response(1.0).self_compose(0), "rounds"),
        (lambda: pld.randomized_response(1.0).self_compose(2.5), "rounds"),
        (lambda: pld.randomized_response(1.0).delta(math.nan), "eps"),
        (lambda: pld.randomized_response(1.0).epsilon(0.0), "delta"),
        (lambda: pld.randomized_response(1.0).epsilon(1.5), "delta"),
        (lambda: pld.from_pmfs([0.0, math.nan], [0.0, 0.0]), "log_p"),
        (lambda: pld.from_pmfs(np.log([0.5, 0.5]), np.log([0.3, 0.3])), "Q"),
        (lambda: pld.from_pmfs(np.log([0.5, 0.5]), np.log([1.0])), "same length"),
        (lambda: pld.from_pmfs(np.log([0.5, 0.5]), np.log([0.5, 0.5]), max_loss=-1), "max_loss"),
        (lambda: pld.randomized_response(1.0).atoms("middle"), "bound"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_oversized_grid_is_refused_with_a_hint():
    fine = pld.gaussian(0.05, loss_grid_step=1e-4)
    with pytest.raises(ValueError, match="loss_grid_step"):
        fine.self_compose(100000)


def test_unrelated_grids_are_rebuilt_when_possible_and_refused_otherwise():
    from pld.central.gaussian_mechanism import gaussian_delta

    fine = pld.gaussian(1.0)
    both = pld.compose(fine, pld.gaussian(1.0, loss_grid_step=3e-3))
    assert both.loss_grid_step == fine.loss_grid_step  # the 3e-3 one was rebuilt
    eps = np.array([0.5, 1.0, 2.0])
    lower, upper = both.delta_bounds(eps)
    truth = gaussian_delta(eps, 1.0 / np.sqrt(2))
    assert np.all(lower <= truth * (1 + 1e-12)) and np.all(truth <= upper * (1 + 1e-12))
    log_p, log_q = np.log([0.6, 0.4]), np.log([0.4, 0.6])
    fixed = [pld.from_pmfs(log_p, log_q, loss_grid_step=step) for step in (1e-3, 3e-3)]
    with pytest.raises(ValueError, match="loss_grid_step"):
        pld.compose(*fixed)


def test_nested_default_grids_compose_exactly():
    narrow, wide = pld.gaussian(20.0), pld.gaussian(1.0)
    assert narrow.loss_grid_step < wide.loss_grid_step  # the regridding is exercised
    both = pld.compose(narrow, wide)
    assert both.loss_grid_step == narrow.loss_grid_step
    from pld.central.gaussian_mechanism import gaussian_delta

    # Two Gaussians compose into one with 1/sigma^2 = 1/sigma1^2 + 1/sigma2^2.
    sigma = (1 / 20.0**2 + 1 / 1.0**2) ** -0.5
    eps = np.array([0.5, 1.0, 2.0, 4.0])
    lower, upper = both.delta_bounds(eps)
    truth = gaussian_delta(eps, sigma)
    assert np.all(lower <= truth) and np.all(truth <= upper)
    assert np.max((upper - lower) / upper) < 1e-2


def test_truncated_mass_is_charged_to_the_upper_bound_only():
    log_p, log_q = np.log([0.6, 0.3]), np.log([0.3, 0.6])
    loss = pld.from_pmfs(log_p, log_q, truncated_mass_p=0.1, truncated_mass_q=0.1)
    # rel_accuracy=1: a PLD from raw pmfs cannot be refined; the bounds themselves are tested.
    lower, upper = loss.delta_bounds(10.0, rel_accuracy=1)
    assert upper == pytest.approx(0.1, rel=1e-9)
    assert lower == 0.0
    bounded = pld.from_pmfs(log_p, log_q, truncated_mass_p=0.1, truncated_mass_q=0.1, max_loss=1)
    assert bounded.delta(10.0, rel_accuracy=1) < 1e-12
    assert bounded.delta(0.5, rel_accuracy=1) >= upper * 0 + 0.1 * (1 - math.exp(0.5 - 1))
