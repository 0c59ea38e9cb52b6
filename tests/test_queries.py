"""The delta and epsilon queries of a PLD agree with each other after refinement."""

from __future__ import annotations

import warnings

import numpy as np

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
