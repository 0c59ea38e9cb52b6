"""Heterogeneous composition of many different rounds: build, compose, query, FFT floor, peer.

Two workloads of ``--count`` (default 1000) one-round PLDs, all different:

* ``clones``: ``pld.clones(n, 1.0)`` for n = linspace(5000, 15000, count);
* ``mixed``: 60 % clones (n from 5000 to 15000, eps0 from 0.5 to 2), 30 %
  Poisson-subsampled Gaussians (sigma from 0.8 to 1.6, q = 0.01) and 10 % shuffled
  k-RR (``pld.krr(n, 4, 0.25, "weak")``, n from 1000 to 3000), in an interleaved order.

For each: the build time (total and median per PLD), the first ``pld.compose(*plds)``
of the freshly built PLDs (window searches included) and the median of repeated
compositions of the same objects (window searches memoised), the first eps(1e-6)
query of the composed PLD, and the *floor* of the same work: per composed pmf
(direction, bound), one double-precision rfft of every factor at the composition's
FFT length, their product and one irfft. ``compose / floor`` divides by the number
of composed pmfs. A breakdown of the first composition (window search, forward
transforms, extended-precision hot bins) is measured by timing those engine
calls.

dp_accounting composes the same pmfs (each factor exported with
``pld.integrations.dp_accounting.to_dp_accounting``, pessimistic from pld's upper
side and optimistic from its lower side, so both tools hold identical inputs)
one factor after the other, as its API does; it runs on all factors when its
measured time on the first ``--peer-count`` (default 100) extrapolates to at most
``--peer-budget`` seconds (default 240), otherwise on those only (said in the output).

Run: ``python benchmarks/heterogeneous.py [--count 1000] [--repeats 3] [--cpu]
[--workloads clones,mixed] [--peer-count 100] [--peer-budget 240] [--no-peer]``
(``--cpu`` measures process time, for a loaded machine).
"""

from __future__ import annotations

import argparse
import statistics
import time
from contextlib import contextmanager

import numpy as np

import pld
from pld.engine import compose as engine_compose
from pld.engine import fft

CLOCK = time.perf_counter
DELTA = 1e-6


def clones_workload(count: int) -> list:
    return [(pld.clones, (int(n), 1.0)) for n in np.linspace(5000, 15000, count)]


def mixed_workload(count: int) -> list:
    n_krr = count // 10
    n_gauss = (3 * count) // 10
    n_clones = count - n_krr - n_gauss
    clones = [
        (pld.clones, (int(n), float(e)))
        for n, e in zip(
            np.linspace(5000, 15000, n_clones), np.linspace(0.5, 2.0, n_clones)[::-1], strict=True
        )
    ]
    gaussians = [
        (pld.subsampled_gaussian, (float(s), 0.01)) for s in np.linspace(0.8, 1.6, n_gauss)
    ]
    krrs = [(pld.krr, (int(n), 4, 0.25, "weak")) for n in np.linspace(1000, 3000, n_krr)]
    # Interleave the three kinds (round-robin by their own pace).
    tagged = [
        (i / len(group), job) for group in (clones, gaussians, krrs) for i, job in enumerate(group)
    ]
    return [job for _, job in sorted(tagged, key=lambda item: item[0])]


WORKLOADS = {"clones": clones_workload, "mixed": mixed_workload}


def build_all(jobs: list) -> tuple[list, list]:
    plds, times = [], []
    for build, args in jobs:
        start = CLOCK()
        plds.append(build(*args))
        times.append(CLOCK() - start)
    return plds, times


@contextmanager
def timed_engine_calls(totals: dict):
    """Accumulate the time of the engine's window search, forward transforms and hot bins."""
    names = {
        "window search": "composition_window",
        "forward FFTs": "_spectrum",
        "hot bins (extended)": "extended_spectra",
    }
    originals = {name: getattr(engine_compose, attr) for name, attr in names.items()}

    def wrap(name, function):
        def timed(*args, **kwargs):
            start = CLOCK()
            try:
                return function(*args, **kwargs)
            finally:
                totals[name] = totals.get(name, 0.0) + CLOCK() - start

        return timed

    for name, attr in names.items():
        setattr(engine_compose, attr, wrap(name, originals[name]))
    try:
        yield totals
    finally:
        for name, attr in names.items():
            setattr(engine_compose, attr, originals[name])


def composed_pmfs(loss: pld.PLD) -> list:
    return [*loss.directions("upper"), *loss.directions("lower")]


def floor_time(loss: pld.PLD, plds: list, repeats: int) -> tuple[float, int]:
    """Median time of one rfft per factor at the composed FFT length, the product and
    one irfft, for the largest composed pmf; and that length."""
    length = max(fft.fast_length(p.masses.shape[0]) for p in composed_pmfs(loss))
    factors = [p.directions("upper")[0].masses for p in plds]

    def run():
        product = None
        for masses in factors:
            if masses.shape[0] > length:
                masses = masses[:length]  # the floor needs one transform, not the fold
            spectrum = fft.rfft_placed(masses, 0, length)
            if product is None:
                product = spectrum.copy()
            else:
                np.multiply(product, spectrum, out=product)
        return fft.irfft(product, length)

    run()
    times = []
    for _ in range(repeats):
        start = CLOCK()
        run()
        times.append(CLOCK() - start)
    return statistics.median(times), length


