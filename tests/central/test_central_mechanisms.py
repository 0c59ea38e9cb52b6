"""Central mechanisms against their exact delta: closed forms, quadrature and lattice sums."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

import pld
from pld.central.discrete_gaussian_mechanism import discrete_gaussian_log_pmfs
from pld.central.discrete_laplace_mechanism import discrete_laplace_log_pmfs
from pld.central.generic_dp import generic_dp_delta
from pld.central.laplace_mechanism import laplace_delta
from tests.exact import product_delta, round_off_floor_expected

EPS = np.array([-1.0, -0.3, 0.0, 0.05, 0.2, 0.5, 0.9, 1.5, 3.0])

#: Relative slack on the truth: masses are accurate to ~1e-12 relative (from_pmfs'
#: default mass_relative_error) and the brute-force sums to a few ulps.
REL = 1e-10


def _brute_delta(log_p: np.ndarray, log_q: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """max over both directions of sum_x (P(x) - e^eps Q(x))_+, by fsum over the outcomes."""
    p, q = np.exp(log_p), np.exp(log_q)
    forward = [math.fsum(np.clip(p - math.exp(e) * q, 0, None)) for e in eps]
    backward = [math.fsum(np.clip(q - math.exp(e) * p, 0, None)) for e in eps]
    return np.maximum(forward, backward)


def _assert_brackets(loss: pld.PLD, truth: np.ndarray, eps: np.ndarray, width: float) -> None:
    with round_off_floor_expected():  # eps up to the largest loss, where delta is 0
        lower, upper = loss.delta_bounds(eps)
    assert np.all(lower <= truth * (1 + REL) + 1e-300)
    assert np.all(upper >= truth * (1 - REL))
    # Absolute 1e-12: at eps = the largest finite loss the truth is 0 and the upper
    # bound, read at eps - loss_error (float placement of the atoms), picks up ~1e-13.
    assert np.all(upper - lower <= width * truth + 1e-12)


def _laplace_quadrature(eps: float, scale: float, sensitivity: float) -> float:
    """H_{e^eps}(Lap(0, b) || Lap(Δ, b)) by adaptive quadrature."""

    def gain(x: float) -> float:
        p = math.exp(-abs(x) / scale) / (2 * scale)
        q = math.exp(-abs(x - sensitivity) / scale) / (2 * scale)
        return max(p - math.exp(eps) * q, 0.0)

    reach = 60 * scale + sensitivity
    value, _ = integrate.quad(gain, -reach, reach, points=[0.0, sensitivity], limit=400)
    return value


@pytest.mark.parametrize(("scale", "sensitivity"), [(1.0, 1.0), (0.4, 1.0), (5.0, 2.0)])
def test_laplace_closed_form_matches_quadrature(scale: float, sensitivity: float) -> None:
    for eps in (0.0, 0.1, 0.5 * sensitivity / scale):
        exact = float(laplace_delta(eps, scale, sensitivity))
        # quad's default tolerances give ~1e-10 absolute on these smooth pieces.
        assert exact == pytest.approx(_laplace_quadrature(eps, scale, sensitivity), abs=1e-9)


@pytest.mark.parametrize(("scale", "sensitivity"), [(1.0, 1.0), (0.4, 1.0), (5.0, 2.0)])
def test_laplace_brackets_its_closed_form(scale: float, sensitivity: float) -> None:
    loss = pld.laplace(scale=scale, sensitivity=sensitivity)
    assert loss.symmetric
    # Measured widths are below 6e-5 relative (second order in the step); 1e-4 with margin.
    _assert_brackets(loss, laplace_delta(EPS, scale, sensitivity), EPS, 1e-4)


@pytest.mark.parametrize(("parameter", "sensitivity"), [(0.5, 1), (0.3, 3), (2.0, 2)])
def test_discrete_laplace_matches_the_lattice_sum(parameter: float, sensitivity: int) -> None:
    x = np.arange(-600, 601)
    log_norm = math.log(math.tanh(parameter / 2))
    log_p = log_norm - parameter * np.abs(x)
    log_q = log_norm - parameter * np.abs(x - sensitivity)
    truth = _brute_delta(log_p, log_q, EPS)
    loss = pld.discrete_laplace(parameter=parameter, sensitivity=sensitivity)
    # Every atom is on the grid: the bracket is exact up to the mass error.
    _assert_brackets(loss, truth, EPS, 1e-10)


def test_discrete_laplace_composition_matches_enumeration() -> None:
    log_p, log_q = discrete_laplace_log_pmfs(0.4, 3)
    pair = (np.exp(log_p), np.exp(log_q))
    truth = product_delta([pair] * 3, EPS)
    _assert_brackets(pld.discrete_laplace(0.4, 3).self_compose(3), truth, EPS, 1e-9)


@pytest.mark.parametrize(("sigma", "sensitivity"), [(0.5, 1), (2.0, 1), (3.0, 2), (1.3, 3)])
def test_discrete_gaussian_matches_the_lattice_sum(sigma: float, sensitivity: int) -> None:
    # Independent sum: a wider range and its own normalisation.
    x = np.arange(-int(40 * sigma) - 10, int(40 * sigma) + 11, dtype=float)
    log_w = -(x**2) / (2 * sigma**2)
    log_z = math.log(math.fsum(np.exp(log_w)))
    log_p = log_w - log_z
    log_q = -((x - sensitivity) ** 2) / (2 * sigma**2) - log_z
    truth = _brute_delta(log_p, log_q, EPS)
    loss = pld.discrete_gaussian(sigma=sigma, sensitivity=sensitivity)
    _assert_brackets(loss, truth, EPS, 1e-9)


@pytest.mark.parametrize(("sigma", "sensitivity"), [(0.7, 1), (2.0, 2), (1.5, 3)])
def test_discrete_gaussian_is_symmetric(sigma: float, sensitivity: int) -> None:
    _, log_p, log_q = discrete_gaussian_log_pmfs(sigma, sensitivity)
    p, q = np.exp(log_p), np.exp(log_q)
    for eps in EPS:
        forward = math.fsum(np.clip(p - math.exp(eps) * q, 0, None))
        backward = math.fsum(np.clip(q - math.exp(eps) * p, 0, None))
        assert forward == pytest.approx(backward, rel=1e-12, abs=1e-300)
    # Both directions computed (the max of the two) agree with the symmetric PLD.
    symmetric = pld.discrete_gaussian(sigma, sensitivity)
    both = pld.from_pmfs(log_p, log_q, loss_grid_step=symmetric.loss_grid_step)
    for a, b in zip(both.delta_bounds(EPS), symmetric.delta_bounds(EPS), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-300)


def test_discrete_gaussian_composition_matches_enumeration() -> None:
    _, log_p, log_q = discrete_gaussian_log_pmfs(1.5, 1)
    truth = product_delta([(np.exp(log_p), np.exp(log_q))] * 2, EPS)
    _assert_brackets(pld.discrete_gaussian(1.5, 1).self_compose(2), truth, EPS, 1e-8)


@pytest.mark.parametrize(("eps0", "delta0"), [(1.0, 0.0), (1.0, 1e-6), (0.3, 0.1), (0.0, 1e-3)])
def test_generic_dp_matches_its_closed_form(eps0: float, delta0: float) -> None:
    loss = pld.approximate_dp(eps=eps0, delta=delta0)
    lower, upper = loss.delta_bounds(EPS)
    truth = generic_dp_delta(EPS, eps0, delta0)
    np.testing.assert_allclose(lower, truth, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(upper, truth, rtol=1e-9, atol=1e-15)
    if delta0 == 0.0:
        np.testing.assert_allclose(pld.pure_dp(eps=eps0).delta(EPS), truth, rtol=1e-9)


def test_generic_dp_composition_matches_enumeration() -> None:
    eps0, delta0 = 0.7, 1e-3
    e = math.exp(eps0)
    p = np.array([delta0, (1 - delta0) * e / (1 + e), (1 - delta0) / (1 + e), 0.0])
    truth = product_delta([(p, p[::-1])] * 4, EPS)
    _assert_brackets(pld.approximate_dp(eps0, delta0).self_compose(4), truth, EPS, 1e-9)


@pytest.mark.parametrize(
    ("build", "kwargs", "name"),
    [
        (pld.laplace, {"scale": 0.0}, "scale"),
        (pld.laplace, {"scale": -1.0}, "scale"),
        (pld.laplace, {"sensitivity": math.nan}, "sensitivity"),
        (pld.laplace, {"scale": 0.01}, "sensitivity / scale"),
        (pld.discrete_laplace, {"parameter": 0.0}, "parameter"),
        (pld.discrete_laplace, {"sensitivity": 1.5}, "sensitivity"),
        (pld.discrete_laplace, {"sensitivity": 0}, "sensitivity"),
        (pld.discrete_gaussian, {"sigma": 0.0}, "sigma"),
        (pld.discrete_gaussian, {"sigma": -2.0}, "sigma"),
        (pld.discrete_gaussian, {"sigma": 1e7}, "sigma"),
        (pld.discrete_gaussian, {"sensitivity": 2.5}, "sensitivity"),
        (pld.pure_dp, {"eps": -0.1}, "eps"),
        (pld.approximate_dp, {"delta": 1.0}, "delta"),
        (pld.approximate_dp, {"delta": -1e-9}, "delta"),
        (pld.laplace, {"loss_grid_step": 0.0}, "loss_grid_step"),
    ],
)
def test_bad_input_names_the_parameter(build, kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name.replace("/", ".")):
        build(**kwargs)


def test_cell_masses_are_the_interval_masses_bit_for_bit():
    """One normal log-CDF per edge gives the floats of four per cell, on both tails,
    across 0, with infinite and repeated edges; unsorted edges take the general route;
    and the cells' masses add up to the mass between the end edges."""
    from pld.central import log_normal_cell_masses, log_normal_interval_mass

    rng = np.random.default_rng(21)
    cases = [
        np.sort(rng.normal(0.0, 3.0, 500)),
        np.linspace(-40.0, -0.5, 300),
        np.linspace(0.25, 38.0, 300),
        np.concatenate(([-np.inf], np.linspace(-9.0, 9.0, 101), [np.inf])),
        np.array([-1.0, 0.0, 0.0, 2.0, 2.0, 5.0]),
        rng.normal(0.0, 2.0, 50),  # unsorted: negative intervals give nan both ways
    ]
    for edges in cases:
        cells = log_normal_cell_masses(edges)
        expected = log_normal_interval_mass(edges[:-1], edges[1:])
        assert np.array_equal(cells, expected, equal_nan=True)
    edges = cases[3]
    total = np.sum(np.exp(log_normal_cell_masses(edges)))
    assert total == pytest.approx(1.0, rel=1e-14)
