"""The engine's BLAS-free dot product and row-blocked matrix product."""

from __future__ import annotations

import math

import numpy as np

from pld.engine import linalg

U = math.ulp(1.0) / 2


def test_dot_within_the_summation_bound():
    """Against the exactly rounded sum, within n u of the sum of |terms|."""
    rng = np.random.default_rng(3)
    for size in (1, 7, 10_001, 200_000):
        left, right = rng.standard_normal(size), rng.random(size)
        exact = math.fsum((left * right).tolist())  # products exact to u each
        slack = (size + 2) * U * float(np.sum(np.abs(left * right)))
        assert abs(linalg.dot(left, right) - exact) <= slack


def test_products_in_row_blocks_match_one_product():
    """Row blocks (here 11 of them) give the product within the bound of any order,
    and exactly so on integer matrices whose sums stay below 2^53."""
    rng = np.random.default_rng(4)
    left, right = rng.standard_normal((300, 512)), rng.standard_normal((512, 48))
    assert 300 * 512 * 48 > 10 * linalg.PRODUCT_TERMS
    blocked, whole = linalg.products(left, right), left @ right
    bound = (512 + 2) * U * (np.abs(left) @ np.abs(right))
    assert np.all(np.abs(blocked - whole) <= 2 * bound)
    integers = rng.integers(-(2**20), 2**20, (300, 512)).astype(float)
    weights = rng.integers(-(2**20), 2**20, (512, 48)).astype(float)
    assert np.array_equal(linalg.products(integers, weights), integers @ weights)