def on_finest_grid(plds: list) -> list:
    """The PLDs as ``pld.compose`` sees them: each pmf refined onto the finest step."""
    from pld.distribution.loss_distribution import PLD, _Direction

    finest = min(p.loss_grid_step for p in plds)
    result = []
    for p in plds:
        ratio = round(p.loss_grid_step / finest)
        directions = [
            _Direction(d.upper.refined(ratio), d.lower.refined(ratio)) for d in p._directions
        ]
        result.append(PLD(directions, symmetric=p.symmetric))
    return result


def dp_accounting_compose(plds: list, bound: str):
    from pld.integrations.dp_accounting import to_dp_accounting

    exported = [to_dp_accounting(p, bound) for p in on_finest_grid(plds)]
    start = CLOCK()
    composed = exported[0]
    for item in exported[1:]:
        composed = composed.compose(item)
    eps = composed.get_epsilon_for_delta(DELTA)
    return CLOCK() - start, eps


def peer(plds: list, count: int, budget: float) -> str:
    try:
        import dp_accounting  # noqa: F401
    except ImportError:
        return "dp_accounting not installed"
    probe = plds[:count]
    times, eps = {}, {}
    for bound in ("upper", "lower"):
        times[bound], eps[bound] = dp_accounting_compose(probe, bound)
    predicted = sum(times.values()) * (len(plds) / len(probe)) ** 2
    used = probe
    if len(plds) > len(probe) and predicted <= budget:
        for bound in ("upper", "lower"):
            times[bound], eps[bound] = dp_accounting_compose(plds, bound)
        used = plds
    ours_start = CLOCK()
    ours = pld.compose(*used).epsilon_bounds(DELTA)
    ours_time = CLOCK() - ours_start
    note = (
        ""
        if used is plds
        else f" (first {len(used)} factors only: all {len(plds)} predicted {predicted:.0f} s)"
    )
    total = times["upper"] + times["lower"]
    return (
        f"dp_accounting{note}: pessimistic {times['upper']:.2f} s + optimistic "
        f"{times['lower']:.2f} s, eps({DELTA:g}) in [{eps['lower']:.6f}, {eps['upper']:.6f}]; "
        f"pld on the same {len(used)} factors (compose + eps, memoised windows) "
        f"{ours_time:.2f} s, eps in [{ours[0]:.6f}, {ours[1]:.6f}]; ratio {total / ours_time:.1f}x"
    )


def run_workload(name: str, count: int, repeats: int, peer_count: int, budget: float | None):
    jobs = WORKLOADS[name](count)
    plds, build_times = build_all(jobs)
    totals: dict = {}
    with timed_engine_calls(totals):
        start = CLOCK()
        composed = pld.compose(*plds)
        first = CLOCK() - start
    warm = []
    for _ in range(repeats):
        start = CLOCK()
        pld.compose(*plds)
        warm.append(CLOCK() - start)
    start = CLOCK()
    bracket = composed.epsilon_bounds(DELTA)
    query = CLOCK() - start
    floor, length = floor_time(composed, plds, repeats)
    pmfs = composed_pmfs(composed)
    per_pmf = floor * len(pmfs)
    sizes = "+".join(str(p.masses.shape[0]) for p in pmfs)
    factor_sizes = [p.directions("upper")[0].masses.shape[0] for p in plds]
    print(f"### {name}: {count} PLDs")
    print()
    median_build = 1e3 * statistics.median(build_times)
    print(f"- build: {sum(build_times):.2f} s in all, median {median_build:.2f} ms")
    print(
        f"- factor pmf sizes: median {int(statistics.median(factor_sizes))}, "
        f"max {max(factor_sizes)}; composed grid {sizes}, FFT length {length}"
    )
    print(
        f"- compose: first {first:.3f} s, repeated {statistics.median(warm):.3f} s (median); "
        f"floor {1e3 * floor:.1f} ms per pmf x {len(pmfs)} pmfs = {per_pmf:.3f} s; "
        f"compose / floor {first / per_pmf:.1f}x first, "
        f"{statistics.median(warm) / per_pmf:.1f}x repeated"
    )
    breakdown = ", ".join(f"{key} {value:.3f} s" for key, value in totals.items())
    print(f"- first compose breakdown: {breakdown}, rest {first - sum(totals.values()):.3f} s")
    print(f"- eps({DELTA:g}) = [{bracket[0]:.6f}, {bracket[1]:.6f}] in {1e3 * query:.1f} ms")
    if budget is not None:
        print(f"- {peer(plds, min(peer_count, count), budget)}")
    print()


def main() -> None:
    global CLOCK
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workloads", default="clones,mixed")
    parser.add_argument("--peer-count", type=int, default=100)
    parser.add_argument("--peer-budget", type=float, default=240.0)
    parser.add_argument("--no-peer", action="store_true")
    parser.add_argument("--cpu", action="store_true", help="process time instead of wall time")
    args = parser.parse_args()
    if args.cpu:
        CLOCK = time.process_time
    print(f"FFT backend: {fft.backend()}; clock: {'process' if args.cpu else 'wall'} time")
    print()
    for name in args.workloads.split(","):
        run_workload(
            name,
            args.count,
            args.repeats,
            args.peer_count,
            None if args.no_peer else args.peer_budget,
        )


if __name__ == "__main__":
    main()
