"""Invariants of the brackets across mechanisms, fuzzed with random small parameters.

For one round and for compositions of subsampled, shuffled, check-in and central
mechanisms (hypothesis; a modest number of examples by default, more under
``slow``):

* 0 <= lower <= upper <= 1, and both sides non-increasing in eps;
* eps(delta) and delta(eps) agree: ``delta_upper(eps_upper(d)) <= d`` and
  ``eps_lower(d) <= eps_upper(d)``;
* composition is order-independent: the brackets of compose(a, b) and
  compose(b, a) bound the same delta, so they intersect at every eps;
* refinement keeps these and never raises the upper bound: a query at
  ``rel_accuracy`` 1e-2 (``slow``: 1e-3) answers at most what the first grid
  answers (``rel_accuracy=1``).

The default run composes each mechanism with itself and refines only deltas of
at least 1e-6; the ``slow`` run mixes mechanisms and refines every delta.

The engine's own properties on random pmf pairs, against exact enumeration, are
in tests/engine/test_engine_properties.py; the API fuzz (wild arguments, one round) in
tests/house/test_fuzz.py.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pld

EPS = np.array([0.0, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0])
DELTAS = (1e-2, 1e-5, 1e-9)

#: Slack for comparisons of two valid bounds of the same quantity computed on
#: different grids or in a different order: the query's own float error bound is
#: already inside each bracket, so only the rounding of the final comparison is left.
_ULPS = 1e-12


def _mechanisms():
    """Strategies of one-round PLDs with small random parameters (cheap to build)."""
    rates = st.floats(0.005, 0.3)
    eps0 = st.floats(0.1, 3.0)
    return {
        "subsample(clones)": st.builds(
            lambda n, e, r: pld.subsample(pld.clones(n, e), r), st.integers(2, 300), eps0, rates
        ),
        "poisson_subsample(gaussian)": st.builds(
            lambda s, r: pld.poisson_subsample(pld.gaussian(s), r), st.floats(0.5, 5.0), rates
        ),
        "poisson_subsample(laplace)": st.builds(
            lambda b, r: pld.poisson_subsample(pld.laplace(b), r), st.floats(0.3, 5.0), rates
        ),
        "checkin": st.builds(
            lambda n, p, e, a: pld.checkin(n, p, e, adjacency=a),
            st.integers(1, 100),
            st.floats(0.05, 1.0),
            eps0,
            st.sampled_from(["replace", "add-remove"]),
        ),
        "shuffle(krr)": st.builds(
            lambda k, g, n: pld.shuffle(pld.randomizers.krr(k=k, gamma=g), n),
            st.integers(2, 6),
            st.floats(0.1, 0.9),
            st.integers(2, 300),
        ),
        "krr": st.builds(
            lambda n, k, g, a: pld.krr(n, k, g, a),
            st.integers(2, 300),
            st.integers(2, 6),
            st.floats(0.1, 0.9),
            st.sampled_from(["strong", "weak"]),
        ),
        "clones": st.builds(pld.clones, st.integers(2, 2000), eps0),
        "gaussian": st.builds(pld.gaussian, st.floats(0.3, 10.0)),
        "laplace": st.builds(pld.laplace, st.floats(0.3, 10.0)),
        # eps0 on a lattice of 1/8: with unrelated eps0 two pairs share no grid, and the
        # lower bound of their isolated atoms refines at first order only (slow)
        "randomized_response": st.builds(
            pld.randomized_response, st.integers(1, 24).map(lambda k: k / 8)
        ),
    }


MECHANISMS = _mechanisms()

_SETTINGS = {
    "deadline": None,
    "database": None,
    "derandomize": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}


def _check_bracket(loss: pld.PLD, rel_accuracy: float) -> None:
    lower, upper = loss.delta_bounds(EPS, rel_accuracy=rel_accuracy)
    assert np.all(lower >= 0) and np.all(lower <= upper) and np.all(upper <= 1)
    assert np.all(np.diff(upper) <= 0) and np.all(np.diff(lower) <= 0)
    for delta in DELTAS:
        eps_lower, eps_upper = loss.epsilon_bounds(delta, rel_accuracy=rel_accuracy)
        assert 0 <= eps_lower <= eps_upper
        if math.isfinite(eps_upper):
            at_lower, at_upper = loss.delta_bounds(eps_upper, rel_accuracy=rel_accuracy)
            assert at_lower <= at_upper <= delta


def _invariants(data: st.DataObject, names: list[str], rel_accuracy: float, floor: float) -> None:
    """The invariants on a random pair of mechanisms; refinement is asked of the
    deltas (and eps at the deltas) that are at least ``floor``."""
    first = data.draw(st.sampled_from(names), label="first")
    second = data.draw(st.sampled_from(names), label="second")
    with warnings.catch_warnings():
        # wide brackets (AccuracyWarning) and coarse-grid notes are allowed here
        warnings.simplefilter("ignore", UserWarning)
        a = data.draw(MECHANISMS[first], label=first)
        b = data.draw(MECHANISMS[second], label=second)
        rounds = data.draw(st.integers(1, 30), label="rounds")

        # one round, then a composition
        _check_bracket(a, 1.0)
        composed = pld.compose(a, b, rounds=rounds)
        _check_bracket(composed, 1.0)

        # order independence: both brackets bound the same delta
        ab = composed.delta_bounds(EPS, rel_accuracy=1.0)
        ba = pld.compose(b, a, rounds=rounds).delta_bounds(EPS, rel_accuracy=1.0)
        assert np.all(ab[0] <= ba[1] * (1 + _ULPS))
        assert np.all(ba[0] <= ab[1] * (1 + _ULPS))

        # refinement keeps the bracket valid and never raises the upper bound
        # (fresh PLDs: no cached refinement)
        eps = EPS[ab[1] >= floor]
        if eps.size:
            fresh = pld.compose(a, b, rounds=rounds)
            coarse = fresh.delta_bounds(eps, rel_accuracy=1.0)
            fine = fresh.delta_bounds(eps, rel_accuracy=rel_accuracy)
            assert np.all(fine[1] <= coarse[1])
            assert np.all((fine[0] >= 0) & (fine[0] <= fine[1]))
        for delta in (d for d in DELTAS if d >= floor):
            again = pld.compose(a, b, rounds=rounds)
            eps_coarse = again.epsilon_bounds(delta, rel_accuracy=1.0)
            eps_lower, eps_upper = again.epsilon_bounds(delta, rel_accuracy=rel_accuracy)
            assert 0 <= eps_lower <= eps_upper <= eps_coarse[1]
            if math.isfinite(eps_upper):
                assert again.delta_bounds(eps_upper, rel_accuracy=rel_accuracy)[1] <= delta


@pytest.mark.parametrize("name", sorted(MECHANISMS))
@settings(max_examples=2, **_SETTINGS)
@given(data=st.data())
def test_invariants_hold_for_every_mechanism(name, data):
    _invariants(data, [name], 1e-2, 1e-6)


@pytest.mark.slow
@settings(max_examples=30, **{**_SETTINGS, "derandomize": False})
@given(data=st.data())
def test_invariants_hold_for_mixed_compositions(data):
    _invariants(data, sorted(MECHANISMS), 1e-3, 1e-15)
