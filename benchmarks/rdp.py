"""Benchmark of the Rényi-DP path: prints medians; not a test.

Run with ``python benchmarks/rdp.py`` from the repository root.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np

from pld.rdp import (
    shuffle_gaussian,
    shuffled_checkin_gaussian,
    shuffled_checkin_gaussian_conjectured,
    to_epsilon,
)
from pld.rdp.partitions import _partition_table, shuffle_gaussian_by_partitions


def median_seconds(function: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    n, sigma = 60000, 9.48
    start = time.perf_counter()
    shuffle_gaussian(5, 1.0, [2, 3])
    print(f"first call (numba load/compile): {time.perf_counter() - start:.3f} s")

    print("\nshuffle Gaussian, n = 60000, sigma = 9.48 (polynomial powering)")
    for max_order, repeats in ((30, 21), (256, 21), (1024, 7)):
        orders = np.arange(2, max_order + 1)
        seconds = median_seconds(lambda o=orders: shuffle_gaussian(n, sigma, o), repeats)
        eps = to_epsilon(shuffle_gaussian(n, sigma, orders), orders, 1 / n)[0]
        print(f"  orders 2..{max_order:<5d} {1e3 * seconds:9.2f} ms   1 round: eps = {eps:.5f}")

    print(
        "\npartition algorithm (Liew and Takahashi 2022, Algorithm 1, corrected), one order, "
        "no cache"
    )
    for order in (20, 25, 30):

        def uncached(o: int = order) -> float:
            _partition_table.cache_clear()
            return shuffle_gaussian_by_partitions(n, sigma, o)

        print(f"  lam = {order}: {1e3 * median_seconds(uncached, 7):9.2f} ms")

    print("\nshuffled check-in Gaussian, n = 60000, gamma = 0.1, sigma = 5, 5540 rounds")
    for max_order in (32, 64, 128):
        orders = np.arange(2, max_order + 1)
        for name, function in (
            ("eq. 5 (bulk + tails)", shuffled_checkin_gaussian),
            ("eq. 18 (Liew and Takahashi 2022)", shuffled_checkin_gaussian_conjectured),
        ):
            seconds = median_seconds(lambda f=function, o=orders: f(n, 0.1, 5.0, o), 3)
            per_round = function(n, 0.1, 5.0, orders)
            eps, order = to_epsilon(5540 * per_round, orders, 1 / n)
            print(
                f"  orders 2..{max_order:<4d} {name:<22s} {seconds:7.3f} s   "
                f"eps(1/n) = {eps:.5f} at lam = {order:.0f}"
            )


if __name__ == "__main__":
    main()
