"""pld.checkin(schedule="random"): shuffled random check-ins against brute force.

The oracle (tests/oracles/random_checkin.py) enumerates the protocol exactly in
fractions; the upper bound must lie above it (slack 1e-12 for float round-off).
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

import pld
from tests.oracles import random_checkin as oracle

KEEP = Fraction(3, 4)
EPS0 = math.log(3)


@pytest.mark.parametrize(("n", "window", "k"), [(2, 2, 1), (3, 3, 1), (2, 3, 2), (3, 2, 2)])
def test_upper_bound_above_the_protocol(n, window, k):
    rr = pld.randomizers.krr(k=2, eps0=EPS0)
    for kwargs in ({"eps0": EPS0}, {"randomizer": rr}):
        bound = pld.checkin(n, schedule="random", window=window, participations=k, **kwargs)
        for eps in (0.0, 0.2, 0.6):
            exact = oracle.delta(n, window, k, KEEP, eps)
            assert exact <= bound.delta_bounds(eps)[1] + 1e-12


def test_one_check_in_is_one_shuffle_whatever_the_window():
    one = pld.clones(5000, 1.0).epsilon_bounds(1e-6)
    for window in (1, 10, 1000):
        assert (
            pld.checkin(5000, eps0=1.0, schedule="random", window=window).epsilon_bounds(1e-6)
            == one
        )


def test_window_of_one_user_equals_its_randomizer():
    # n = 1, k = 1: the window reveals one report; the upper side is eps0 itself.
    bound = pld.checkin(1, eps0=1.0, schedule="random", window=4)
    assert bound.delta_bounds(1.0 - 1e-9)[1] > 0
    assert bound.delta_bounds(1.0 + 1e-3)[1] <= 1e-12


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"p": 0.1, "window": 3}, "p"),
        ({}, "window"),
        ({"window": 3, "participations": 4}, "participations"),
        ({"window": 3, "adjacency": "add-remove"}, "adjacency"),
        ({"window": 3, "eps0": 30.0, "participations": 2}, "eps0"),
        ({"window": 0}, "window"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, name):
    arguments = {"eps0": 1.0, **kwargs}
    with pytest.raises(ValueError, match=name):
        pld.checkin(100, schedule="random", **arguments)


def test_poisson_needs_p_and_refuses_window():
    with pytest.raises(ValueError, match="p "):
        pld.checkin(100, eps0=1.0)
    with pytest.raises(ValueError, match="window"):
        pld.checkin(100, 0.1, 1.0, window=3)
