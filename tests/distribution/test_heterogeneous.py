"""Heterogeneous composition of many different rounds against independent truths.

* Randomised responses with different eps_i = k_i a on the grid of step a: the
  composed privacy loss lives on the lattice a Z, so its law is an exact lattice
  convolution (float64 sums of non-negative terms, relative error below 1e-13)
  and its delta a finite sum.
* Poisson-subsampled randomised responses (two directions, losses off the grid)
  and tiny clones pairs: brute-force enumeration of the product of the true
  pairs (``tests.exact.product_delta``).
* Many different clones PLDs: the composed pmfs against the direct convolution
  (no FFT) of the factors' own upper and lower pmfs.
* Order independence: any order of the operands gives the same brackets up to
  the round-off the engine charges.
"""

from __future__ import annotations

import math

import numpy as np

import pld
from pld.shuffling.clones.mechanism import clones_pmfs
from tests.exact import product_delta


def lattice_rr_delta(multiples: list[int], unit: float, eps: np.ndarray) -> np.ndarray:
    """delta(eps) of randomised responses with eps_i = multiples[i] * unit, composed.

    Under P the loss of round i is +eps_i with probability e^eps_i / (1 + e^eps_i)
    and -eps_i otherwise; the sum is on the lattice unit * Z.
    """
    reach = sum(multiples)
    law = np.zeros(2 * reach + 1)
    law[reach] = 1.0
    for k in multiples:
        up = 1.0 / (1.0 + math.exp(-k * unit))
        law = up * np.roll(law, k) + (1.0 - up) * np.roll(law, -k)
    loss = unit * (np.arange(law.size) - reach)
    return np.array([np.sum(law * np.clip(-np.expm1(e - loss), 0.0, None)) for e in eps])


def test_many_different_randomised_responses_match_the_lattice_sum():
    unit = 0.05
    multiples = [1 + (7 * i) % 13 for i in range(40)]  # 40 rounds, eps_i from 0.05 to 0.65
    plds = [pld.randomized_response(k * unit, loss_grid_step=unit) for k in multiples]
    composed = pld.compose(*plds)
    eps = unit * np.array([0, 10, 30, 60, 90, 120, 160])
    truth = lattice_rr_delta(multiples, unit, eps)
    lower, upper = composed.delta_bounds(eps, rel_accuracy=1.0)
    assert np.all(lower <= truth * (1 + 1e-12)) and np.all(truth <= upper)
    # Atoms on the grid: the bracket is the engine's error terms only (loss and
    # mass errors of 40 rounds, round-off, window tails): measured at most 2.7e-10
    # of delta (at delta = 6.5e-3); 1e-9 allowed.
    assert np.all(upper - lower <= 1e-9 * truth + composed.error_floor)


def _subsampled_rr(eps0: float, rate: float, step: float) -> pld.PLD:
    return pld.poisson_subsample(pld.randomized_response(eps0, loss_grid_step=step), rate)


def _subsampled_rr_pair(eps0: float, rate: float) -> tuple[np.ndarray, np.ndarray]:
    """Add/remove pair of the Poisson-subsampled eps0-randomised response: P is the
    mixture ``rate * RR_1 + (1 - rate) * RR_0``, Q is RR_0 (one outcome per answer)."""
    high = math.exp(eps0) / (1.0 + math.exp(eps0))
    base = np.array([high, 1.0 - high])
    shifted = base[::-1]
    return rate * shifted + (1.0 - rate) * base, base


def test_different_subsampled_rounds_and_clones_bracket_the_enumerated_product():
    step = 1e-3
    settings = [(0.5 + 0.25 * i, 0.05 + 0.03 * i) for i in range(10)]
    tiny = [(2, 1.0), (3, 0.7)]
    plds = [_subsampled_rr(e, q, step) for e, q in settings]
    plds += [pld.clones(n, e0, loss_grid_step=step) for n, e0 in tiny]
    assert not plds[0].symmetric  # two directions are composed
    pairs = [_subsampled_rr_pair(e, q) for e, q in settings]
    pairs += [tuple(np.exp(x) for x in clones_pmfs(n, e0)) for n, e0 in tiny]
    eps = np.array([0.0, 0.3, 0.8, 1.5, 2.5])
    truth = product_delta(pairs, eps)
    composed = pld.compose(*plds)
    lower, upper = composed.delta_bounds(eps, rel_accuracy=1.0)
    assert np.all(lower <= truth + 1e-15) and np.all(truth <= upper)
    # Losses off the 1e-3 grid, 12 rounds: connect-the-dots is second order (measured
    # at most 3.7e-7 above the truth; 1e-5 allowed), the lower side's moves down to
    # the grid first order (measured at most 2.3e-3 below; 5e-3 allowed).
    assert np.all(upper <= truth * (1 + 1e-5) + composed.error_floor)
    assert np.all(lower >= truth * (1 - 5e-3))


