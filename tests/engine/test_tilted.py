"""Exponentially tilted compositions: brackets at delta 1e-12 .. 1e-15 against exact truths.

Without tilting, the FFT round-off bound of a long composition (about 1e-14 ..
1e-12 absolute) swamps delta values of that order. Queries whose bracket is
dominated by it recompute the composition tilted towards the queried tail
(:mod:`pld.engine.tilted`). The truths: randomised response T-fold is a binomial
sum (scipy's binomial pmf, log-space accurate), the Gaussian T-fold a Gaussian
(Balle and Wang's closed form in log space); a heterogeneous, asymmetric
composition of small pairs is enumerated outcome by outcome.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import pld
from pld.central.gaussian_mechanism import gaussian_delta
from pld.distribution.refinement import AccuracyWarning
from pld.engine.tilted import clip_tails, tilt_exponent, tilted_compose_bounds
from tests.exact import product_delta, rr_delta

#: Relative error of the truths themselves near delta = 1e-15: log_ndtr and the
#: binomial pmf are accurate to a few ulps of their logarithms (|log| < 40, so
#: ~1e-14 relative), and the Gaussian's difference of two terms cancels at most
#: three digits at the eps asked here.
TRUTH_RTOL = 1e-9


def _width(lower: float, upper: float) -> float:
    return (upper - lower) / upper


def _assert_eps_bracket(truth, lower, upper, delta):
    """``truth(eps)`` (delta of the exact composition) crosses ``delta`` in [lower, upper]."""
    assert truth(np.array([upper]))[0] <= delta * (1 + TRUTH_RTOL)
    assert lower == 0.0 or truth(np.array([lower]))[0] >= delta * (1 - TRUTH_RTOL)


def _query(composed, delta, truth):
    """eps(delta) and delta(eps) at its upper end, without warnings, against the truth."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", AccuracyWarning)
        lower, upper = composed.epsilon_bounds(delta)
        _assert_eps_bracket(truth, lower, upper, delta)
        assert _width(lower, upper) <= 1e-2
        eps = np.array([lower, 0.5 * (lower + upper), upper])
        d_lower, d_upper = composed.delta_bounds(eps)
    exact = truth(eps)
    # A later delta query at eps_upper verifies delta (the tilted composition of
    # the eps query is remembered and consulted).
    assert d_upper[2] <= delta
    assert np.all(d_lower <= exact * (1 + TRUTH_RTOL))
    assert np.all(d_upper >= exact * (1 - TRUTH_RTOL))
    counted = d_upper >= 1e-15
    assert np.all(((d_upper - d_lower) / d_upper)[counted] <= 1e-2)


# -- randomised response: binomial sums ---------------------------------------------------

RR_CASES = [(eps0, rounds) for eps0 in (0.1, 1.0) for rounds in (100, 1000, 10_000)]
RR_FAST = {(1.0, 1000), (0.1, 10_000)}


@pytest.mark.parametrize(
    "eps0, rounds",
    [pytest.param(*case, marks=() if case in RR_FAST else pytest.mark.slow) for case in RR_CASES],
)
@pytest.mark.parametrize("delta", [1e-12, 1e-15])
def test_randomized_response_tail_brackets_hold_the_binomial_truth(eps0, rounds, delta):
    composed = pld.randomized_response(eps0).self_compose(rounds)
    _query(composed, delta, lambda eps: rr_delta(eps0, rounds, eps))


# -- the Gaussian mechanism: closed form ----------------------------------------------------

GAUSSIAN_CASES = [(sigma, rounds) for sigma in (0.5, 2.0, 20.0) for rounds in (100, 1000, 10_000)]
GAUSSIAN_FAST = {(0.5, 1000), (20.0, 10_000)}


@pytest.mark.parametrize(
    "sigma, rounds",
    [
        pytest.param(*case, marks=() if case in GAUSSIAN_FAST else pytest.mark.slow)
        for case in GAUSSIAN_CASES
    ],
)
@pytest.mark.parametrize("delta", [1e-12, 1e-15])
def test_gaussian_tail_brackets_hold_the_closed_form(sigma, rounds, delta):
    composed = pld.gaussian(sigma).self_compose(rounds)
    _query(composed, delta, lambda eps: gaussian_delta(eps, sigma / math.sqrt(rounds)))


