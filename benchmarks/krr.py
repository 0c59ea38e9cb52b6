"""Figures for shuffled k-RR (pld.krr): Koskela et al. (2023), Fig. 4, build times to n = 10^6.

Run from the repository root: ``python benchmarks/krr.py`` (``--quick`` skips n = 10^6).

1. Koskela et al. (2023), Fig. 4: n = 1000, gamma = 0.25, k = 4, eps at delta = 1e-6 after T
   rounds for the strong adversary, the weak adversary and the clones bound of Feldman, McMillan
   and Talwar (2023) at eps0 = log(((1 - gamma) k + gamma) / gamma) = log 13, each as (lower,
   upper); and the paper's tail form P(sum Z_i >= eps) at the tight strong eps, to show its
   looseness.
2. Build time of one round (median of 3 after a warm-up that compiles the numba kernels),
   the number of components (observed counts) and whether they were blocked, and
   eps(1e-6) of one round and of 100 rounds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pld  # noqa: E402
from pld.shuffling.krr import components as _krr_components  # noqa: E402
from pld.shuffling.krr import mechanism as krr_module  # noqa: E402

N_FIGURE, K_FIGURE, GAMMA_FIGURE = 1000, 4, 0.25
ROUNDS = (1, 2, 5, 10, 20, 50, 100)
DELTA = 1e-6
TAIL_MASS, MAX_ATOMS = krr_module.KRR_TAIL_MASS, krr_module.KRR_MAX_ATOMS


def _eps(one_round: pld.PLD, rounds: int) -> tuple[float, float]:
    composed = one_round.self_compose(rounds) if rounds > 1 else one_round
    return composed.epsilon_bounds(DELTA)


def figure_4() -> None:
    eps0 = krr_module.ldp_epsilon(K_FIGURE, GAMMA_FIGURE)
    plds = {
        "strong": pld.krr(N_FIGURE, K_FIGURE, GAMMA_FIGURE, "strong"),
        "weak": pld.krr(N_FIGURE, K_FIGURE, GAMMA_FIGURE, "weak"),
        "clones": pld.clones(N_FIGURE, eps0),
    }
    print(
        f"Koskela et al. 2023, Fig. 4: n={N_FIGURE}, k={K_FIGURE}, gamma={GAMMA_FIGURE}, "
        f"eps0={eps0:.4f}"
    )
    print(f"eps at delta={DELTA:g} (lower, upper); grid step {pld.engine.DEFAULT_LOSS_GRID_STEP:g}")
    header = f"{'T':>4} | {'strong':>17} | {'weak':>17} | {'clones':>17} | tail form at strong eps"
    print(header)
    print("-" * len(header))
    for rounds in ROUNDS:
        cells = {name: _eps(one_round, rounds) for name, one_round in plds.items()}
        tail = krr_module.krr_tail_delta(
            N_FIGURE, K_FIGURE, GAMMA_FIGURE, "strong", cells["strong"][1], rounds
        )[0]
        row = " | ".join(f"({low:.4f}, {high:.4f})" for low, high in cells.values())
        print(f"{rounds:>4} | {row} | {tail:.2e}")
    print()


def _median_build(n: int, adversary: str) -> tuple[float, pld.PLD]:
    times = []
    for _ in range(3):
        start = time.perf_counter()
        one_round = pld.krr(n, K_FIGURE, GAMMA_FIGURE, adversary)
        times.append(time.perf_counter() - start)
    return statistics.median(times), one_round


def build_times(sizes: tuple[int, ...]) -> None:
    start = time.perf_counter()
    pld.krr(50, K_FIGURE, GAMMA_FIGURE, "weak", max_atoms=100)
    pld.krr(50, K_FIGURE, GAMMA_FIGURE, "strong")
    print(
        f"warm-up (numba kernels, cached on disk after the first run): "
        f"{time.perf_counter() - start:.2f} s"
    )
    print(
        f"k={K_FIGURE}, gamma={GAMMA_FIGURE}, default tail_mass={krr_module.KRR_TAIL_MASS:g}, "
        f"max_atoms={krr_module.KRR_MAX_ATOMS:g}"
    )
    header = (
        f"{'adversary':>9} {'n':>9} {'build s':>8} {'step':>8} {'components':>10} {'blocked':>7} "
        f"{'eps(1e-6), T=1':>20} {'eps(1e-6), T=100':>20} {'compose s':>9}"
    )
    print(header)
    print("-" * len(header))
    for adversary in ("strong", "weak"):
        for n in sizes:
            seconds, one_round = _median_build(n, adversary)
            upper, lower = _krr_components._components(
                n, K_FIGURE, GAMMA_FIGURE, adversary, TAIL_MASS, MAX_ATOMS
            )
            single = one_round.epsilon_bounds(DELTA)
            start = time.perf_counter()
            hundred = _eps(one_round, 100)
            compose_seconds = time.perf_counter() - start
            print(
                f"{adversary:>9} {n:>9} {seconds:>8.2f} {one_round.loss_grid_step:>8.2g} "
                f"{upper.size.size:>10} "
                f"{str(lower is not None):>7} ({single[0]:.5f}, {single[1]:.5f}) "
                f"({hundred[0]:.4f}, {hundred[1]:.4f}) {compose_seconds:>9.2f}"
            )
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="stop at n = 10^5")
    arguments = parser.parse_args()
    figure_4()
    sizes = (10**3, 10**4, 10**5) if arguments.quick else (10**3, 10**4, 10**5, 10**6)
    build_times(sizes)


if __name__ == "__main__":
    main()