def _direct_delta(pmfs, eps: np.ndarray) -> np.ndarray:
    """delta(eps) of the direct (O(n^2), no FFT) convolution of one-round pmfs: the
    composed masses, plus the +inf mass 1 - prod(1 - m_i)."""
    masses = np.array([1.0])
    offset = 0
    keep = 1.0
    for pmf in pmfs:
        masses = np.convolve(masses, pmf.masses)
        offset += pmf.offset
        keep *= 1.0 - pmf.infinity_mass
    step = pmfs[0].step
    loss = step * (offset + np.arange(masses.size))
    finite = np.array([np.sum(masses * np.clip(-np.expm1(e - loss), 0.0, None)) for e in eps])
    return finite + (1.0 - keep)


def test_many_different_clones_against_the_direct_convolution():
    """120 different clones pairs (n from 20 to 400, eps0 from 0.3 to 1.5): enough
    rounds that the hot bins are recomputed in extended precision."""
    step = 1e-2
    settings = [(int(n), float(e)) for n, e in zip(
        np.linspace(20, 400, 120), np.tile([0.3, 0.7, 1.0, 1.5], 30), strict=True
    )]  # fmt: skip
    plds = [pld.clones(n, e0, loss_grid_step=step) for n, e0 in settings]
    composed = pld.compose(*plds)
    direction = composed._directions[0]
    eps = np.array([0.5, 2.0, 4.0, 6.0, 8.0])
    upper_truth = _direct_delta([p._directions[0].upper for p in plds], eps)
    lower_truth = _direct_delta([p._directions[0].lower for p in plds], eps)
    upper, lower = direction.upper.delta(eps), direction.lower.delta(eps)
    assert np.all(upper >= upper_truth) and np.all(lower <= lower_truth * (1 + 1e-13))
    # The composed upper side exceeds the exact convolution of the upper factors by
    # its error terms (120 rounds of relative mass error 1e-11, loss errors, the
    # window's tails, round-off): measured at most 5.3e-9 relative where delta >=
    # 1e-6, and 1e-14 absolute at delta = 1.4e-9, within the error floor (5e-14).
    assert np.all(upper <= upper_truth * (1 + 1e-8) + composed.error_floor)
    assert np.all(lower >= lower_truth * (1 - 1e-8) - composed.error_floor)


def test_composition_does_not_depend_on_the_order_of_its_operands():
    step = 1e-3
    plds = [pld.clones(int(n), 1.0, loss_grid_step=step) for n in np.linspace(500, 2000, 12)]
    plds += [_subsampled_rr(0.5 + 0.1 * i, 0.02 * (i + 1), step) for i in range(4)]
    order = np.random.default_rng(7).permutation(len(plds))
    eps = np.array([0.2, 0.6, 1.2, 2.0])
    forward = pld.compose(*plds)
    shuffled = pld.compose(*[plds[i] for i in order])
    backward = pld.compose(*plds[::-1])
    results = [c.delta_bounds(eps, rel_accuracy=1.0) for c in (forward, shuffled, backward)]
    floor = max(c.error_floor for c in (forward, shuffled, backward))
    for lower, upper in results[1:]:
        # Same factors, other products and sums: equal up to the round-off each
        # composition charges (its error floor) and a few ulps of the queries.
        np.testing.assert_allclose(upper, results[0][1], rtol=1e-12, atol=2 * floor)
        np.testing.assert_allclose(lower, results[0][0], rtol=1e-12, atol=2 * floor)
    # Repeated operands are grouped by identity: their order does not change a bit.
    a, b = plds[0], plds[-1]
    assert pld.compose(a, b, a) == pld.compose(a, a, b)


def test_recomposing_reuses_the_refined_copies_of_coarser_operands():
    """Operands on coarser nested grids are refined once per (pmf, factor): composing
    the same PLDs again hands the engine the same pmfs (whose window search is then
    memoised) and gives the same PLD."""
    from pld.distribution import composition

    coarse = pld.clones(5000, 1.0)
    fine = pld.clones(15000, 1.0)
    assert coarse.loss_grid_step == 2 * fine.loss_grid_step
    first = pld.compose(coarse, fine)
    pmf = coarse._directions[0].upper
    copy = composition._refined(pmf, 2)
    assert copy is composition._refined(pmf, 2) and copy.step == fine.loss_grid_step
    assert pld.compose(coarse, fine) == first
