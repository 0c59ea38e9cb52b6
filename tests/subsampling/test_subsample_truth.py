"""The subsampled brackets against truths computed without pld.

* ``pld.subsample(pld.clones(m, eps0, variant="stronger"), gamma)`` (the oracle's pair,
  p = 1/(e^eps0 + 1)), composed: the Lemma 7 profile of the exactly enumerated clones
  pair, put on a grid as a dominating (connect-the-dots) and a dominated (chord-lowered)
  pair and composed by
  dp_accounting (tests/oracles/subsampled_clones.py). What each side of pld's
  bracket promises (pld/subsampling/subsampled_shuffler.py, docs/error-bounds.md §7):
  the upper bound is at least the composed delta of h, so at least the oracle's
  lower bound; the lower bound is at most the composed delta of h's
  connect-the-dots pair on a grid pld's lower grid refines, so at most the
  oracle's upper bound on the one-round default step.
* Poisson-subsampled Gaussian: dp_accounting's own events at a fine
  discretisation (its pessimistic estimate is an upper bound, so pld's lower
  bound must lie below it) and, far in the tail where dp_accounting's float
  floor takes over, prv_accountant's bracket.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pld
from tests.oracles import subsampled_clones as oracle

#: Relative slack for two independent float computations of the same delta.
RTOL = 1e-9


def _pld_bracket(one: pld.PLD, rounds: int, eps: np.ndarray, rel_accuracy: float):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pld.AccuracyWarning)
        return one.self_compose(rounds).delta_bounds(eps, rel_accuracy=rel_accuracy)


def _check(m, eps0, gamma, rounds, rel_accuracy, fine_divisor, eps):
    one = pld.subsample(pld.clones(m, eps0, variant="stronger"), gamma)
    coarse = one.loss_grid_step
    lower, upper = _pld_bracket(one, rounds, eps, rel_accuracy)
    (up_pmf, up_inf), _ = oracle.grid_pairs(m, eps0, gamma, coarse)
    truth_upper = np.array(oracle.composed_deltas(up_pmf, up_inf, coarse, rounds, eps, "upper"))
    fine = coarse / fine_divisor
    _, (low_pmf, low_inf) = oracle.grid_pairs(m, eps0, gamma, fine)
    truth_lower = np.array(oracle.composed_deltas(low_pmf, low_inf, fine, rounds, eps, "lower"))
    assert np.all(upper >= truth_lower * (1 - RTOL)), (upper, truth_lower)
    assert np.all(lower <= truth_upper * (1 + RTOL) + 1e-16), (lower, truth_upper)
    return lower, upper, truth_lower, truth_upper


def test_subsampled_clones_bracket_is_consistent_with_the_lattice_truth():
    # 200 rounds of 5 % of 300 users, eps0 = 1: the bracket at rel_accuracy 1e-3
    # (0.3-5e-5 wide) sits between the oracle's lower bound on a grid 16 times
    # finer and its upper bound on pld's first grid.
    eps = np.array([0.05, 0.1, 0.2, 0.3])
    lower, upper, truth_lower, _ = _check(300, 1.0, 0.05, 200, 1e-3, 16, eps)
    # pld's upper bound is tight: within its own target of the truth's lower bound
    assert np.all(upper <= truth_lower * (1 + 2e-3))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("m", "eps0", "gamma", "rounds"),
    [(1000, 1.0, 0.05, 1000), (10_000, 2.0, 0.01, 1000), (1000, 1.0, 0.05, 10_000)],
)
def test_issue_workloads_against_the_lattice_truth(m, eps0, gamma, rounds):
    # The workloads whose rel_accuracy=1e-3 brackets looked suspiciously narrow
    # (measured 2e-6 to 3e-4 wide; each contains, or lies above, the truth).
    one = pld.subsample(pld.clones(m, eps0, variant="stronger"), gamma)
    e1 = one.self_compose(rounds).epsilon_bounds(1e-6)[1]
    eps = np.array([0.25, 0.5, 1.0]) * e1
    _check(m, eps0, gamma, rounds, 1e-3, 64, eps)


@pytest.mark.slow
def test_far_tail_of_ten_thousand_rounds_against_the_tilted_truth():
    # subsample(clones(1000, 1), 0.05) after 10^4 rounds at delta ~ 1e-11: the untilted
    # dp_accounting composition is off by 5e-14 here (its float floor), the tilted one
    # gives [1.0999052e-11, 1.0999066e-11] at a grid step of 2.4e-7 (measured).
    m, eps0, gamma, rounds, eps = 1000, 1.0, 0.05, 10_000, 1.2671399137088897
    lower, upper = _pld_bracket(
        pld.subsample(pld.clones(m, eps0, variant="stronger"), gamma), rounds, eps, 1e-3
    )
    step = 9.765625e-07
    (up_pmf, up_inf), (low_pmf, low_inf) = oracle.grid_pairs(m, eps0, gamma, step)
    truth_lower = oracle.tilted_delta(low_pmf, low_inf, step, rounds, eps, "lower")
    truth_upper = oracle.tilted_delta(up_pmf, up_inf, step, rounds, eps, "upper")
    assert upper >= truth_lower * (1 - RTOL)
    assert lower <= truth_upper * (1 + RTOL)


def test_poisson_subsampled_gaussian_against_dp_accounting():
    # 1000 rounds, sigma = 1, q = 0.01: dp_accounting's pessimistic estimate at a
    # discretisation of 1e-4 is an upper bound (pld's lower bounds lie below it);
    # pld's upper bounds lie above dp_accounting's converged values (at 1e-5,
    # measured: 0.0305680, 0.00261242, 2.66557e-6) less its first-order error.
    from dp_accounting.pld import privacy_loss_distribution as dpa

    eps = np.array([0.5, 1.0, 2.0])
    pessimistic = dpa.from_gaussian_mechanism(
        1.0, sampling_prob=0.01, value_discretization_interval=1e-4, log_mass_truncation_bound=-50
    ).self_compose(1000, tail_mass_truncation=1e-16)
    truth_upper = np.array([pessimistic.get_delta_for_epsilon(e) for e in eps])
    converged = np.array([0.0305680, 0.00261242, 2.66557e-6])
    for one in (pld.subsampled_gaussian(1.0, 0.01), pld.poisson_subsample(pld.gaussian(1.0), 0.01)):
        lower, upper = _pld_bracket(one, 1000, eps, 1e-3)
        assert np.all(lower <= truth_upper * (1 + RTOL))
        assert np.all(upper >= converged * (1 - 1e-4))
        assert np.all((upper - lower) / upper <= 1e-3)


@pytest.mark.slow
def test_poisson_subsampled_gaussian_far_tail_against_prv_accountant():
    # 10^4 rounds at delta ~ 1e-12: dp_accounting's pessimistic estimate jumps
    # between 2.9e-13 and 7.2e-13 with its discretisation (float floor) and its
    # optimistic one goes negative; prv_accountant (eps_error 0.01) brackets
    # [8.91e-13, 9.80e-13], and pld's bracket (~5e-4 wide) must meet it.
    from prv_accountant import PRVAccountant
    from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism

    eps = 10.361159372737031
    accountant = PRVAccountant(
        prvs=[PoissonSubsampledGaussianMechanism(noise_multiplier=1.0, sampling_probability=0.01)],
        max_self_compositions=[10_000],
        eps_error=0.01,
        delta_error=1e-15,
    )
    truth_lower, _, truth_upper = accountant.compute_delta(eps, [10_000])
    for one in (pld.subsampled_gaussian(1.0, 0.01), pld.poisson_subsample(pld.gaussian(1.0), 0.01)):
        lower, upper = _pld_bracket(one, 10_000, eps, 1e-3)
        assert upper >= truth_lower and lower <= truth_upper
