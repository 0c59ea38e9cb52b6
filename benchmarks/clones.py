"""Benchmark of pld.clones: build time, lattice points, memory, composed delta.

Run ``python benchmarks/clones.py`` (``--quick`` stops at n = 1e6). Each (n, ε0)
is measured in a fresh process (peak memory is a process high-water mark):

* build time of one round, median of 3 after a warm-up build (numba cache warm);
* lattice points kept by the "quantile" (default) and "hoeffding" truncations,
  merged atoms handed to the engine, and the exactly computed truncated mass;
* peak resident memory added by the build, above the process after warm-up;
* ε at δ = 1e-6 for one round, as the PLD's (lower, upper) bracket next to the
  grid-free bracket of :func:`pld.shuffling.clones.clones_epsilon_bounds`
  (the method of Feldman, McMillan and Talwar (2021), computing the same pair's hockey stick
  directly: it must lie inside the PLD bracket);
* composition time and δ(ε) bracket for T = 10, 100, 1000 rounds.

The rows measure pld.clones' default, the standard pair of Feldman, McMillan and Talwar
(2021) (C ~ Bin(n-1, e^-ε0)). Finally that pair at n = 1e5, ε0 = 4 is evaluated against
the bracket [0.1675, 0.1728] for δ = 1e-6 published with their code, and next to it the
stronger pair (``variant="stronger"``).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import resource
import statistics
import time

USERS = (10**3, 10**4, 10**5, 10**6, 10**7)
LOCAL_EPSILONS = (1.0, 4.0)
ROUNDS = (10, 100, 1000)
TARGET_DELTA = 1e-6


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _measure(n: int, eps0: float) -> dict:
    """Everything about one (n, ε0), in the calling (fresh) process."""
    import pld
    from pld.shuffling.clones import clones, clones_cells, clones_epsilon_bounds

    clones(10**4, eps0)  # warm-up: numba cache load, scipy, FFT wrapper
    baseline = _peak_rss_mb()
    times = []
    for _ in range(3):
        start = time.perf_counter()
        one_round = clones(n, eps0)
        times.append(time.perf_counter() - start)
    peak = _peak_rss_mb() - baseline
    quantile = clones_cells(n, eps0, truncation="quantile")
    hoeffding = clones_cells(n, eps0, truncation="hoeffding")
    start = time.perf_counter()
    grid_free = clones_epsilon_bounds(n, eps0, TARGET_DELTA)
    grid_free_time = time.perf_counter() - start
    fine = clones(n, eps0, loss_grid_step=1e-5).epsilon_bounds(TARGET_DELTA)
    composed = []
    for rounds in ROUNDS:
        start = time.perf_counter()
        many = one_round.self_compose(rounds)
        elapsed = time.perf_counter() - start
        eps = 0.5 * math.sqrt(rounds) * (grid_free[1] + 1e-3)
        composed.append((rounds, elapsed, eps, many.delta_bounds(eps), many.epsilon_bounds(1e-6)))
    return {
        "build": statistics.median(times),
        "points_quantile": quantile.lattice_points,
        "points_hoeffding": hoeffding.lattice_points,
        "cells": quantile.cells.size,
        "truncated_quantile": quantile.truncated_mass,
        "truncated_hoeffding": hoeffding.truncated_mass,
        "peak_mb": peak,
        "eps_pld": one_round.epsilon_bounds(TARGET_DELTA),
        "eps_pld_fine": fine,
        "eps_grid_free": grid_free,
        "grid_free_time": grid_free_time,
        "composed": composed,
        "step": pld.engine.DEFAULT_LOSS_GRID_STEP,
    }


def _fmt21() -> tuple[tuple[float, float], tuple[float, float]]:
    from pld.shuffling.clones import clones_epsilon_bounds

    n, eps0 = 10**5, 4.0
    return (
        clones_epsilon_bounds(n, eps0, TARGET_DELTA, variant="standard"),
        clones_epsilon_bounds(n, eps0, TARGET_DELTA, variant="stronger"),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="stop at n = 1e6")
    arguments = parser.parse_args()
    users = [n for n in USERS if not arguments.quick or n <= 10**6]
    context = multiprocessing.get_context("spawn")
    print("pld.clones benchmark (one process per row; times are medians of 3)\n")
    header = (
        f"{'eps0':>4} {'n':>9} {'build s':>8} {'peak MB':>8} {'points(q)':>10} "
        f"{'points(H)':>10} {'H/q':>5} {'cells':>6} {'trunc(q)':>9} {'trunc(H)':>9}"
    )
    print(header)
    results = {}
    for eps0 in LOCAL_EPSILONS:
        for n in users:
            with context.Pool(1) as pool:
                row = pool.apply(_measure, (n, eps0))
            results[(eps0, n)] = row
            print(
                f"{eps0:4g} {n:9.0e} {row['build']:8.3f} {row['peak_mb']:8.1f} "
                f"{row['points_quantile']:10.3e} {row['points_hoeffding']:10.3e} "
                f"{row['points_hoeffding'] / row['points_quantile']:5.2f} {row['cells']:6d} "
                f"{row['truncated_quantile']:9.2e} {row['truncated_hoeffding']:9.2e}",
                flush=True,
            )
    print(f"\none-round eps at delta = {TARGET_DELTA:g}: PLD bracket (default grid and h = 1e-5)")
    print("next to the grid-free bracket (Feldman et al. 2021's method on the same pair)\n")
    for (eps0, n), row in results.items():
        low, high = row["eps_pld"]
        fine_low, fine_high = row["eps_pld_fine"]
        exact_low, exact_high = row["eps_grid_free"]
        inside = fine_low <= exact_high and exact_low <= fine_high
        print(
            f"eps0={eps0:g} n={n:.0e}: PLD [{low:.6f}, {high:.6f}]  h=1e-5 [{fine_low:.6f}, "
            f"{fine_high:.6f}]  grid-free [{exact_low:.8f}, {exact_high:.8f}] "
            f"({row['grid_free_time']:.2f} s)  consistent={inside}"
        )
    print("\ncompositions (default grid): time of self_compose, delta bracket, eps(1e-6) bracket\n")
    for (eps0, n), row in results.items():
        for rounds, elapsed, eps, (low, high), (eps_low, eps_high) in row["composed"]:
            print(
                f"eps0={eps0:g} n={n:.0e} T={rounds:5d}: {elapsed:6.3f} s  "
                f"delta({eps:.4f}) in [{low:.4e}, {high:.4e}]  "
                f"eps in [{eps_low:.5f}, {eps_high:.5f}]"
            )
    fmt21, ours = _fmt21()
    print(
        f"\nFMT21 (standard, pld.clones' default) pair, n=1e5, eps0=4, delta=1e-6: "
        f"eps in [{fmt21[0]:.6f}, {fmt21[1]:.6f}] "
        "(published with their code: [0.1675, 0.1728]);"
        f" the stronger pair: [{ours[0]:.6f}, {ours[1]:.6f}]"
    )


if __name__ == "__main__":
    main()
