"""The engine's BLAS-free dot product and row-blocked matrix product."""

from __future__ import annotations

import math

import numpy as np
import pytest

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


def test_products_in_row_blocks_match_one_product(monkeypatch):
    """Without a thread-local BLAS setting, row blocks (here 11 of them) give the
    product within the bound of any order, and exactly so on integer matrices whose
    sums stay below 2^53."""
    monkeypatch.setattr(linalg, "_thread_local_setter", lambda: None)
    rng = np.random.default_rng(4)
    left, right = rng.standard_normal((300, 512)), rng.standard_normal((512, 48))
    assert 300 * 512 * 48 > 10 * linalg.PRODUCT_TERMS
    blocked, whole = linalg.products(left, right), left @ right
    bound = (512 + 2) * U * (np.abs(left) @ np.abs(right))
    assert np.all(np.abs(blocked - whole) <= 2 * bound)
    integers = rng.integers(-(2**20), 2**20, (300, 512)).astype(float)
    weights = rng.integers(-(2**20), 2**20, (512, 48)).astype(float)
    assert np.array_equal(linalg.products(integers, weights), integers @ weights)


def test_products_on_one_thread_restore_the_setting():
    """With numpy's bundled OpenBLAS, a product above the threading threshold runs as
    one call on this thread: integer sums exactly those of the row blocks, and the
    thread's previous BLAS setting is back afterwards."""
    setter = linalg._thread_local_setter()
    if setter is None:
        pytest.skip("numpy does not link its bundled OpenBLAS here")
    previous = setter(3)
    try:
        rng = np.random.default_rng(5)
        left = rng.integers(-(2**20), 2**20, (400, 768)).astype(float)
        right = rng.integers(-(2**20), 2**20, (768, 48)).astype(float)
        assert left.shape[0] * 768 * 48 > 20 * linalg.PRODUCT_TERMS
        rows = linalg.PRODUCT_TERMS // (768 * 48)
        blocked = np.concatenate(
            [left[i : i + rows] @ right for i in range(0, left.shape[0], rows)]
        )
        assert np.array_equal(linalg.products(left, right), blocked)
        assert setter(3) == 3
    finally:
        setter(previous)
