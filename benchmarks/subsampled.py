"""Subsampled shufflers: Koskela et al. (2023), Figures 2 and 3, with build and composition times.

Figure 2 (eps0 = 3, n = 10^4, gamma = 0.01, so the base is the clones pair of
m = 100 users): delta(eps) of the connect-the-dots pair of Lemma 7's h on
``np.linspace(-0.25, 0.25, n_alpha)`` for a growing n_alpha, next to
``H_{e^eps}(gamma P + (1 - gamma) Q || Q)``, after one round and after T rounds.

Figure 3: eps(delta) of T compositions of subsampled shufflers against the RDP
bound of Girgis et al. (2021, Thm 2; ``pld.rdp.girgis``) composed over T rounds
and converted with ``pld.rdp.to_epsilon``.

Run ``python benchmarks/subsampled.py`` (about a minute on 2 cores);
``--plot DIR`` also writes the two figures as PNG files into DIR.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import pld
from pld.rdp import girgis_subsampled_shuffle, to_epsilon
from pld.subsampling import subsample


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def mixture_delta(base: pld.PLD, rate: float, eps: np.ndarray) -> np.ndarray:
    """H_{e^eps}(gamma P + (1-gamma) Q || Q) = gamma H_beta(P || Q), beta = 1 + expm1(eps)/gamma."""
    beta = 1 + np.expm1(eps) / rate
    return np.where(beta > 0, rate * base.delta(np.log(np.maximum(beta, 1e-300))), -np.expm1(eps))


def figure_2(plot_dir: Path | None) -> None:
    eps0, n, rate, rounds = 3.0, 10**4, 0.01, 1000
    m = round(rate * n)
    print(f"\n=== Figure 2: eps0={eps0}, n={n}, gamma={rate} (clones base, m={m}) ===")
    base, seconds = timed(pld.clones, m, eps0)
    print(f"base pld.clones({m}, {eps0}): {seconds:.2f} s, {base}")
    fine_base = pld.clones(m, eps0, loss_grid_step=1e-4)
    eps = np.array([0.0, 0.01, 0.02, 0.05, 0.1, 0.15])
    composed_eps = np.array([0.5, 1.0, 1.5])
    print("H_{e^eps}(gP+(1-g)Q||Q):", " ".join(f"{v:.5e}" for v in mixture_delta(base, rate, eps)))
    print(f"{'grid':>22} {'build s':>8} {'atoms':>6} {'compose s':>9}  one round delta(eps={eps})")
    print(f"{'':>50}  T={rounds}: (lower, upper) delta(eps={composed_eps})")
    curves = {}
    settings = [
        (f"linspace n_alpha={k}", {"eps_grid": np.linspace(-0.25, 0.25, k)}, base)
        for k in (5, 11, 21, 51, 101, 201, 501)
    ]
    settings.append(("default (step 1e-3)", {}, base))
    settings.append(("default (step 1e-4)", {"loss_grid_step": 1e-4}, fine_base))
    for label, kwargs, base_pld in settings:
        loss, build = timed(subsample, base_pld, rate, **kwargs)
        composed, compose = timed(loss.self_compose, rounds)
        lower, upper = composed.delta_bounds(composed_eps)
        atoms = loss.atoms("upper")[0].loss.size
        one = " ".join(f"{v:.5e}" for v in loss.delta(eps))
        print(f"{label:>22} {build:8.3f} {atoms:6d} {compose:9.3f}  {one}")
        pairs = zip(lower, upper, strict=True)
        print(f"{'':>50}  " + " ".join(f"({a:.4e}, {b:.4e})" for a, b in pairs))
        curves[label] = loss
    if plot_dir is not None:
        import matplotlib.pyplot as plt

        grid = np.linspace(0.0, 0.25, 501)
        figure, axis = plt.subplots(figsize=(6, 4))
        for label in (
            "linspace n_alpha=5",
            "linspace n_alpha=11",
            "linspace n_alpha=51",
            "default (step 1e-3)",
        ):
            axis.semilogy(grid, curves[label].delta(grid), label=label)
        axis.semilogy(grid, mixture_delta(base, rate, grid), "k--", label="H(gP+(1-g)Q || Q)")
        axis.set_ylim(1e-7, 1e-2)
        axis.set_xlabel("eps")
        axis.set_ylabel("delta(eps), one round")
        axis.set_title(f"eps0={eps0}, n={n}, gamma={rate}")
        axis.legend()
        figure.tight_layout()
        figure.savefig(plot_dir / "subsampled_fig2.png", dpi=120)


def figure_3(plot_dir: Path | None) -> None:
    orders = np.arange(2, 513)
    settings = [
        (10**4, 100, 3.0, 1e-5, 1e-4),
        (10**6, 1000, 2.0, 1e-7, 1e-5),
    ]
    all_rounds = (1, 10, 100, 1000, 10000)
    results = {}
    for n, m, eps0, delta, step in settings:
        print(
            f"\n=== Figure 3: n={n}, m={m} (gamma={m / n:g}), eps0={eps0}, delta={delta:g}, "
            f"loss_grid_step={step:g} ==="
        )
        base, base_seconds = timed(pld.clones, m, eps0, loss_grid_step=step)
        loss, build = timed(subsample, base, m / n, loss_grid_step=step)
        print(f"base {base_seconds:.2f} s, subsample {build:.3f} s, {loss}")
        rdp = girgis_subsampled_shuffle(n, m, eps0, orders)
        print(f"{'T':>6} {'compose s':>9} {'eps lower':>10} {'eps upper':>10} {'Girgis RDP':>10}")
        rows = []
        for rounds in all_rounds:
            composed, seconds = timed(loss.self_compose, rounds)
            low, high = composed.epsilon_bounds(delta)
            girgis = to_epsilon(rounds * rdp, orders, delta)[0]
            rows.append((rounds, low, high, girgis))
            print(f"{rounds:6d} {seconds:9.3f} {low:10.5f} {high:10.5f} {girgis:10.5f}")
        results[(n, m, eps0, delta)] = rows
    if plot_dir is not None:
        import matplotlib.pyplot as plt

        figure, axis = plt.subplots(figsize=(6, 4))
        for (n, m, eps0, delta), rows in results.items():
            rounds = [r[0] for r in rows]
            line = axis.loglog(
                rounds, [r[2] for r in rows], "o-", label=f"PLD n={n}, gamma={m / n:g}, eps0={eps0}"
            )
            axis.loglog(
                rounds,
                [r[3] for r in rows],
                "s--",
                color=line[0].get_color(),
                label=f"Girgis RDP, delta={delta:g}",
            )
        axis.set_xlabel("rounds T")
        axis.set_ylabel("eps(delta)")
        axis.legend(fontsize=7)
        figure.tight_layout()
        figure.savefig(plot_dir / "subsampled_fig3.png", dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot", type=Path, default=None, help="directory for PNG figures")
    args = parser.parse_args()
    if args.plot is not None:
        args.plot.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    figure_2(args.plot)
    figure_3(args.plot)
    print(f"\ntotal {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
