"""Girgis et al.'s subsampled-shuffle RDP bound (Liew et al. 2022, suppl. Lemma 6, eq. 17)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pld.rdp import girgis_subsampled_shuffle


def direct(n: int, k: int, eps0: float, order: int) -> float:
    """eq. 17 term by term in floating point (moderate parameters only)."""
    gamma = k / n
    e = math.exp(eps0)
    kbar = math.floor((k - 1) / (2 * e)) + 1
    total = 1 + 4 * math.comb(order, 2) * gamma**2 * (e - 1) ** 2 / (kbar * e)
    for j in range(3, order + 1):
        scale = 2 * (e * e - 1) ** 2 / (kbar * e * e)
        total += math.comb(order, j) * gamma**j * j * math.gamma(j / 2) * scale ** (j / 2)
    x = (e * e - 1) / e
    upsilon = ((1 + gamma * x) ** order - 1 - order * gamma * x) * math.exp(-(k - 1) / (8 * e))
    return math.log(total + upsilon) / (order - 1)


@pytest.mark.parametrize(
    ("n", "k", "eps0"), [(10000, 100, 1.0), (10000, 100, 3.0), (1000, 1000, 0.5), (50, 3, 2.0)]
)
def test_matches_direct_formula(n: int, k: int, eps0: float) -> None:
    orders = np.arange(2, 31)
    ours = girgis_subsampled_shuffle(n, k, eps0, orders)
    expected = np.array([direct(n, k, eps0, int(o)) for o in orders])
    np.testing.assert_allclose(ours, expected, rtol=1e-11)


def test_lemma7_monotone_in_k_at_fixed_rate() -> None:
    # Liew et al. (2022), Lemma 7: at a fixed rate the bound decreases with the number shuffled
    orders = np.arange(2, 65)
    values = [girgis_subsampled_shuffle(100 * k, k, 2.0, orders) for k in (10, 100, 1000, 10000)]
    assert all(np.all(b < a) for a, b in zip(values, values[1:], strict=False))


def test_zero_eps0_and_bad_input() -> None:
    np.testing.assert_array_equal(girgis_subsampled_shuffle(10, 5, 0.0, [2, 3]), [0.0, 0.0])
    with pytest.raises(ValueError, match=r"k must be an integer in \[1, n\]"):
        girgis_subsampled_shuffle(10, 11, 1.0, [2])
    with pytest.raises(ValueError, match="eps0 must be >= 0"):
        girgis_subsampled_shuffle(10, 5, -1.0, [2])
