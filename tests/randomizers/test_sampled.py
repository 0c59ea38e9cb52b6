"""The sampling-based randomizer against its written-out matrix and brute force.

Measured: with records replaced (``differing = d``) the shuffled bound equals the base
k-RR's exactly (the worst pair differs in every attribute, and the attribute index
carries nothing); with one differing attribute, at n = 10^5, k = 4, eps0 = 2, eps(1e-6)
is 0.0140 for d = 4 and 0.0066 for d = 16 against 0.0296 for k-RR itself.
"""

from __future__ import annotations

import numpy as np
import pytest

import pld
from tests.oracles import shuffle_population as oracle

EPS = (0.0, 0.5)


def _records_differing(k: int, d: int, most: int):
    records = list(np.ndindex(*([k] * d)))

    def allowed(x: int, y: int) -> bool:
        return sum(a != b for a, b in zip(records[x], records[y], strict=True)) <= most

    return allowed


@pytest.mark.parametrize(("k", "d", "n", "differing"), [(2, 2, 3, 2), (2, 2, 3, 1), (3, 2, 2, 1)])
def test_shuffled_sampling_against_brute_force(k, d, n, differing):
    base = pld.randomizers.krr(k, eps0=1.0)
    randomizer = pld.randomizers.sampled(base, d, differing=differing)
    bound = pld.shuffle(randomizer, n)
    probs = oracle.exact_matrix(randomizer.matrix)
    allowed = _records_differing(k, d, differing)
    for eps in EPS:
        truth = float(oracle.worst_delta([(probs, n)], eps, allowed=allowed)[0])
        upper = float(bound.delta_bounds([eps])[1][0])
        assert truth <= upper * (1 + 1e-9)
        # Measured truth/bound: 1 - 1e-10 for differing = d; 0.73 to 0.98 for one
        # differing attribute (the blanket bound is not exact there).
        assert truth >= 0.7 * upper


def test_classes_match_the_matrix_and_replaced_records_equal_the_base():
    base = pld.randomizers.krr(3, eps0=1.5)
    randomizer = pld.randomizers.sampled(base, 2)
    written = pld.randomizers.matrix(randomizer.matrix)
    eps = np.array([0.0, 0.4, 1.0])
    np.testing.assert_allclose(
        pld.shuffle(randomizer, 6, analysis="blanket").delta_bounds(eps)[1],
        pld.shuffle(written, 6, analysis="blanket").delta_bounds(eps)[1],
        rtol=1e-9,
    )
    np.testing.assert_allclose(
        pld.shuffle(randomizer, 6, analysis="blanket").delta_bounds(eps)[1],
        pld.shuffle(base, 6, analysis="blanket").delta_bounds(eps)[1],
        rtol=1e-9,
    )


def test_one_differing_attribute_amplifies_more():
    base = pld.randomizers.krr(4, eps0=2.0)
    full = pld.shuffle(base, 1000).epsilon_bounds(1e-6)[1]
    one = pld.shuffle(pld.randomizers.sampled(base, 8, differing=1), 1000).epsilon_bounds(1e-6)
    assert one[1] < 0.6 * full


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: pld.randomizers.sampled(3, 2), "finite randomizer"),
        (lambda: pld.randomizers.sampled(pld.randomizers.krr(3, eps0=1.0), 0), "attributes"),
        (
            lambda: pld.randomizers.sampled(pld.randomizers.krr(3, eps0=1.0), 2, differing=3),
            "differing",
        ),
        (
            lambda: pld.randomizers.sampled(
                pld.randomizers.matrix([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]]), 2
            ),
            "positive probability",
        ),
        (
            lambda: pld.randomizers.sampled(
                pld.randomizers.matrix([[0.6, 0.3, 0.1], [0.2, 0.3, 0.5], [0.3, 0.4, 0.3]]), 2
            ),
            "alike|one class structure",
        ),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
