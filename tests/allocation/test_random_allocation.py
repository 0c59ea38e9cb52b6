"""pld.random_allocation against independent truths (tests/oracles/random_allocation.py).

Tolerances: the bracket must contain the exact value up to float round-off of
the oracles (1e-12 absolute: exact fractions for enumeration; nested quadrature
with absolute tolerance 1e-13 per level for the Gaussian); "equals" checks
allow the engine's bracket widths (0.5 % as the issue asks).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import pld
from pld.allocation import random_allocation
from tests.oracles import random_allocation as oracle

ORACLE_SLACK = 1e-12


def _contains(bracket, exact, slack=ORACLE_SLACK):
    lower, upper = (float(v) for v in bracket)
    assert lower - slack <= exact <= upper + slack, (lower, exact, upper)


def test_one_round_is_the_mechanism():
    gaussian = pld.gaussian(1.0)
    alone = random_allocation(gaussian, rounds=1)
    for delta in (1e-5, 1e-8):
        assert alone.epsilon_bounds(delta) == gaussian.epsilon_bounds(delta)


def test_every_round_is_plain_composition():
    gaussian = pld.gaussian(2.0)
    every = random_allocation(gaussian, rounds=5, participations=5)
    composed = gaussian.self_compose(5)
    for delta in (1e-5, 1e-8):
        ours = every.epsilon_bounds(delta)[1]
        plain = composed.epsilon_bounds(delta)[1]
        assert abs(ours - plain) <= 5e-3 * plain


@pytest.mark.parametrize("rounds", [2, 3])
def test_gaussian_contains_exact_mixture(rounds):
    sigma = 1.0
    allocated = random_allocation(pld.gaussian(sigma), rounds=rounds)
    for eps in (0.3, 1.5, 3.5):
        exact = max(oracle.gaussian_delta(sigma, rounds, eps))
        _contains(allocated.delta_bounds(eps), exact)


@pytest.mark.slow
def test_gaussian_four_rounds_contains_exact_mixture():
    allocated = random_allocation(pld.gaussian(0.8), rounds=4)
    for eps in (0.5, 2.5):
        _contains(allocated.delta_bounds(eps), max(oracle.gaussian_delta(0.8, 4, eps)))


@pytest.mark.parametrize(("rounds", "participations"), [(2, 1), (3, 1), (4, 1), (4, 2), (5, 2)])
def test_randomized_response_against_enumeration(rounds, participations):
    p, q = oracle.randomized_response_pair(3, 4)
    mechanism = pld.randomized_response(math.log(3))
    allocated = random_allocation(mechanism, rounds=rounds, participations=participations)
    for eps in (0.05, 0.4, 1.0):
        bracket = allocated.delta_bounds(eps)
        exact = max(oracle.enumerated_delta(p, q, rounds, participations, eps))
        # The concrete k-subset pair lies below the upper bound ...
        assert exact <= bracket[1] + ORACLE_SLACK
        # ... and the bracket holds the floor/ceil product that is accounted.
        _contains(bracket, max(oracle.blocks_delta(p, q, rounds, participations, eps)))
        if participations == 1:
            _contains(bracket, exact)


def test_adaptive_protocol_below_upper_bound():
    allocated = random_allocation(pld.randomized_response(math.log(3)), rounds=2)
    for eps in (0.0, 0.3, 0.9):
        exact = max(oracle.adaptive_protocol_delta(Fraction(3, 4), eps))
        assert exact <= allocated.delta_bounds(eps)[1] + ORACLE_SLACK


def test_monotone_in_rounds_and_below_full_participation():
    gaussian = pld.gaussian(1.0)
    for participations in (1, 2):
        previous = math.inf
        for rounds in (2, 4, 8, 16):
            upper = random_allocation(
                gaussian, rounds=rounds, participations=participations, loss_grid_step=2e-3
            ).epsilon_bounds(1e-6, rel_accuracy=1.0)[1]
            assert upper <= previous
            previous = upper
        assert previous <= gaussian.self_compose(participations).epsilon_bounds(1e-6)[1]


def test_laplace_and_discrete_mechanisms_are_accepted():
    for mechanism in (pld.laplace(1.0), pld.discrete_laplace(1.0)):
        allocated = random_allocation(mechanism, rounds=20, participations=2)
        lower, upper = allocated.epsilon_bounds(1e-6)
        assert 0 < lower <= upper < mechanism.self_compose(2).epsilon_bounds(1e-6)[1]


def test_bracket_is_ordered_and_monotone():
    allocated = random_allocation(pld.gaussian(0.8), rounds=50, participations=2)
    eps = np.linspace(-1.0, 4.0, 21)
    lower, upper = allocated.delta_bounds(eps)
    assert np.all((0 <= lower) & (lower <= upper) & (upper <= 1))
    assert np.all(np.diff(upper) <= 0)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"rounds": 0}, "rounds"),
        ({"rounds": 2.5}, "rounds"),
        ({"rounds": True}, "rounds"),
        ({"rounds": 3, "participations": 4}, "participations"),
        ({"rounds": 3, "participations": 0}, "participations"),
        ({"rounds": 3, "adjacency": "replace"}, "adjacency"),
        ({"rounds": 3, "adjacency": "bogus"}, "adjacency"),
        ({"rounds": 3, "tail_mass": 0.0}, "tail_mass"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        random_allocation(pld.gaussian(1.0), **kwargs)


def test_mechanism_must_be_one_round():
    with pytest.raises(ValueError, match="mechanism"):
        random_allocation(pld.gaussian(1.0).self_compose(2), rounds=3)
    with pytest.raises(ValueError, match="mechanism"):
        random_allocation(1.0, rounds=3)


def test_huge_rounds_refused_up_front():
    with pytest.raises(pld.BudgetError, match="rounds=1000000000"):
        random_allocation(pld.gaussian(1.0), rounds=10**9)


def test_refinement_narrows_the_bracket():
    allocated = random_allocation(pld.gaussian(1.0), rounds=200, loss_grid_step=4e-3)
    coarse = allocated.epsilon_bounds(1e-6, rel_accuracy=1.0)
    fine = allocated.epsilon_bounds(1e-6, rel_accuracy=1e-3)
    assert coarse[0] <= fine[0] <= fine[1] <= coarse[1]
    assert (fine[1] - fine[0]) <= 1e-3 * fine[1]
