"""Exchanging PLDs with Google's dp_accounting: export, import, round trip, composition.

Tolerances come from the two tools' documented errors, not from observed values:

* ``summation``: pld's upper bound adds ``2 (size + 1) u`` times the mass for the
  round-off of its own cumulative sums (pld.engine.loss_pmf), which the exported
  masses do not carry; dp_accounting's own sum errs by as much again, hence
  ``4 (size + 1) u`` (u = 2^-53).
* ``lower_excess``: what cannot be folded into an optimistic pmf
  (pld.integrations.dp_accounting):
  ``junk_mass + error_l1 + loss_error`` (times a mass <= 1).
* dp_accounting's own discretisation: its pessimistic and optimistic values
  bracket the truth; the width between them is its error.
"""

from __future__ import annotations

import numpy as np
import pytest

import pld
from pld.central.gaussian_mechanism import gaussian_delta
from pld.numerics import UNIT_ROUNDOFF

privacy_loss_distribution = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
from pld.integrations.dp_accounting import from_dp_accounting, to_dp_accounting  # noqa: E402

EPS = np.linspace(-0.5, 3.0, 36)


def _summation(loss):
    size = max(d.upper.masses.size for d in loss._directions)
    return 4 * (size + 1) * UNIT_ROUNDOFF


def _lower_excess(loss):
    return max(d.lower.junk_mass + d.lower.error_l1 + d.lower.loss_error for d in loss._directions)


@pytest.fixture(scope="module")
def samples():
    rng = np.random.default_rng(5)
    p, q = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
    pair = pld.from_pmfs(np.log(p), np.log(q), loss_grid_step=1e-3)
    return {
        "clones x 20": pld.clones(n=1000, eps0=1.0).self_compose(20),
        "random pair": pair,
        "random pair x 10": pair.self_compose(10),
        "krr strong": pld.krr(n=50, k=3, gamma=0.3),
    }


NAMES = ["clones x 20", "random pair", "random pair x 10", "krr strong"]


