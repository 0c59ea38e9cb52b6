"""Cross-check against Google's dp_accounting on identical pmf pairs.

dp_accounting rounds losses up (pessimistic) or down (optimistic) on a grid of
spacing 1e-4; its pessimistic value is an upper bound with a first-order
discretisation error, which its optimistic value brackets from below. Our
bracket must overlap its [optimistic, pessimistic] interval, and its
pessimistic value may exceed our upper bound by no more than its own width.
"""

from __future__ import annotations

import numpy as np
import pytest

import pld

pld_module = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")


def _dp_accounting(log_p, log_q, rounds, pessimistic):
    built = pld_module.from_two_probability_mass_functions(
        log_probability_mass_function_lower=dict(enumerate(log_q)),
        log_probability_mass_function_upper=dict(enumerate(log_p)),
        pessimistic_estimate=pessimistic,
        value_discretization_interval=1e-4,
        symmetric=False,
    )
    return built.self_compose(rounds) if rounds > 1 else built


@pytest.mark.parametrize("rounds", [1, 10, 50])
def test_bracket_agrees_with_dp_accounting(rounds):
    rng = np.random.default_rng(7)
    p = rng.dirichlet(np.ones(6))
    q = rng.dirichlet(np.ones(6))
    log_p, log_q = np.log(p), np.log(q)
    ours = pld.from_pmfs(log_p, log_q, loss_grid_step=1e-4).self_compose(rounds)
    pessimistic = _dp_accounting(log_p, log_q, rounds, True)
    optimistic = _dp_accounting(log_p, log_q, rounds, False)
    for eps in (0.1, 0.5, 1.0, 2.0, 4.0):
        lower, upper = ours.delta_bounds(eps)
        theirs_up = pessimistic.get_delta_for_epsilon(eps)
        theirs_low = optimistic.get_delta_for_epsilon(eps)
        their_width = max(theirs_up - theirs_low, 1e-15)
        assert theirs_up >= lower - 1e-12
        assert theirs_up <= upper + their_width
        assert theirs_low <= upper + 1e-12
        # Ours is at least as tight as theirs on the same pmfs and the same grid,
        # up to our float round-off terms (relative 1e-9 here), which dp_accounting
        # does not account for.
        assert upper - lower <= their_width + 1e-8 * upper