# -- a heterogeneous composition: binomial mixture of Gaussians ------------------------------


def _mixed_delta(rounds: int, eps: np.ndarray) -> np.ndarray:
    """delta(eps) of ``rounds`` x (gaussian(2) and rr(1)): the RR loss is 2K - T with
    K binomial, and the Gaussian part's hockey stick at ``eps - l`` has Balle and
    Wang's closed form for every real argument."""
    from scipy.stats import binom

    p = math.exp(1.0) / (1 + math.exp(1.0))
    k = np.arange(rounds + 1)
    weight = binom.pmf(k, rounds, p)
    loss = 2.0 * k - rounds
    sigma = 2.0 / math.sqrt(rounds)
    return np.array([np.sum(weight * gaussian_delta(e - loss, sigma)) for e in eps])


@pytest.mark.parametrize("delta", [1e-12, 1e-15])
def test_heterogeneous_tail_brackets_hold_the_mixture_truth(delta):
    rounds = 300
    composed = pld.compose(pld.gaussian(2.0), pld.randomized_response(1.0), rounds=rounds)
    _query(composed, delta, lambda eps: _mixed_delta(rounds, eps))


# -- shuffle workloads: no closed form ------------------------------------------------------


def test_clones_at_one_in_a_trillion_tightens_and_meets_the_target():
    # clones(1e5, 1), T = 10, eps(1e-12): the release before tilting answered
    # [0.07702615, 0.08054600] (4.4 % wide, flagged); the upper bound may only move down.
    composed = pld.clones(100_000, 1.0, variant="stronger").self_compose(10)
    with warnings.catch_warnings():
        warnings.simplefilter("error", AccuracyWarning)
        lower, upper = composed.epsilon_bounds(1e-12)
    assert upper <= 0.08054599624992503
    assert lower >= 0.07702615251229024 * (1 - 1e-12)
    assert _width(lower, upper) <= 1e-2


# -- soundness of the tilted pmf at every eps ------------------------------------------------


