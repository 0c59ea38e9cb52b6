"""The shuffle Gaussian (Liew and Takahashi 2022, Thm 1): powering vs partitions vs brute force,
Table 1."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from pld.rdp import OrderRangeWarning, shuffle_gaussian, to_epsilon
from pld.rdp.partitions import integer_partitions, shuffle_gaussian_by_partitions
from pld.rdp.shuffle import consecutive_log_moment_tables, log_moment_table


def brute_force(n: int, sigma: float, order: int) -> float:
    """Eq. 1 summed over all n^lam sequences (k_i = how often index i is drawn)."""
    total = 0.0
    for draws in itertools.product(range(n), repeat=order):
        counts = np.bincount(draws, minlength=n)
        total += math.exp(float(np.sum(counts * (counts - 1))) / (2 * sigma * sigma))
    return math.log(total / n**order) / (order - 1)


def test_partition_enumeration_counts() -> None:
    # p(10) = 42, p(30) = 5604; at most 3 parts: p_3(10) = 14
    assert sum(1 for _ in integer_partitions(10, 10)) == 42
    assert sum(1 for _ in integer_partitions(30, 30)) == 5604
    assert sum(1 for _ in integer_partitions(10, 3)) == 14


@pytest.mark.parametrize("n", [1, 2, 3, 4])
@pytest.mark.parametrize("order", [2, 3, 5, 6])
def test_partition_oracle_matches_brute_force(n: int, order: int) -> None:
    # the oracle's multiplicity n!/((n-l)! prod kappa!) counts the zero parts; the
    # paper's n!/prod kappa! would be wrong whenever l < n (e.g. n = 3, order = 2).
    sigma = 1.3
    expected = brute_force(n, sigma, order)
    assert shuffle_gaussian_by_partitions(n, sigma, order) == pytest.approx(expected, rel=1e-12)
    assert shuffle_gaussian(n, sigma, [order])[0] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("n", [1, 2, 5, 100, 60000])
@pytest.mark.parametrize("sigma", [0.5, 2.0, 9.48])
def test_powering_matches_partitions(n: int, sigma: float) -> None:
    # two independent evaluations of eq. 1, both summing non-negative terms in log
    # space: agreement to 1e-10 relative (observed: 3e-14)
    orders = np.arange(2, 31)
    powered = shuffle_gaussian(n, sigma, orders)
    partitions = np.array([shuffle_gaussian_by_partitions(n, sigma, o) for o in orders])
    np.testing.assert_allclose(powered, partitions, rtol=1e-10, atol=0)


@pytest.mark.parametrize("sigma", [0.5, 2.0, 9.48])
def test_n1_is_the_gaussian_and_corollary_1(sigma: float) -> None:
    orders = np.arange(2, 257)
    gaussian = orders / (2 * sigma * sigma)
    np.testing.assert_allclose(shuffle_gaussian(1, sigma, orders), gaussian, rtol=1e-13)
    for n in (2, 7, 1000):
        values = shuffle_gaussian(n, sigma, orders)
        assert np.all(values < gaussian)  # Corollary 1, strict for n >= 2
        assert np.all(values > 0)


def test_monotone_in_n_conjecture_1() -> None:
    # Liew and Takahashi (2022), Conjecture 1 (proved by Jensen in pld.rdp.shuffle): the
    # moment is non-increasing in n. Every n in 1..600 and a doubling sweep.
    for sigma in (0.5, 2.0, 9.48):
        table = consecutive_log_moment_tables(1, 600, sigma, 64)
        assert np.all(np.diff(table[:, 2:], axis=0) <= 1e-15 * np.abs(table[1:, 2:]))
        doubling = np.array([log_moment_table(2**i, sigma, 64) for i in range(17)])
        assert np.all(np.diff(doubling[:, 2:], axis=0) < 0)


def test_liewtakahashi2022_table1_ours_row() -> None:
    # n = 60000, sigma = 9.48, lam <= 30, delta = 1/n; printed to 5 decimals
    n = 60000
    orders = np.arange(2, 31)
    per_round = shuffle_gaussian(n, 9.48, orders)
    printed = [0.22820, 0.22820, 0.22821, 0.22821, 0.22821, 0.22822, 0.22822]
    for rounds, expected in enumerate(printed, start=1):
        with pytest.warns(OrderRangeWarning, match="largest order supplied"):  # as the paper's
            eps, order = to_epsilon(rounds * per_round, orders, 1.0 / n)
        assert round(eps, 5) == expected
        assert order == 30.0


def test_table1_with_more_orders() -> None:
    # the optimum sits at the largest order allowed: values recorded in the report
    n = 60000
    for max_order, first, seventh in ((256, 0.01751, 0.01765), (1024, 0.00310, 0.00367)):
        orders = np.arange(2, max_order + 1)
        per_round = shuffle_gaussian(n, 9.48, orders)
        with pytest.warns(OrderRangeWarning, match="largest order supplied"):
            assert to_epsilon(per_round, orders, 1 / n)[0] == pytest.approx(first, abs=5e-6)
        with pytest.warns(OrderRangeWarning, match="largest order supplied"):
            assert to_epsilon(7 * per_round, orders, 1 / n)[0] == pytest.approx(seventh, abs=5e-6)


def brute_force_reverse_n2(sigma: float, order: int) -> float:
    """D_lam(G || Mix) for n = 2 by a direct 2-d trapezoid sum over (z1, z2)."""
    step = 0.02
    z = np.arange(-12.0, 12.0 + 1.0 / sigma, step)
    weight = np.exp(-z * z / 2) / math.sqrt(2 * math.pi) * step
    w = np.exp(z / sigma - 1 / (2 * sigma * sigma))
    ratio = (w[:, None] + w[None, :]) / 2
    moment = np.sum(weight[:, None] * weight[None, :] * ratio ** (-(order - 1.0)))
    return math.log(moment) / (order - 1)


def test_reverse_direction() -> None:
    orders = np.array([2, 3, 5, 10])
    for sigma in (0.5, 2.0):
        exact = orders / (2 * sigma * sigma)
        np.testing.assert_allclose(
            shuffle_gaussian(1, sigma, orders, direction="gaussian||mixture"), exact, rtol=1e-10
        )
    for sigma in (1.0, 2.0):
        reverse = shuffle_gaussian(2, sigma, orders, direction="gaussian||mixture")
        brute = np.array([brute_force_reverse_n2(sigma, o) for o in orders])
        # the 2-d trapezoid sum is accurate to ~1e-12 for these analytic integrands
        np.testing.assert_allclose(reverse, brute, rtol=1e-9)
    # for these pairs the paper's direction is the larger one
    reverse = shuffle_gaussian(100, 2.0, orders, direction="gaussian||mixture")
    forward = shuffle_gaussian(100, 2.0, orders)
    assert np.all(reverse < forward)
    np.testing.assert_array_equal(
        shuffle_gaussian(100, 2.0, orders, direction="max"), np.maximum(forward, reverse)
    )


def test_orders_in_any_order_and_repeated() -> None:
    values = shuffle_gaussian(50, 2.0, [7, 2, 7, 3])
    reference = shuffle_gaussian(50, 2.0, [2, 3, 7])
    np.testing.assert_array_equal(values, reference[[2, 0, 2, 1]])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 0, "sigma": 1.0, "orders": [2]}, "n must be an integer >= 1"),
        ({"n": 5, "sigma": 0.0, "orders": [2]}, "sigma must be > 0"),
        ({"n": 5, "sigma": 1.0, "orders": [1]}, "orders must be an integer >= 2"),
        ({"n": 5, "sigma": 1.0, "orders": [2.5]}, "orders must be an integer >= 2"),
        ({"n": 5, "sigma": 1.0, "orders": []}, "orders must contain at least one"),
        ({"n": 5, "sigma": 1.0, "orders": [2], "direction": "up"}, "direction must be one of"),
    ],
)
def test_bad_input(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        shuffle_gaussian(**kwargs)
