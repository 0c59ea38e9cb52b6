"""Central mechanisms, Poisson subsampling, trade-off curves: widths, times, peers.

For each workload: the build time, the composition time, eps(1e-6) (or delta(1))
with its bracket, and dp_accounting 0.6's PLD accountant on the same event at
``value_discretization_interval=1e-4`` (its pessimistic estimate) when installed.

Run ``python benchmarks/central.py`` (about a minute on 2 cores); medians of
``--repeat`` runs (default 3).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from scipy.stats import norm

import pld


def timed(repeat: int, function, *args, **kwargs):
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function(*args, **kwargs)
        times.append(time.perf_counter() - start)
    return result, statistics.median(times)


def dp_accounting_epsilon(event, rounds: int, delta: float) -> float | None:
    try:
        from dp_accounting import dp_event
        from dp_accounting.pld import pld_privacy_accountant
    except ImportError:
        return None
    accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(dp_event.SelfComposedDpEvent(event, rounds))
    return accountant.get_epsilon(delta)


def events():
    from dp_accounting import dp_event

    gaussian = dp_event.GaussianDpEvent(1.0)
    laplace = dp_event.LaplaceDpEvent(1.0)
    return {
        "laplace(1)": (lambda: pld.laplace(1.0), laplace),
        "discrete_laplace(0.5)": (
            lambda: pld.discrete_laplace(0.5),
            dp_event.DiscreteLaplaceDpEvent(0.5, 1),
        ),
        "discrete_gaussian(2)": (lambda: pld.discrete_gaussian(2.0), None),
        "poisson(gaussian(1), 0.01)": (
            lambda: pld.poisson_subsample(pld.gaussian(1.0), 0.01),
            dp_event.PoissonSampledDpEvent(0.01, gaussian),
        ),
        "subsampled_gaussian(1, 0.01) [exact mixture]": (
            lambda: pld.subsampled_gaussian(1.0, 0.01),
            None,
        ),
        "poisson(laplace(1), 0.01)": (
            lambda: pld.poisson_subsample(pld.laplace(1.0), 0.01),
            dp_event.PoissonSampledDpEvent(0.01, laplace),
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    delta = 1e-6
    print("| workload | T | build s | compose s | eps(1e-6) bracket | rel. width | dp_accounting |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, (build, event) in events().items():
        loss, build_time = timed(args.repeat, build)
        for rounds in (1, 1000):
            composed, compose_time = (
                (loss, 0.0) if rounds == 1 else timed(args.repeat, loss.self_compose, rounds)
            )
            lower, upper = composed.epsilon_bounds(delta)
            peer = None if event is None else dp_accounting_epsilon(event, rounds, delta)
            peer_text = "-" if peer is None else f"{peer:.6g}"
            print(
                f"| {name} | {rounds} | {build_time:.3f} | {compose_time:.3f} | "
                f"[{lower:.6g}, {upper:.6g}] | {(upper - lower) / upper:.2e} | {peer_text} |"
            )
    fpr = np.linspace(0, 1, 201)
    print("\n| trade-off | time s | max(upper - lower) | max(exact - lower) |")
    print("| --- | --- | --- | --- |")
    for sigma, rounds in ((1.0, 1), (2.0, 100), (1.0, 1000)):
        loss = pld.gaussian(sigma).self_compose(rounds) if rounds > 1 else pld.gaussian(sigma)
        (lower, upper), seconds = timed(args.repeat, loss.tradeoff, fpr)
        exact = norm.cdf(norm.ppf(1 - fpr) - np.sqrt(rounds) / sigma)
        print(
            f"| gaussian({sigma:g}) T={rounds} | {seconds:.3f} | {np.max(upper - lower):.2e} "
            f"| {np.max(exact - lower):.2e} |"
        )
    orders = np.concatenate([np.arange(2, 65), np.linspace(1.1, 10.9, 50)])
    _, seconds = timed(args.repeat, pld.rdp.poisson_subsampled_gaussian, 1.0, 0.01, orders)
    print(f"\npld.rdp.poisson_subsampled_gaussian, {orders.size} orders: {seconds:.3f} s")


if __name__ == "__main__":
    main()
