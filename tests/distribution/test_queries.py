"""The delta and epsilon queries of a PLD agree with each other after refinement."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import pld


def _assert_eps_brackets_meet_their_delta(loss) -> None:
    """After a delta query has refined ``loss``, each eps bracket is ordered and its
    upper end meets its delta."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pld.AccuracyWarning)
        loss.delta_bounds(np.array([-1.0, 0.0, 0.25, 0.5, 1.0, 2.0, 5.0, 50.0]))
        for delta in (0.5, 1e-3, 1e-9):
            eps_lower, eps_upper = loss.epsilon_bounds(delta)
            assert 0.0 <= eps_lower <= eps_upper
            assert loss.delta_bounds(eps_upper)[1] <= delta


def test_epsilon_upper_is_verified_by_a_later_delta_query():
    # Found by the long fuzz profile. epsilon_bounds(1e-9) refined this PLD through
    # grids of step 5e-4, 1.6e-5 and 9.8e-7 and kept the smallest eps_upper, the
    # intermediate grid's; delta_bounds consults only the first and the finest grid,
    # whose upper delta there was 1.0000000064e-9 > 1e-9. Each grid's bound is valid,
    # so both answers were safe, but the reported eps must meet its delta.
    loss = pld.checkin(n=92, p=0.001, eps0=4.752143130412406)
    _assert_eps_brackets_meet_their_delta(loss)


def test_a_bracket_from_a_cached_refinement_is_never_inverted():
    # Found by the long fuzz profile. pld.shuffle's pair depends on the grid (the
    # profile is connected on it): on step 1e-3 eps(1e-9) lies in [0.37543, 0.37550],
    # on the refined step 2e-6 in [0.37514, 0.37521]. Both upper bounds hold for the
    # mechanism; the lower bound of the coarse pair is not one for the finer pair, and
    # combining the first and the cached finest PLD returned lower 0.37543 > upper 0.37521.
    randomizer = pld.randomizers.matrix([[0.5, 0.3, 0.2], [0.2, 0.3, 0.5]])
    loss = pld.shuffle(randomizer, 175)
    _assert_eps_brackets_meet_their_delta(loss)


_DELTAS = np.array([1.0, 0.5, 1e-3, 1e-6, 1e-6, 1e-9, 1e-14, 1e-300, 0.2])


@pytest.mark.parametrize(
    "make",
    [
        lambda: pld.clones(10_000, 1.0).self_compose(10),
        lambda: pld.subsampled_gaussian(1.0, 0.01),
        lambda: pld.gaussian(2.0).self_compose(3),
        lambda: pld.randomized_response(1.0).self_compose(20),
        lambda: pld.krr(1000, 4, 0.25, "weak"),
    ],
)
def test_epsilon_of_many_deltas_equals_each_alone(make):
    """An array of delta (unsorted, repeated, some unreachable) gets, element by element,
    exactly the floats each delta gets alone (rel_accuracy = 1: no refinement)."""
    loss = make()
    lower, upper = loss.epsilon_bounds(_DELTAS, rel_accuracy=1.0)
    assert lower.shape == upper.shape == _DELTAS.shape
    np.testing.assert_array_equal(loss.epsilon(_DELTAS, rel_accuracy=1.0), upper)
    for delta, low, high in zip(_DELTAS.tolist(), lower, upper, strict=True):
        assert make().epsilon_bounds(delta, rel_accuracy=1.0) == (low, high)
        assert 0.0 <= low <= high
        if math.isfinite(high):
            assert loss.delta_bounds(high, rel_accuracy=1.0)[1] <= delta


def test_epsilon_of_many_deltas_refines_only_those_that_miss_the_target():
    """Default accuracy: deltas met on the PLD itself keep the bracket they get alone; the
    others are refined together, meet the target, contain the Gaussian's closed form and
    are verified by a later delta query."""
    sigma, rounds = 2.0, 30
    deltas = np.array([1e-2, 1e-6, 1e-13])
    loss = pld.gaussian(sigma).self_compose(rounds)
    alone = [pld.gaussian(sigma).self_compose(rounds).epsilon_bounds(d) for d in deltas]
    first_lower, first_upper = loss._epsilon_bracket(deltas)
    met = pld.distribution.refinement.relative_width(first_lower, first_upper) <= 1e-2
    assert met.any() and not met.all()
    lower, upper = loss.epsilon_bounds(deltas)
    assert np.all(pld.distribution.refinement.relative_width(lower, upper) <= 1e-2)
    for i, delta in enumerate(deltas.tolist()):
        if met[i]:
            assert (lower[i], upper[i]) == alone[i]
        truth = _gaussian_epsilon(math.sqrt(rounds) / sigma, delta)
        assert lower[i] <= truth <= upper[i]
        assert loss.delta_bounds(upper[i])[1] <= delta


def _gaussian_epsilon(mu: float, delta: float) -> float:
    """eps(delta) of the mu-GDP Gaussian pair by bisection of its closed form (Balle & Wang
    2018, Thm 8): delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)."""
    from scipy.special import log_ndtr

    def delta_of(eps: float) -> float:
        first = math.exp(log_ndtr(-eps / mu + mu / 2))
        return first * -math.expm1(
            eps + log_ndtr(-eps / mu - mu / 2) - log_ndtr(-eps / mu + mu / 2)
        )

    low, high = 0.0, 200.0
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if delta_of(middle) > delta else (low, middle)
    return (low + high) / 2


@pytest.mark.parametrize("bad", [[0.5, 0.0], [1e-3, 1.5], [np.nan], [[1e-3]], ["0.1"], [-1e-9]])
def test_epsilon_of_an_invalid_delta_array_names_it(bad):
    with pytest.raises(ValueError, match="delta"):
        pld.randomized_response(1.0).epsilon_bounds(np.array(bad, dtype=object).tolist())