def _pair(seed: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p, q = rng.dirichlet(np.ones(size)), rng.dirichlet(np.ones(size))
    return p, q


@pytest.mark.parametrize("budget", [0.0, 0.15])
@pytest.mark.parametrize("cut_shift", [-3.0, 0.0, 2.0])
def test_tilted_views_bracket_an_enumerated_heterogeneous_composition(cut_shift, budget):
    # Two asymmetric pairs, off-grid losses, 3 + 2 rounds: 4^5 outcomes enumerated
    # exactly. The tilted view must bracket the truth at every eps, also below
    # its cut (lumped mass), in the reverse direction, and with the factors'
    # highest atoms (composed mass up to ``budget``) moved to +inf or dropped.
    a, b = _pair(1, 4), _pair(2, 4)
    loss_a = pld.from_pmfs(np.log(a[0]), np.log(a[1]), loss_grid_step=1 / 256)
    loss_b = pld.from_pmfs(np.log(b[0]), np.log(b[1]), loss_grid_step=1 / 256)
    composed = pld.compose(loss_a, loss_a, loss_a, loss_b, loss_b)
    eps = np.linspace(0.0, 12.0, 97)
    truth = product_delta([a, a, a, b, b], eps)
    uppers, _ = composed._tilt_factors[0]
    clipped = clip_tails(uppers, budget)
    # 0.15 moves the top atom (0.027) of the second pair's upper pmf to +inf.
    assert (clipped[1][0].infinity_mass > 0.0) == (budget > 0.0)
    for target in (6.0, 7.0, 8.0):
        view = composed._tilted(target, target + cut_shift, budget)
        assert view is not None
        lower, upper = view._delta_bracket(eps)
        assert np.all(lower <= truth * (1 + 1e-12) + 1e-300)
        assert np.all(upper >= truth * (1 - 1e-12))
        # Tight where the view is tight: as narrow as the untilted bracket there
        # (plus the clipped mass, on each side).
        plain = composed._delta_bracket(eps)
        near = (eps >= target + cut_shift + 0.1) & (truth > 1e-6)
        slack = 1.01 * (plain[1] - plain[0])[near] + 1e-15 + 2 * budget
        assert np.all((upper - lower)[near] <= slack)


def test_tilted_composition_of_randomized_response_is_exact_far_in_the_tail():
    # rr(1), T = 1000 on its own lattice: the untilted composition's round-off
    # bound is ~1e-12 absolute; tilted towards eps = 700 the bracket at delta
    # ~ 1e-19 is exact to 1e-7 relatively (the masses' assumed relative accuracy,
    # 1e-12 per round, compounds to 1e-9; the scaled round-off adds about 4e-9).
    one = pld.randomized_response(1.0)
    direction = one._directions[0]
    factors = [(direction.upper, 1000)]
    lam = tilt_exponent(factors, 700.0)
    assert lam is not None and lam > 0
    upper, lower = tilted_compose_bounds(factors, [(direction.lower, 1000)], lam, 699.0, 1e-15)
    eps = np.array([699.5, 700.0, 710.0])
    exact = rr_delta(1.0, 1000, eps)
    assert np.all(lower.delta(eps) <= exact * (1 + TRUTH_RTOL))
    assert np.all(upper.delta(eps) >= exact * (1 - TRUTH_RTOL))
    assert np.all((upper.delta(eps) - lower.delta(eps)) / exact <= 1e-7)
    assert 1e-22 < exact[1] < 1e-16


def test_tilt_exponent_is_none_below_the_mean_and_beyond_the_support():
    factors = [(pld.randomized_response(1.0)._directions[0].upper, 100)]
    mean = 100 * math.tanh(0.5)  # E[L] of rr(1) per round is tanh(eps0 / 2) nats
    assert tilt_exponent(factors, 0.5 * mean) is None
    assert tilt_exponent(factors, 100.0) is None
    lam = tilt_exponent(factors, 60.0)
    # The tilted per-round mean tanh((1 + 2 lam) / 2) hits 0.6: lam = (atanh(0.6) * 2 - 1) / 2.
    assert lam == pytest.approx((2 * math.atanh(0.6) - 1) / 2, rel=1e-5)


def test_atoms_that_underflow_under_the_tilt_are_charged_not_lost():
    # An outcome with P-mass 1e-290 at loss about -667: tilted towards the upper
    # tail its mass falls below 2^-1000 and is zeroed, its P-mass charged to +inf
    # in the upper bound. The brackets still hold the enumerated truth.
    p = np.array([1e-290, 0.5, 0.3, 0.2])
    q = np.array([0.4, 0.2, 0.3, 0.1])
    q = q / q.sum()
    loss = pld.from_pmfs(np.log(p), np.log(q), loss_grid_step=1 / 64)
    composed = loss.self_compose(4)
    eps = np.linspace(0.0, 3.0, 25)
    truth = product_delta([(p, q)] * 4, eps)
    upper_factors, _ = composed._tilt_factors[0]
    lam = tilt_exponent(upper_factors, 2.5)
    # The atom's tilted log-mass (its log M is positive) is below log 2^-1000: dropped.
    assert lam is not None
    assert math.log(p[0]) + lam * math.log(p[0] / q[0]) < -1000 * math.log(2)
    view = composed._tilted(2.5, 2.5)
    lower, upper = view._delta_bracket(eps)
    assert np.all(lower <= truth * (1 + 1e-12) + 1e-300)
    assert np.all(upper >= truth * (1 - 1e-12))


def test_a_tilt_that_drops_every_finite_atom_gives_a_valid_bracket():
    # lam = 500 on the Gaussian's pmf: every atom below the top is dropped, the charged
    # mass rounds to >= 1, and its log1p was a math domain error (seen once refinement
    # stopped reading every ValueError as "unavailable"). Now all goes to +inf.
    one = pld.gaussian(1.0)
    upper_pmf, lower_pmf = one.directions("upper")[0], one.directions("lower")[0]
    upper, lower = tilted_compose_bounds([(upper_pmf, 2)], [(lower_pmf, 2)], 500.0, 1.0, 1e-15)
    eps = np.array([1.0, 1.5])
    truth = gaussian_delta(eps, 1.0 / math.sqrt(2.0))
    assert np.all(lower.delta(eps) <= truth) and np.all(upper.delta(eps) >= truth)