@pytest.mark.parametrize("name", NAMES)
def test_pessimistic_export_dominates_our_upper_bound(samples, name):
    loss = samples[name]
    lower, upper = loss.delta_bounds(EPS, rel_accuracy=1)
    exported = to_dp_accounting(loss, "upper")
    theirs = exported.get_delta_for_epsilon(EPS)
    assert np.all(theirs >= upper - _summation(loss))
    # ...and costs next to nothing: the folded error terms are ~1e-12 at most.
    assert np.all(theirs <= upper * (1 + 1e-9) + 1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_optimistic_export_stays_at_our_lower_bound(samples, name):
    loss = samples[name]
    lower, _ = loss.delta_bounds(EPS, rel_accuracy=1)
    theirs = to_dp_accounting(loss, "lower").get_delta_for_epsilon(EPS)
    assert np.all(theirs <= lower + _lower_excess(loss) + _summation(loss))
    assert np.all(theirs >= lower * (1 - 1e-9) - 1e-15)


@pytest.mark.parametrize(
    "name",
    # The import reads dp_accounting's profile at every grid point (~10 s for the
    # 10-fold pair's 120 k points), hence slow.
    [n if n != "random pair x 10" else pytest.param(n, marks=pytest.mark.slow) for n in NAMES],
)
def test_round_trip_preserves_the_bracket(samples, name):
    loss = samples[name]
    lower, upper = loss.delta_bounds(EPS, rel_accuracy=1)
    back = from_dp_accounting(
        to_dp_accounting(loss, "upper"),
        to_dp_accounting(loss, "lower"),
        value_discretization_interval=loss.loss_grid_step,
    )
    # Imported through the public profile: one symmetric pair, the larger direction.
    assert back.symmetric and back.loss_grid_step == loss.loss_grid_step
    back_lower, back_upper = back.delta_bounds(EPS, rel_accuracy=1)
    tolerance = _summation(loss)
    assert np.all(back_upper >= upper - tolerance)
    assert np.all(back_upper <= upper * (1 + 1e-9) + 1e-12 + tolerance)
    assert np.all(np.abs(back_lower - lower) <= _lower_excess(loss) + tolerance + 1e-9 * lower)


@pytest.fixture(scope="module")
def dp_gaussian():
    common = {"standard_deviation": 2.0, "value_discretization_interval": 1e-3}
    pessimistic = privacy_loss_distribution.from_gaussian_mechanism(
        pessimistic_estimate=True, **common
    )
    optimistic = privacy_loss_distribution.from_gaussian_mechanism(
        pessimistic_estimate=False, use_connect_dots=False, **common
    )
    return pessimistic, optimistic


@pytest.mark.parametrize("rounds", [1, 10])
def test_imported_gaussian_brackets_the_exact_delta(dp_gaussian, rounds):
    # Truth: delta of the Gaussian mechanism in closed form (sigma / sqrt(T) after T rounds).
    imported = from_dp_accounting(*dp_gaussian, value_discretization_interval=1e-3)
    composed = imported.self_compose(rounds) if rounds > 1 else imported
    eps = np.array([0.0, 0.25, 0.5, 1.0, 2.0])
    lower, upper = composed.delta_bounds(eps)
    exact = gaussian_delta(eps, 2.0 / np.sqrt(rounds))
    assert np.all(lower <= exact * (1 + 1e-9))
    assert np.all(upper >= exact * (1 - 1e-9))
    # The bracket is as good as dp_accounting's own [optimistic, pessimistic]:
    pessimistic, optimistic = (d.self_compose(rounds) if rounds > 1 else d for d in dp_gaussian)
    their_width = pessimistic.get_delta_for_epsilon(eps) - optimistic.get_delta_for_epsilon(eps)
    assert np.all(upper - lower <= their_width * 1.01 + 1e-12)


def test_imported_pessimistic_alone_is_a_bracket_around_that_pair(dp_gaussian):
    pessimistic, _ = dp_gaussian
    imported = from_dp_accounting(pessimistic, value_discretization_interval=1e-3)
    eps = np.array([0.0, 0.5, 1.0])
    lower, upper = imported.delta_bounds(eps)
    theirs = pessimistic.get_delta_for_epsilon(eps)
    # On its own grid the import places every atom exactly: both bounds are that pair's delta.
    assert np.allclose(upper, theirs, rtol=1e-9, atol=1e-12)
    assert np.allclose(lower, theirs, rtol=1e-9, atol=1e-12)
    assert np.all(upper >= gaussian_delta(eps, 2.0))


def test_regridded_import_composes_with_pld_mechanisms(dp_gaussian):
    # dp_accounting's Gaussian, re-discretised onto pld's grid of a clones round,
    # composed with it in pld; and the clones round exported and composed with the
    # Gaussian inside dp_accounting. Both are bounds on the same composition.
    shuffle = pld.clones(n=1000, eps0=1.0)
    step = shuffle.loss_grid_step
    imported = from_dp_accounting(
        *dp_gaussian, value_discretization_interval=1e-3, loss_grid_step=step
    )
    ours = pld.compose(shuffle, imported, pld.gaussian(2.0, loss_grid_step=step))
    eps = np.array([0.5, 1.0, 1.5, 2.0])
    lower, upper = ours.delta_bounds(eps)
    exact_gaussian_twice = pld.compose(shuffle, pld.gaussian(2.0 / np.sqrt(2), loss_grid_step=step))
    ref_lower, ref_upper = exact_gaussian_twice.delta_bounds(eps)
    assert np.all(lower <= ref_upper) and np.all(ref_lower <= upper)

    gaussian_there = {"standard_deviation": 2.0, "value_discretization_interval": step}
    pessimistic = to_dp_accounting(shuffle, "upper").compose(
        privacy_loss_distribution.from_gaussian_mechanism(**gaussian_there)
    )
    optimistic = to_dp_accounting(shuffle, "lower").compose(
        privacy_loss_distribution.from_gaussian_mechanism(
            pessimistic_estimate=False, use_connect_dots=False, **gaussian_there
        )
    )
    single = pld.compose(shuffle, pld.gaussian(2.0, loss_grid_step=step))
    single_lower, single_upper = single.delta_bounds(eps)
    their_upper = pessimistic.get_delta_for_epsilon(eps)
    their_lower = optimistic.get_delta_for_epsilon(eps)
    # Two brackets around one true value must overlap.
    assert np.all(their_upper >= single_lower * (1 - 1e-9))
    assert np.all(their_lower <= single_upper * (1 + 1e-9))


def test_bad_input_is_refused(samples, dp_gaussian):
    pessimistic, optimistic = dp_gaussian
    with pytest.raises(ValueError, match="bound must be 'upper' or 'lower'"):
        to_dp_accounting(samples["random pair"], "middle")
    with pytest.raises(ValueError, match="loss must be a pld.PLD"):
        to_dp_accounting(pessimistic)
    # Swapped: the public API hides which is which, but the order of the values does not.
    with pytest.raises(ValueError, match="optimistic must not exceed pessimistic"):
        from_dp_accounting(optimistic, pessimistic, value_discretization_interval=1e-3)
    with pytest.raises(ValueError, match="pessimistic must be a dp_accounting"):
        from_dp_accounting(samples["random pair"])
    with pytest.raises(ValueError, match="optimistic must be a dp_accounting"):
        from_dp_accounting(pessimistic, "optimistic")
    with pytest.raises(ValueError, match="loss_grid_step"):
        from_dp_accounting(pessimistic, loss_grid_step=2.0)
    with pytest.raises(ValueError, match="value_discretization_interval"):
        from_dp_accounting(pessimistic, value_discretization_interval=0.0)


@pytest.mark.parametrize("rounds", [1, 5])
def test_import_onto_a_grid_that_does_not_nest_stays_a_bracket(rounds):
    # dp_accounting's grid 1e-3 -> pld's 3e-3: connect-the-dots above, contraction
    # below (the optimistic pmf's Q-masses sum above 1: its profile is raised to 1 - e^eps).
    common = {"standard_deviation": 1.0, "value_discretization_interval": 1e-3}
    pessimistic = privacy_loss_distribution.from_gaussian_mechanism(**common)
    optimistic = privacy_loss_distribution.from_gaussian_mechanism(
        pessimistic_estimate=False, use_connect_dots=False, **common
    )
    imported = from_dp_accounting(
        pessimistic, optimistic, value_discretization_interval=1e-3, loss_grid_step=3e-3
    )
    assert imported.loss_grid_step == 3e-3
    composed = imported.self_compose(rounds) if rounds > 1 else imported
    eps = np.array([0.0, 0.5, 1.0, 2.0, 3.0])
    lower, upper = composed.delta_bounds(eps)
    exact = gaussian_delta(eps, 1.0 / np.sqrt(rounds))
    assert np.all(lower <= exact * (1 + 1e-9)) and np.all(upper >= exact * (1 - 1e-9))
    # Still a useful bracket: within 2 % of delta here.
    assert np.all(upper - lower <= 0.02 * exact)


def _exact_add_remove_delta(p, q, eps):
    """max(H_{e^eps}(P || Q), H_{e^eps}(Q || P)) of finite pmfs, by direct sums."""
    alpha = np.exp(eps)[:, None]
    forward = np.maximum(p - alpha * q, 0.0).sum(axis=1)
    backward = np.maximum(q - alpha * p, 0.0).sum(axis=1)
    return np.maximum(forward, backward)


ASYMMETRIC_PAIRS = {
    "skewed": ([0.9, 0.1], [0.5, 0.5]),
    "Q-only outcome": ([1.0, 0.0], [0.5, 0.5]),
    "mild": ([0.6, 0.4], [0.5, 0.5]),
}


@pytest.mark.parametrize("name", list(ASYMMETRIC_PAIRS))
def test_a_pair_flagged_symmetric_that_is_not_is_refused(name):
    # dp_accounting's from_two_probability_mass_functions defaults to symmetric=True,
    # and then reports the REMOVE direction only: here its delta(1) is 0 while the
    # ADD direction's is up to 0.5. The import reads the reverse direction off the
    # profile at negative eps (H(Q||P)(e) = 1 - e^e + e^e H(P||Q)(-e)) and refuses.
    p, q = (np.array(v) for v in ASYMMETRIC_PAIRS[name])
    with np.errstate(divide="ignore"):
        log_p = {i: float(v) for i, v in enumerate(np.log(p))}
        log_q = {i: float(v) for i, v in enumerate(np.log(q))}
    eps = np.array([0.0, 0.1, 0.5, 1.0, 2.0])
    exact = _exact_add_remove_delta(p, q, eps)
    for symmetric in (True, False):
        pessimistic, optimistic = (
            privacy_loss_distribution.from_two_probability_mass_functions(
                log_q, log_p, pessimistic_estimate=estimate, symmetric=symmetric
            )
            for estimate in (True, False)
        )
        for given in ((pessimistic,), (pessimistic, optimistic)):
            if symmetric:
                with pytest.raises(ValueError, match="must bound both directions"):
                    from_dp_accounting(*given)
                continue
            lower, upper = from_dp_accounting(*given).delta_bounds(eps, rel_accuracy=1)
            # dp_accounting rounds each loss up by < h = 1e-4: H_{e^eps} grows by < e^eps h.
            assert np.all(upper >= exact)
            assert np.all(upper <= exact + np.exp(eps) * 1e-4 + 1e-12)
            if len(given) == 2:  # alone, the pessimistic PLD is both sides (see above)
                assert np.all(lower <= exact + 1e-12)
